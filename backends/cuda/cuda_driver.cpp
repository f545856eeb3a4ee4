#include "backends/cuda/cuda_driver.h"

#include <cstdlib>

#include "backends/cuda/cuda_device.h"
#include "core/log.h"
#include "core/settings.h"

namespace manifold::cuda {

std::vector<Device*> CudaDriver::probe() {
  if (settings().disable_cuda) {
    log_debug("cuda: disabled by MANIFOLD_DISABLE_CUDA");
    return {};
  }
  std::string why;
  const Api* a = load_api(&why);
  if (!a) {
    log_debug("cuda: no devices: %s", why.c_str());
    return {};
  }
  int count = 0;
  if (CUresult r = a->cuDeviceGetCount(&count); r != CUDA_SUCCESS || count == 0) {
    log_debug("cuda: no devices (cuDeviceGetCount: %s, %d)", error_text(r).c_str(), count);
    return {};
  }
  std::vector<Device*> devices;
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    if (a->cuDeviceGet(&device, i) != CUDA_SUCCESS) continue;
    try {
      devices.push_back(make_device(device, i));
    } catch (const std::exception& e) {
      log_debug("cuda: device %d skipped: %s", i, e.what());
    }
  }
  log_debug("cuda: driver %d, %zu device(s)", a->driver_version, devices.size());
  return devices;
}

}  // namespace manifold::cuda
