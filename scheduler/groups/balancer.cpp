#include "scheduler/groups/balancer.h"

#include <algorithm>
#include <numeric>

namespace manifold {

std::vector<double> Balancer::normalized(std::vector<double> v) {
  for (double& x : v) x = x > 0 ? x : 0;
  const double sum = std::accumulate(v.begin(), v.end(), 0.0);
  if (sum <= 0) {
    std::fill(v.begin(), v.end(), v.empty() ? 0.0 : 1.0 / double(v.size()));
    return v;
  }
  for (double& x : v) x /= sum;
  return v;
}

namespace {
// Expected speeds as shares: a member expected to get a sliver gets nothing from the start (a
// CPU beside a GPU many times its speed would only add its copies and its finish time).
std::vector<double> initial_shares(std::vector<double> weights, double drop) {
  double sum = 0;
  for (double w : weights) sum += w > 0 ? w : 0;
  if (sum <= 0) return weights;
  for (double& w : weights)
    if (w / sum < drop) w = 0;
  return weights;
}
}  // namespace

Balancer::Balancer(std::vector<double> weights, std::vector<double> pinned)
    : pinned_(!pinned.empty()),
      initial_(normalized(pinned.empty() ? initial_shares(std::move(weights), kDropShare)
                                         : std::move(pinned))) {}

Balancer::Learned& Balancer::learned(const std::string& key) {
  auto [it, made] = learned_.try_emplace(key);
  Learned& l = it->second;
  if (made) {
    l.rate.assign(initial_.size(), 0.0);
    l.shares = initial_;
    l.probe_interval.assign(initial_.size(), 0);
    l.probe_in.assign(initial_.size(), 0);
  }
  return l;
}

std::vector<double> Balancer::shares(const std::string& key) const {
  if (pinned_) return initial_;
  std::lock_guard lock(mutex_);
  auto it = learned_.find(key);
  return it == learned_.end() ? initial_ : it->second.shares;
}

std::vector<double> Balancer::next_shares(const std::string& key) {
  if (pinned_) return initial_;
  std::lock_guard lock(mutex_);
  Learned& l = learned(key);
  std::vector<double> next = l.shares;
  bool probe = false;
  for (size_t m = 0; m < next.size(); ++m) {
    if (l.shares[m] > 0) continue;
    if (l.probe_interval[m] == 0) l.probe_in[m] = l.probe_interval[m] = kFirstProbeAfter;
    if (--l.probe_in[m] > 0) continue;
    // Until its result is recorded, the probe comes again after as many launches: a launch that
    // ran whole or failed measured nothing.
    l.probe_in[m] = l.probe_interval[m];
    next[m] = kProbeShare;
    probe = true;
  }
  return probe ? normalized(std::move(next)) : next;
}

void Balancer::record(const std::string& key, std::span<const size_t> groups,
                      std::span<const double> seconds) {
  if (pinned_ || groups.size() != initial_.size() || seconds.size() != groups.size()) return;
  std::lock_guard lock(mutex_);
  Learned& l = learned(key);
  // A part on a dropped member is a probe: its old rate is stale, the probe's alone counts.
  std::vector<bool> probed(groups.size(), false);
  for (size_t m = 0; m < groups.size(); ++m) {
    if (groups[m] == 0 || seconds[m] <= 0) continue;
    const double rate = double(groups[m]) / seconds[m];
    probed[m] = l.shares[m] <= 0;
    // Smoothed: one slow launch (a first use that moved every buffer) does not decide alone.
    l.rate[m] = l.rate[m] > 0 && !probed[m] ? 0.5 * l.rate[m] + 0.5 * rate : rate;
  }
  // Members without a measurement keep their share relative to the measured ones.
  std::vector<double> next(initial_.size(), 0.0);
  double measured_share = 0, measured_rate = 0;
  for (size_t m = 0; m < next.size(); ++m)
    if (l.rate[m] > 0) {
      measured_share += l.shares[m];
      measured_rate += l.rate[m];
    }
  if (measured_rate <= 0) return;
  for (size_t m = 0; m < next.size(); ++m)
    next[m] = l.rate[m] > 0 ? measured_share * l.rate[m] / measured_rate : l.shares[m];
  next = normalized(std::move(next));
  // Equal finish times need shares proportional to speed; a member left with a sliver only
  // adds its launch and its copies (judged after a few launches: the first ones also pay for
  // first uses; a probe is judged at once).
  const bool judged = ++l.launches >= kLaunchesBeforeDropping;
  for (size_t m = 0; m < next.size(); ++m)
    if (next[m] < kDropShare && (judged || probed[m])) next[m] = 0;
  l.shares = normalized(std::move(next));
  for (size_t m = 0; m < l.shares.size(); ++m) {
    if (l.shares[m] > 0) {
      l.probe_interval[m] = 0;  // taken back in: a later drop starts the probes afresh
    } else if (probed[m]) {
      l.probe_interval[m] = l.probe_interval[m]
                                ? std::min(2 * l.probe_interval[m], kLongestProbeInterval)
                                : kFirstProbeAfter;
      l.probe_in[m] = l.probe_interval[m];
    }
  }
}

std::vector<double> Balancer::last_split(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = last_split_.find(name);
  return it == last_split_.end() ? std::vector<double>(initial_.size(), 0.0) : it->second;
}

void Balancer::set_last_split(const std::string& name, std::vector<double> split) {
  std::lock_guard lock(mutex_);
  last_split_[name] = std::move(split);
}

}  // namespace manifold
