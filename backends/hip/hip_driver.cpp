#include "backends/hip/hip_driver.h"

#include "backends/hip/hip_device.h"
#include "core/log.h"
#include "core/settings.h"

namespace manifold::hip {

std::vector<Device*> HipDriver::probe() {
  if (settings().disable_hip) {
    log_debug("hip: disabled by MANIFOLD_DISABLE_HIP");
    return {};
  }
  std::string why;
  const Api* a = load_api(&why);
  if (!a) {
    log_debug("hip: no devices: %s", why.c_str());
    return {};
  }
  int count = 0;
  if (CUresult r = a->cuDeviceGetCount(&count); r != CUDA_SUCCESS || count == 0) {
    log_debug("hip: no devices (hipGetDeviceCount: %s, %d)", error_text(r).c_str(), count);
    return {};
  }
  std::vector<Device*> devices;
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    if (a->cuDeviceGet(&device, i) != CUDA_SUCCESS) continue;
    try {
      devices.push_back(make_device(device, i));
    } catch (const std::exception& e) {
      log_debug("hip: device %d skipped: %s", i, e.what());
    }
  }
  log_debug("hip: runtime %d, %zu device(s)", a->driver_version, devices.size());
  return devices;
}

}  // namespace manifold::hip
