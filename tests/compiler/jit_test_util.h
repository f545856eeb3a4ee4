// Helpers shared by the compiler tests that build a program for the host CPU and run it
// in-process through CpuExecutable (no runtime, no ICD).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backends/cpu/cpu_executable.h"
#include "compiler/compiler.h"

namespace manifold::compiler::jit_test {

using cpu::CpuExecutable;

inline const Target& host() {
  static const Target target = host_cpu_target();
  return target;
}

// Builds `source` for the host CPU and loads it; a failed build or load is a test failure
// (with the build log) and returns null.
inline std::unique_ptr<CpuExecutable> build_and_load(const std::string& source,
                                                     const std::string& options = "") {
  BuildOutput out = build(source, options, host());
  EXPECT_TRUE(out.success) << out.log;
  if (!out.success) return nullptr;
  std::string error;
  auto executable = CpuExecutable::load(out.binary, host(), &error);
  EXPECT_NE(executable, nullptr) << error;
  return executable;
}

inline NDRange range_1d(size_t global, size_t local) {
  NDRange r;
  r.work_dim = 1;
  r.global_size[0] = global;
  r.local_size[0] = local;
  return r;
}

}  // namespace manifold::compiler::jit_test
