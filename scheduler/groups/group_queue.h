// The native queue of a device group's command queue: it takes each command once its
// dependencies have ended and runs it as parts on the members' own native queues
// (group_launch.h), planned by split.h. It orders nothing by itself: a command that follows one
// of the group's waits for its completion.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "core/backend.h"
#include "core/job.h"

namespace manifold {

class GroupDevice;
class GroupLaunch;
class Command;
struct KernelOp;

class GroupQueue final : public NativeQueue {
 public:
  // `in_order`: commands arrive in queue order, each once the one before it has been submitted
  // here; the queue starts each after the one before it has ended (or at once where both run on
  // one member alone, whose own queue orders them).
  GroupQueue(GroupDevice& group, std::vector<std::shared_ptr<NativeQueue>> members, bool in_order);

  // `job`: a command of the group's queue (scheduler/command.h).
  void submit(Ref<Job> job) override;
  bool orders_submissions() const override { return in_order_; }
  void flush() override;
  void help_until_idle() override;

 private:
  void plan_kernel(GroupLaunch& launch, const KernelOp& op, bool track_residency);
  void plan_whole(GroupLaunch& launch, const Command& command, size_t member, bool track_residency);

  GroupDevice& group_;
  std::vector<std::shared_ptr<NativeQueue>> members_;
  const bool in_order_;
  std::mutex tail_mutex_;
  std::shared_ptr<GroupLaunch> tail_;  // the last command submitted (in-order queues)
};

}  // namespace manifold
