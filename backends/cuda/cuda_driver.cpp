#include "backends/cuda/cuda_driver.h"

#include "backends/cuda/cuda_device.h"
#include "backends/gpu_driver/driver_probe.h"
#include "core/log.h"
#include "settings/settings.h"

namespace manifold::cuda {

namespace {
// NVIDIA GPUs through the CUDA driver, loaded with dlopen: none where it is absent.
const DriverRegistration kCudaDriver(10, []() -> std::unique_ptr<Driver> {
  return std::make_unique<CudaDriver>();
});
}  // namespace

std::vector<Device*> CudaDriver::probe() {
  return gpu::probe_devices<CudaVendor>(load_api, make_device, "driver");
}

}  // namespace manifold::cuda
