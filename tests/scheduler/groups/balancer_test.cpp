// How a device group divides work-groups (scheduler/groups/balancer.h): fixed shares stay fixed,
// learned ones move toward equal finish times, a member that only slows a kernel down is
// dropped after a few launches, a dropped member is probed now and then (less often while it
// stays slow) and taken back when it got fast, and keys are learned apart.
#include "scheduler/groups/balancer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

namespace manifold {
namespace {

// One launch of 1000 work-groups on two members that run `rate[m]` work-groups per second, as a
// group's queue does it: shares for the launch, parts of at least one group, times recorded
// only when the launch ran as two parts. Returns the groups member 0 ran.
size_t launch(Balancer& b, const std::string& key, const double (&rate)[2]) {
  const std::vector<double> s = b.next_shares(key);
  const size_t total = 1000;
  size_t g0 = s[0] > 0 ? std::max<size_t>(1, size_t(std::lround(s[0] * double(total)))) : 0;
  if (s[1] > 0) g0 = std::min(g0, total - 1);
  const size_t groups[2] = {g0, total - g0};
  if (groups[0] && groups[1]) {
    const double seconds[2] = {double(groups[0]) / rate[0], double(groups[1]) / rate[1]};
    b.record(key, groups, seconds);
  }
  return groups[0];
}

// Launches until member 0 gets a part again; the number of launches that took (0: never within
// `limit`).
unsigned launches_until_probe(Balancer& b, const std::string& key, const double (&rate)[2],
                              unsigned limit = 100000) {
  for (unsigned n = 1; n <= limit; ++n)
    if (launch(b, key, rate)) return n;
  return 0;
}

// A balancer whose member 0 (10000x slower) was dropped from key "k".
void drop_member_0(Balancer& b) {
  const double slow[2] = {1.0, 10000.0};
  for (unsigned i = 0; i < 2 * Balancer::kLaunchesBeforeDropping && b.shares("k")[0] > 0; ++i)
    launch(b, "k", slow);
  ASSERT_EQ(b.shares("k")[0], 0.0);
}

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

TEST(Balancer, ADroppedMemberIsProbedAfterTheExpectedLaunches) {
  Balancer b({1.0, 1.0}, {});
  drop_member_0(b);
  const double slow[2] = {1.0, 10000.0};
  for (unsigned n = 1; n < Balancer::kFirstProbeAfter; ++n) ASSERT_EQ(launch(b, "k", slow), 0u);
  // The probe is a small part (about kProbeShare of the 1000 groups), and it confirms the drop.
  EXPECT_EQ(launch(b, "k", slow), 10u);
  EXPECT_EQ(b.shares("k")[0], 0.0);
  EXPECT_EQ(b.shares("other")[0], 0.5);  // other keys are untouched
}

TEST(Balancer, TheProbesBackOffWhileTheMemberStaysSlow) {
  Balancer b({1.0, 1.0}, {});
  drop_member_0(b);
  const double slow[2] = {1.0, 10000.0};
  unsigned expected = Balancer::kFirstProbeAfter;
  for (int probe = 0; probe < 12; ++probe) {
    EXPECT_EQ(launches_until_probe(b, "k", slow), expected) << "probe " << probe;
    EXPECT_EQ(b.shares("k")[0], 0.0);
    expected = std::min(2 * expected, Balancer::kLongestProbeInterval);
  }
  EXPECT_EQ(expected, Balancer::kLongestProbeInterval);  // the backoff reached its ceiling
}

TEST(Balancer, AProbedMemberThatGotFastIsTakenBackIn) {
  Balancer b({1.0, 1.0}, {});
  drop_member_0(b);
  const double slow[2] = {1.0, 10000.0}, fast[2] = {10000.0, 10000.0};
  ASSERT_EQ(launches_until_probe(b, "k", slow), Balancer::kFirstProbeAfter);
  // Member 0 gets as fast as member 1 (the load on it went away): the next probe takes it back.
  ASSERT_EQ(launches_until_probe(b, "k", fast), 2 * Balancer::kFirstProbeAfter);
  EXPECT_GT(b.shares("k")[0], Balancer::kDropShare);
  for (int i = 0; i < 10; ++i) EXPECT_GT(launch(b, "k", fast), 0u);
  EXPECT_NEAR(b.shares("k")[0], 0.5, 0.05);
  // Dropped again later, the probes start afresh (no backoff carried over).
  drop_member_0(b);
  EXPECT_EQ(launches_until_probe(b, "k", slow), Balancer::kFirstProbeAfter);
}

TEST(Balancer, AMemberExpectedFarSlowerIsProbedToo) {
  Balancer b({1.0, 99.0}, {});
  const double equal[2] = {1000.0, 1000.0};
  ASSERT_EQ(b.shares("k")[0], 0.0);
  EXPECT_EQ(launches_until_probe(b, "k", equal), Balancer::kFirstProbeAfter);
  EXPECT_NEAR(b.shares("k")[0], 0.5, 1e-9);  // its measured rate earns it half
}

TEST(Balancer, PinnedSharesNeverProbe) {
  Balancer b({1.0, 1.0}, {0.0, 1.0});
  const double equal[2] = {1000.0, 1000.0};
  EXPECT_EQ(launches_until_probe(b, "k", equal, 10 * Balancer::kLongestProbeInterval), 0u);
  Balancer sliver({1.0, 99.0}, {1.0, 99.0});
  for (unsigned i = 0; i < 4 * Balancer::kFirstProbeAfter; ++i)
    EXPECT_DOUBLE_EQ(sliver.next_shares("k")[0], 0.01);
}

TEST(Balancer, SharesAloneCountNoLaunch) {
  Balancer b({1.0, 99.0}, {});
  for (unsigned i = 0; i < 4 * Balancer::kFirstProbeAfter; ++i) EXPECT_EQ(b.shares("k")[0], 0.0);
  const double equal[2] = {1000.0, 1000.0};
  EXPECT_EQ(launches_until_probe(b, "k", equal), Balancer::kFirstProbeAfter);
}

TEST(Balancer, LaunchesFromSeveralThreadsKeepSharesWhole) {
  Balancer b({1.0, 1.0}, {});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&b, t] {
      const double rate[2] = {t % 2 ? 1.0 : 10000.0, 10000.0};
      for (int i = 0; i < 2000; ++i) launch(b, "k", rate);
    });
  for (std::thread& t : threads) t.join();
  const std::vector<double> s = b.shares("k");
  EXPECT_NEAR(s[0] + s[1], 1.0, 1e-12);
}

}  // namespace
}  // namespace manifold
