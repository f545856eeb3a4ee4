// The HIP runtime as Manifold uses it: libamdhip64.so.6 (or .5), resolved with dlopen at run time
// into the shared driver table (backends/gpu_driver/driver_api.h), whose shapes are CUDA's driver
// API: HIP's module API repeats them, and hip_api.cpp adapts the few calls whose shape, structure
// layout or constants differ (attributes, 3D copies, graph nodes, error names). Manifold never
// links libamdhip64 and never includes HIP's headers.
#pragma once

#include <string>

#include "backends/gpu_driver/driver_api.h"

namespace manifold::hip {

using namespace manifold::gpu;  // the table's types: CUresult, CUdeviceptr, ...

// The runtime's functions, loaded and hipInit'ed once; nullptr (with *why) when no usable HIP
// runtime or AMD GPU driver is present. Thread-safe.
const Api* load_api(std::string* why);

namespace detail {
extern Api g_api;
}
inline const Api& api() { return detail::g_api; }

// "hipErrorOutOfMemory (out of memory)" for messages.
std::string error_text(CUresult result);

// The device's architecture as HIP names it (hipDeviceProp_t::gcnArchName):
// "gfx90a:sramecc+:xnack-" on AMD GPUs, "sm_90" where HIP runs over CUDA. Empty when the runtime
// does not say.
std::string arch_name(CUdevice device);

// HIP's major version (5, 6, ...), from hipDriverGetVersion.
int major_version();

// The HIP policy of the shared driver backend (backends/gpu_driver/).
struct HipVendor {
  static constexpr const char* kName = "hip";
  static constexpr const char* kDisplay = "HIP";
  // Sub-devices: streams with masks of the GPU's compute units (driver_partition_impl.h).
  static constexpr Partitioning kPartitioning = Partitioning::CuMasks;
  static const Api& api() { return detail::g_api; }
  static std::string error_text(CUresult r) { return hip::error_text(r); }
};

}  // namespace manifold::hip
