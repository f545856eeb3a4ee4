// The drivers compiled into this build, in the order their devices are listed.
#include "backends/cpu/cpu_driver.h"
#ifdef MANIFOLD_WITH_CUDA
#include "backends/cuda/cuda_driver.h"
#endif
#ifdef MANIFOLD_WITH_HIP
#include "backends/hip/hip_driver.h"
#endif
#ifdef MANIFOLD_WITH_LEVEL_ZERO
#include "backends/level_zero/ze_driver.h"
#endif
#include "core/backend.h"

namespace manifold {

std::vector<std::unique_ptr<Driver>> make_drivers() {
  std::vector<std::unique_ptr<Driver>> drivers;
  drivers.push_back(std::make_unique<cpu::CpuDriver>());
#ifdef MANIFOLD_WITH_CUDA
  // NVIDIA GPUs through the CUDA driver, loaded with dlopen: none where it is absent.
  drivers.push_back(std::make_unique<cuda::CudaDriver>());
#endif
#ifdef MANIFOLD_WITH_HIP
  // GPUs through the HIP runtime, loaded with dlopen: none without it or without /dev/kfd.
  drivers.push_back(std::make_unique<hip::HipDriver>());
#endif
#ifdef MANIFOLD_WITH_LEVEL_ZERO
  // Intel GPUs through the Level Zero loader, loaded with dlopen: none where it is absent.
  drivers.push_back(std::make_unique<level_zero::LevelZeroDriver>());
#endif
  drivers.push_back(std::make_unique<cpu::EmulatedGpuDriver>());
  return drivers;
}

}  // namespace manifold
