// Kernels compiled by manifold_compiler and run by CpuExecutable, checked against the host.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "compiler/compiler.h"

namespace manifold::compiler {
namespace {

const Target& host() {
  static const Target target = host_cpu_target();
  return target;
}

std::unique_ptr<CpuExecutable> build_and_load(const std::string& source,
                                              const std::string& options = "") {
  BuildOutput out = build(source, options, host());
  EXPECT_TRUE(out.success) << out.log;
  if (!out.success) return nullptr;
  std::string error;
  auto executable = CpuExecutable::load(out.binary, host(), &error);
  EXPECT_NE(executable, nullptr) << error;
  return executable;
}

NDRange range_1d(size_t global, size_t local) {
  NDRange r;
  r.work_dim = 1;
  r.global_size[0] = global;
  r.local_size[0] = local;
  return r;
}

TEST(CpuRun, VectorAdd) {
  auto exe = build_and_load(R"(
    __kernel void vadd(__global const float* a, __global const float* b, __global float* c) {
      size_t i = get_global_id(0);
      c[i] = a[i] + b[i];
    })");
  ASSERT_NE(exe, nullptr);
  const size_t n = 1000;
  std::vector<float> a(n), b(n), c(n, -1);
  for (size_t i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = float(2 * i);
  }
  void* pa = a.data();
  void* pb = b.data();
  void* pc = c.data();
  const void* args[] = {&pa, &pb, &pc};
  exe->run("vadd", range_1d(n, 100), args, nullptr);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], float(3 * i)) << i;
}

}  // namespace
}  // namespace manifold::compiler
