// Builds of valid and invalid programs: logs, options, metadata, binaries.
#include <gtest/gtest.h>

#include "compiler/compiler.h"

namespace manifold::compiler {
namespace {

TEST(Build, Trivial) {
  BuildOutput out = build("__kernel void k(__global int* p) { p[0] = 1; }", "", host_cpu_target());
  EXPECT_TRUE(out.success) << out.log;
}

}  // namespace
}  // namespace manifold::compiler
