#include "backends/cuda/cuda_driver.h"

#include "backends/cuda/cuda_device.h"
#include "backends/gpu_driver/driver_probe.h"
#include "core/log.h"
#include "core/settings.h"

namespace manifold::cuda {

std::vector<Device*> CudaDriver::probe() {
  if (settings().disable_cuda) {
    log_debug("cuda: disabled by MANIFOLD_DISABLE_CUDA");
    return {};
  }
  return gpu::probe_devices<CudaVendor>(load_api, make_device, "driver");
}

}  // namespace manifold::cuda
