// The fault controls of the test drivers, found in the libraries Manifold has loaded (dlopen with
// RTLD_NOLOAD of the path the environment gave Manifold): the simulated CUDA driver
// (tests/fakes/cuda/null_cuda.cpp, MANIFOLD_CUDA_DRIVER) fails coming launches or allocations,
// the Level Zero test driver (tests/fakes/level_zero/ze_test_driver_controls.h,
// ZE_ENABLE_ALT_DRIVERS) fails coming device allocations or loses its device. A hook is null where
// its driver is not loaded.
#pragma once

#include <dlfcn.h>

#include <cstdlib>

#include "tests/fakes/level_zero/ze_test_driver_controls.h"

namespace schedtest {

struct FaultHooks {
  void (*cuda_fail_launches)(int launches, bool graphs) = nullptr;  // null_cuda_fail
  void (*cuda_fail_allocations)(int count) = nullptr;               // null_cuda_fail_allocations
  ze_test::InjectFault ze_inject = nullptr;                         // zeTestInjectFault
};

// Call after the platform is opened (the drivers are loaded then).
inline FaultHooks findFaultHooks() {
  FaultHooks hooks;
  auto symbol = [](const char* variable, const char* name) -> void* {
    const char* path = std::getenv(variable);
    if (!path || !*path) return nullptr;
    void* library = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    return library ? dlsym(library, name) : nullptr;
  };
  hooks.cuda_fail_launches =
      reinterpret_cast<void (*)(int, bool)>(symbol("MANIFOLD_CUDA_DRIVER", "null_cuda_fail"));
  hooks.cuda_fail_allocations =
      reinterpret_cast<void (*)(int)>(symbol("MANIFOLD_CUDA_DRIVER", "null_cuda_fail_allocations"));
  hooks.ze_inject = reinterpret_cast<ze_test::InjectFault>(
      symbol("ZE_ENABLE_ALT_DRIVERS", ze_test::kInjectFaultSymbol));
  return hooks;
}

}  // namespace schedtest
