// A GPU through HIP as an OpenCL device: the shared driver backend (backends/gpu_driver/) with the
// HIP policy.
#pragma once

#include "backends/gpu_driver/driver_device.h"
#include "backends/hip/hip_api.h"

namespace manifold::hip {

using HipDevice = gpu::DriverDevice<HipVendor>;

// The OpenCL device of HIP device `device` (ordinal `ordinal`); throws what makes it unusable.
HipDevice* make_device(CUdevice device, int ordinal);

// What programs for a GPU of HIP architecture `arch` are compiled for: AMDGPU code objects for
// "gfx90a:sramecc+:xnack-" (compiler::amdgpu_target), PTX for "sm_90" (HIP over CUDA). False,
// with *why, for an architecture Manifold cannot compile for.
bool target_for_arch(const std::string& arch, compiler::Target* target, std::string* why);

}  // namespace manifold::hip
