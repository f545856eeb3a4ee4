// The footprint analysis is target-independent: the same kernels built for NVPTX, AMDGPU and
// SPIR-V devices (no GPU needed to build) prove what the host CPU build proves.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/compiler/footprint_test_util.h"

namespace manifold::compiler {
namespace {

using testing::describe;
using testing::host;

const char* kKernels = R"(
typedef struct { int w; int shift; } Shape;
kernel void add(global const float* a, global const float* b, global float* out) {
  size_t i = get_global_id(0);
  out[i] = a[i] + b[i];
}
kernel void mm(global const float* A, global const float* B, global float* C, int n) {
  int row = get_global_id(1), col = get_global_id(0);
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += A[row * n + k] * B[k * n + col];
  C[row * n + col] = acc;
}
kernel void shaped(global float4* out, Shape s, local float* tmp) {
  int x = get_global_id(0), y = get_global_id(1);
  tmp[get_local_id(0)] = x;
  barrier(CLK_LOCAL_MEM_FENCE);
  vstore4((float4)(tmp[0]), y * s.w + x + s.shift, (global float*)out);
}
kernel void counts(global int* c) { atomic_inc(c); }
)";

std::vector<std::string> footprints(const Target& target) {
  BuildOutput out = build(kKernels, "", target);
  EXPECT_TRUE(out.success) << target.triple << "\n" << out.log;
  std::vector<std::string> described;
  for (const KernelInfo& k : out.kernels)
    described.push_back(k.name + ": " + describe(k.footprint));
  return described;
}

TEST(FootprintTargets, GpuTargetsProveWhatTheCpuProves) {
  const std::vector<std::string> cpu = footprints(host());
  ASSERT_EQ(cpu.size(), 4u);
  // The host build proves every buffer access of the first three kernels.
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(cpu[i].find("unknown"), std::string::npos) << cpu[i];
    EXPECT_EQ(cpu[i].find("whole"), std::string::npos) << cpu[i];
  }
  EXPECT_NE(cpu[3].find("whole: global atomics"), std::string::npos) << cpu[3];
  std::vector<Target> targets = {nvptx_target(8, 0), spirv_target({})};
  if (std::optional<Target> amd = amdgpu_target("gfx90a")) targets.push_back(*amd);
  for (const Target& target : targets) EXPECT_EQ(footprints(target), cpu) << target.triple;
}

}  // namespace
}  // namespace manifold::compiler
