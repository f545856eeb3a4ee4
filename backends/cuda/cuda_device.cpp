// The CUDA instance of the shared driver backend: what only CUDA knows of a device (its name,
// compute capability, driver version), and the one instantiation of the shared code for CUDA.
#include "backends/cuda/cuda_device.h"

#include "backends/gpu_driver/driver_device_impl.h"
#include "backends/gpu_driver/driver_memory_impl.h"
#include "backends/gpu_driver/driver_ops_impl.h"

namespace manifold::gpu {
template class DriverBacking<cuda::CudaVendor>;
template class DriverProgram<cuda::CudaVendor>;
template class DriverDevice<cuda::CudaVendor>;
template struct DriverStreamApi<cuda::CudaVendor>;
}  // namespace manifold::gpu

namespace manifold::cuda {

CudaDevice* make_device(CUdevice device, int ordinal) {
  const Api& a = api();
  int major = 0, minor = 0;
  a.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  a.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  char name[256] = {};
  a.cuDeviceGetName(name, sizeof(name) - 1, device);
  gpu::DeviceFacts facts;
  facts.name = name;
  facts.vendor = "NVIDIA Corporation";
  facts.vendor_id = 0x10de;
  facts.arch = "sm_" + std::to_string(major) + std::to_string(minor);
  facts.driver_version = "Manifold " MANIFOLD_VERSION " (CUDA " +
                         std::to_string(a.driver_version / 1000) + "." +
                         std::to_string(a.driver_version % 1000 / 10) + ", " + facts.arch + ")";
  facts.version_suffix = "Manifold CUDA";
  facts.target = compiler::nvptx_target(major, minor);
  return new CudaDevice(device, ordinal, std::move(facts));
}

}  // namespace manifold::cuda
