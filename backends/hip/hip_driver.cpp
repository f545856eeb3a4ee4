#include "backends/hip/hip_driver.h"

#include "backends/gpu_driver/driver_probe.h"
#include "backends/hip/hip_device.h"
#include "core/log.h"
#include "core/settings.h"

namespace manifold::hip {

std::vector<Device*> HipDriver::probe() {
  if (settings().disable_hip) {
    log_debug("hip: disabled by MANIFOLD_DISABLE_HIP");
    return {};
  }
  return gpu::probe_devices<HipVendor>(load_api, make_device, "runtime");
}

}  // namespace manifold::hip
