// How a device group divides each kernel's work-groups among its members: per kernel and NDRange
// shape, shares that move toward equal finish times from the times the parts took. A member
// whose share falls below a few percent gets no part of that kernel any more: the copies and
// the launch it costs would only slow the kernel down. Conditions change (another application
// stops loading a member, the first launches paid for JIT and first touches), so a dropped
// member gets a small probe part now and then, less often each time the probe confirms the drop,
// and is taken back in when its measured rate earns it a share.
#pragma once

#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace manifold {

class Balancer {
 public:
  // `weights`: each member's expected speed, before anything was measured; `pinned`: fixed
  // shares (empty: learned).
  Balancer(std::vector<double> weights, std::vector<double> pinned);

  // The learned fractions of the work-groups of a launch keyed by `key` (kernel and shape), one
  // per member, summing to 1. Thread-safe; changes nothing.
  std::vector<double> shares(const std::string& key) const;
  // The fractions for the next launch keyed by `key`: shares(), with a probe part for each
  // dropped member whose turn it is. Counts the launch. Thread-safe.
  std::vector<double> next_shares(const std::string& key);
  // A launch keyed by `key` ran as parts: member m ran `groups[m]` work-groups in `seconds[m]`
  // (0 groups: no part). Thread-safe.
  void record(const std::string& key, std::span<const size_t> groups,
              std::span<const double> seconds);
  // What the last launch of kernel `name` gave each member (fractions of its work-groups).
  std::vector<double> last_split(const std::string& name) const;
  void set_last_split(const std::string& name, std::vector<double> split);

  static constexpr double kDropShare = 0.04;
  static constexpr unsigned kLaunchesBeforeDropping = 3;
  // A probe part: small, so that probing a member that is still slow costs little. The launches
  // between probes of one member start at kFirstProbeAfter and double with every probe that
  // confirms the drop, up to kLongestProbeInterval: the steady-state cost is negligible.
  static constexpr double kProbeShare = 0.01;
  static constexpr unsigned kFirstProbeAfter = 16;
  static constexpr unsigned kLongestProbeInterval = 4096;

 private:
  static std::vector<double> normalized(std::vector<double> v);

  const bool pinned_;
  const std::vector<double> initial_;
  mutable std::mutex mutex_;
  struct Learned {
    std::vector<double> rate;  // work-groups per second, per member (0: not measured)
    std::vector<double> shares;
    unsigned launches = 0;  // launches recorded
    // Per member, while it is dropped: launches between its probes (0: not counting yet), and
    // launches left until the next one.
    std::vector<unsigned> probe_interval, probe_in;
  };
  Learned& learned(const std::string& key);
  std::map<std::string, Learned> learned_;
  std::map<std::string, std::vector<double>> last_split_;
};

}  // namespace manifold
