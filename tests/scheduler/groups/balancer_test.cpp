// How a device group divides work-groups (scheduler/groups/balancer.h): fixed shares stay fixed,
// learned ones move toward equal finish times, a member that only slows a kernel down is
// dropped after a few launches, and keys are learned apart.
#include "scheduler/groups/balancer.h"

#include <gtest/gtest.h>

namespace manifold {
namespace {

TEST(Balancer, PinnedSharesNeverMove) {
  Balancer b({1.0, 1.0}, {1.0, 3.0});
  const size_t groups[2] = {25, 75};
  const double seconds[2] = {1.0, 0.01};
  for (int i = 0; i < 5; ++i) b.record("k", groups, seconds);
  const std::vector<double> s = b.shares("k");
  EXPECT_DOUBLE_EQ(s[0], 0.25);
  EXPECT_DOUBLE_EQ(s[1], 0.75);
}

TEST(Balancer, LearnedSharesFollowMeasuredSpeed) {
  Balancer b({1.0, 1.0}, {});
  EXPECT_DOUBLE_EQ(b.shares("k")[0], 0.5);
  // Member 1 runs its half three times as fast: it should get about three quarters.
  const size_t groups[2] = {50, 50};
  const double seconds[2] = {3.0, 1.0};
  b.record("k", groups, seconds);
  const std::vector<double> s = b.shares("k");
  EXPECT_NEAR(s[1], 0.75, 1e-9);
  EXPECT_NEAR(s[0] + s[1], 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(b.shares("other")[0], 0.5);  // another kernel or shape starts afresh
}

TEST(Balancer, AMemberFarSlowerIsDroppedOnlyAfterAFewLaunches) {
  Balancer b({1.0, 1.0}, {});
  const size_t groups[2] = {1, 99};
  const double seconds[2] = {1.0, 0.01};  // member 0: ~10000x slower per group
  b.record("k", groups, seconds);
  EXPECT_GT(b.shares("k")[0], 0.0);
  for (unsigned i = 0; i < Balancer::kLaunchesBeforeDropping; ++i) {
    const std::vector<double> s = b.shares("k");
    const size_t g[2] = {size_t(s[0] * 100 + 0.5), 100 - size_t(s[0] * 100 + 0.5)};
    b.record("k", g, seconds);
  }
  EXPECT_EQ(b.shares("k")[0], 0.0);
  EXPECT_DOUBLE_EQ(b.shares("k")[1], 1.0);
}

TEST(Balancer, AMemberExpectedFarSlowerGetsNothingFromTheStart) {
  Balancer b({1.0, 99.0}, {});
  EXPECT_EQ(b.shares("k")[0], 0.0);
  EXPECT_DOUBLE_EQ(b.shares("k")[1], 1.0);
  Balancer pinned({1.0, 99.0}, {1.0, 99.0});
  EXPECT_DOUBLE_EQ(pinned.shares("k")[0], 0.01);  // fixed shares are the application's
}

TEST(Balancer, TheLastSplitIsKeptPerKernel) {
  Balancer b({1.0, 2.0}, {});
  EXPECT_EQ(b.last_split("k"), (std::vector<double>{0.0, 0.0}));
  b.set_last_split("k", {0.4, 0.6});
  EXPECT_EQ(b.last_split("k"), (std::vector<double>{0.4, 0.6}));
  EXPECT_NEAR(b.shares("k")[1], 2.0 / 3.0, 1e-12);
}

}  // namespace
}  // namespace manifold
