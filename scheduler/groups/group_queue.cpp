#include "scheduler/groups/group_queue.h"

#include <mutex>
#include <set>
#include <string>

#include "core/error.h"
#include "core/log.h"
#include "scheduler/command.h"
#include "scheduler/groups/balancer.h"
#include "scheduler/groups/group_device.h"
#include "scheduler/groups/group_launch.h"
#include "scheduler/groups/split.h"
#include "scheduler/migration.h"

namespace manifold {
namespace {

// The debug log says once per kernel and reason why a kernel runs whole.
void log_whole(const std::string& kernel, const std::string& why) {
  if (!debug_enabled()) return;
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard lock(mutex);
  if (said.insert(kernel + '\n' + why).second)
    log_debug("device group: kernel %s runs whole on one member: %s", kernel.c_str(), why.c_str());
}

}  // namespace

GroupQueue::GroupQueue(GroupDevice& group, std::vector<std::shared_ptr<NativeQueue>> members,
                       bool in_order)
    : group_(group), members_(std::move(members)), in_order_(in_order) {}

void GroupQueue::flush() {
  for (auto& q : members_) q->flush();
}

void GroupQueue::help_until_idle() {
  for (auto& q : members_) q->help_until_idle();
}

void GroupQueue::submit(Ref<Job> job) {
  Command& command = static_cast<Command&>(*job);
  auto launch = std::make_shared<GroupLaunch>(Ref<Command>(&command), group_, members_);
  const bool track = command.queue().context().tracks_residency();
  try {
    if (const auto* kernel = std::get_if<KernelOp>(&command.operation()))
      plan_kernel(*launch, *kernel, track);
    else
      plan_whole(*launch, command,
                 std::holds_alternative<SequenceOp>(command.operation())
                     ? 0  // recorded launches name the first member's kernels
                     : group_.member_for_host_work(),
                 track);
  } catch (...) {
    // The parts hold the launch: let them go before the command ends.
    launch->parts().clear();
    launch->set_prologue(nullptr);
    command.finish(status_of_current_exception("device group"));
    return;
  }
  launch->fix_members();
  const bool direct = command.submitted_directly();
  if (!in_order_) {
    launch->start(direct);
    return;
  }
  std::shared_ptr<GroupLaunch> before;
  {
    std::lock_guard lock(tail_mutex_);
    before = std::exchange(tail_, launch);
  }
  // One member alone after the same one alone: its in-order queue keeps them in order.
  const std::vector<size_t> mine = launch->members();
  const bool same_single_member = before && before->started() && mine.size() == 1 &&
                                  before->members() == mine && !launch->prologue();
  if (before && !same_single_member && before->then(launch)) return;
  launch->start(direct);
}

void GroupQueue::plan_kernel(GroupLaunch& launch, const KernelOp& op, bool track) {
  const std::string key = launch_key(op);
  const KernelSplit split = plan_kernel_split(op, group_, group_.balancer().next_shares(key));
  if (!split.why_whole.empty()) log_whole(op.launch->info.name, split.why_whole);
  const auto& members = group_.members();
  size_t total_groups = 0;
  for (const KernelPart& p : split.parts) total_groups += p.groups;
  std::vector<double> fractions(members.size(), 0.0);
  auto shared = launch.shared_from_this();
  for (size_t i = 0; i < split.parts.size(); ++i) {
    const KernelPart& p = split.parts[i];
    fractions[p.member] = total_groups ? double(p.groups) / double(total_groups) : 0.0;
    KernelOp part{op.args, &op.launch->members[p.member], p.range, op.printf_sink};
    launch.parts().push_back({p.member, p.groups,
                              Ref<PartJob>::adopt(new PartJob(
                                  shared, i, members[p.member]->backend_name(), std::move(part)))});
  }
  group_.balancer().set_last_split(op.launch->info.name, std::move(fractions));
  if (split.parts.size() >= 2) launch.set_balance_key(key);
  if (!track) return;
  auto& parts = launch.parts();
  if (split.by_footprint) {
    // Every part's reads against the residency before the launch, then every part's writes:
    // a part reading another's range (a halo) copies what was current before this launch.
    for (auto& p : parts) make_backings(p.job->operation(), *members[p.member], p.job->event());
    for (size_t i = 0; i < parts.size(); ++i)
      parts[i].job->transfers() =
          plan_range_uses(split.parts[i].reads, *members[parts[i].member], parts[i].job->event());
    for (size_t i = 0; i < parts.size(); ++i)
      plan_range_uses(split.parts[i].writes, *members[parts[i].member], parts[i].job->event());
    return;
  }
  if (parts.size() == 1) {
    Device& member = *members[parts[0].member];
    make_backings(parts[0].job->operation(), member, parts[0].job->event());
    parts[0].job->transfers() =
        plan_migrations(parts[0].job->operation(), member, nullptr, parts[0].job->event());
    return;
  }
  // Members of one memory: what the launch needs moves there once, before every part.
  Device& first = *members[parts[0].member];
  Operation whole =
      KernelOp{op.args, &op.launch->members[parts[0].member], op.range, op.printf_sink};
  auto prologue =
      Ref<PartJob>::adopt(new PartJob(shared, parts.size(), first.backend_name(), NoOp{}));
  make_backings(whole, first, prologue->event());
  std::vector<Transfer> transfers = plan_migrations(whole, first, nullptr, prologue->event());
  if (transfers.empty()) return;
  prologue->transfers() = std::move(transfers);
  launch.set_prologue(std::move(prologue));
}

void GroupQueue::plan_whole(GroupLaunch& launch, const Command& command, size_t member,
                            bool track) {
  Device& device = *group_.members()[member];
  auto job = Ref<PartJob>::adopt(new PartJob(launch.shared_from_this(), 0, device.backend_name(),
                                             const_cast<Command&>(command).operation()));
  launch.parts().push_back({member, 0, job});
  if (!track) return;
  make_backings(job->operation(), device, job->event());
  job->transfers() = plan_migrations(job->operation(), device, nullptr, job->event());
}

}  // namespace manifold
