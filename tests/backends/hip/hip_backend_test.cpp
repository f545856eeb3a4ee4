// The HIP backend's parts that need no HIP device: the compile target an architecture name
// gives, and a HIP runtime that finds no GPU (Debian's real libamdhip64.so.5 where installed).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "backends/hip/hip_api.h"
#include "backends/hip/hip_device.h"
#include "compiler/compiler.h"

namespace {

using manifold::compiler::Target;

TEST(HipTarget, AmdArchitectureNamesGiveAmdgpuTargets) {
  Target t;
  ASSERT_TRUE(manifold::hip::target_for_arch("gfx90a:sramecc+:xnack-", &t, nullptr));
  EXPECT_EQ(t.triple, "amdgcn-amd-amdhsa");
  EXPECT_EQ(t.cpu, "gfx90a");
  EXPECT_EQ(t.features.rfind("+sramecc,-xnack,", 0), 0u) << t.features;
  EXPECT_FALSE(t.images);
  ASSERT_TRUE(manifold::hip::target_for_arch("gfx1100", &t, nullptr));
  EXPECT_EQ(t.cpu, "gfx1100");
  EXPECT_EQ(t.features.find("sramecc"), std::string::npos) << t.features;
}

TEST(HipTarget, NvidiaArchitectureNamesGivePtx) {
  Target t;
  ASSERT_TRUE(manifold::hip::target_for_arch("sm_90", &t, nullptr));
  EXPECT_EQ(t.triple, "nvptx64-nvidia-cuda");
  EXPECT_EQ(t.cpu, "sm_90");
  ASSERT_TRUE(manifold::hip::target_for_arch("sm_120", &t, nullptr));
  EXPECT_EQ(t.cpu, "sm_120");
}

TEST(HipTarget, UnknownArchitecturesAreRefused) {
  Target t;
  std::string why;
  EXPECT_FALSE(manifold::hip::target_for_arch("", &t, &why));
  EXPECT_FALSE(manifold::hip::target_for_arch("sm_", &t, &why));
  EXPECT_FALSE(manifold::hip::target_for_arch("x86-64", &t, &why));  // a target, but no GPU
  EXPECT_FALSE(manifold::hip::target_for_arch("gfx4242", &t, &why));
  EXPECT_FALSE(why.empty());
}

// A machine without an AMD GPU: the runtime loads (or is absent) and contributes no device, with
// a reason, and quickly.
TEST(HipRuntime, NoGpuMeansNoApiAndAReason) {
  setenv("MANIFOLD_HIP_RUNTIME", "libamdhip64.so.5", 1);  // before the settings are first read
  const auto start = std::chrono::steady_clock::now();
  std::string why;
  EXPECT_EQ(manifold::hip::load_api(&why), nullptr);
  EXPECT_FALSE(why.empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << why;
  std::string again;
  EXPECT_EQ(manifold::hip::load_api(&again), nullptr);  // loaded once: the same answer
  EXPECT_EQ(why, again);
}

}  // namespace
