// The CUDA driver as Manifold uses it: libcuda.so.1, resolved with dlopen at run time into the
// shared driver table (backends/gpu_driver/driver_api.h). Manifold never links libcuda and never
// includes cuda.h, so one binary runs (with no CUDA devices) where no NVIDIA driver or toolkit is
// installed.
#pragma once

#include <string>

#include "backends/gpu_driver/driver_api.h"

namespace manifold::cuda {

using namespace manifold::gpu;  // the table's CUDA-shaped types: CUresult, CUdeviceptr, ...

// The driver's functions, loaded and cuInit'ed once; nullptr (with *why) when no usable driver
// is present. Thread-safe.
const Api* load_api(std::string* why);

namespace detail {
extern Api g_api;
}
// The one loaded table (valid once load_api succeeded).
inline const Api& api() { return detail::g_api; }

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for messages.
std::string error_text(CUresult result);

// The CUDA policy of the shared driver backend (backends/gpu_driver/).
struct CudaVendor {
  static constexpr const char* kName = "cuda";     // backend_name(), log prefixes
  static constexpr const char* kDisplay = "CUDA";  // messages
  // Sub-devices: green contexts on groups of SMs (driver_partition_impl.h).
  static constexpr Partitioning kPartitioning = Partitioning::GreenContexts;
  static const Api& api() { return detail::g_api; }
  static std::string error_text(CUresult r) { return cuda::error_text(r); }
};

}  // namespace manifold::cuda
