// An NVIDIA GPU as an OpenCL device: the shared driver backend (backends/gpu_driver/) with the
// CUDA policy.
#pragma once

#include "backends/cuda/cuda_api.h"
#include "backends/gpu_driver/driver_device.h"

namespace manifold::cuda {

using CudaDevice = gpu::DriverDevice<CudaVendor>;

// The OpenCL device of CUDA device `device` (ordinal `ordinal`); throws what makes it unusable.
CudaDevice* make_device(CUdevice device, int ordinal);

}  // namespace manifold::cuda
