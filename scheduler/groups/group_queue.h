// The native queue of a device group's command queue: it takes each command once its
// dependencies have ended and runs it as parts on the members' own native queues
// (group_launch.h), planned by split.h. It orders nothing by itself: a command that follows one
// of the group's waits for its completion.
#pragma once

#include <memory>
#include <vector>

#include "core/backend.h"

namespace manifold {

class GroupDevice;
class GroupLaunch;
class Command;
struct KernelOp;

class GroupQueue final : public NativeQueue {
 public:
  GroupQueue(GroupDevice& group, std::vector<std::shared_ptr<NativeQueue>> members);

  // `job`: a command of the group's queue (scheduler/command.h).
  void submit(Ref<Job> job) override;
  bool orders_submissions() const override { return false; }
  void flush() override;
  void help_until_idle() override;

 private:
  void plan_kernel(GroupLaunch& launch, const KernelOp& op, bool track_residency);
  void plan_whole(GroupLaunch& launch, const Command& command, size_t member, bool track_residency);

  GroupDevice& group_;
  std::vector<std::shared_ptr<NativeQueue>> members_;
};

}  // namespace manifold
