#include "backends/hip/hip_driver.h"

#include "backends/gpu_driver/driver_probe.h"
#include "backends/hip/hip_device.h"
#include "core/log.h"
#include "settings/settings.h"

namespace manifold::hip {

namespace {
// GPUs through the HIP runtime, loaded with dlopen: none without it or without /dev/kfd.
const DriverRegistration kHipDriver(20, []() -> std::unique_ptr<Driver> {
  return std::make_unique<HipDriver>();
});
}  // namespace

std::vector<Device*> HipDriver::probe() {
  return gpu::probe_devices<HipVendor>(load_api, make_device, "runtime");
}

}  // namespace manifold::hip
