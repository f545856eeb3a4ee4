// One command of a device group's queue as it runs: its parts, each a job on one member's native
// queue, and the join that completes the command once every part has ended. Copies that every
// part needs in the members' one memory come first, as a job of their own.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/event.h"
#include "core/operations.h"
#include "scheduler/command.h"

namespace manifold {

class GroupDevice;
class GroupLaunch;

class PartJob final : public Job {
 public:
  // `backend`: the member's, for messages.
  PartJob(std::shared_ptr<GroupLaunch> launch, size_t index, const char* backend, Operation op);

  void retain() override { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() override {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  cl_int run(DeviceOps& ops) override;
  const KernelOp* plain_launch() override {
    return transfers_.empty() ? std::get_if<KernelOp>(&op_) : nullptr;
  }
  Event& event() const override { return *event_; }
  bool profiling() const override { return true; }  // the balancer learns from the times
  bool submitted_directly() const override { return false; }
  const std::vector<std::shared_ptr<NativeQueue>>& native_waits() const override;
  void finish(cl_int status) override;

  Operation& operation() { return op_; }
  std::vector<Transfer>& transfers() { return transfers_; }

 private:
  ~PartJob() = default;
  std::atomic<uint32_t> refs_{1};
  std::shared_ptr<GroupLaunch> launch_;
  const size_t index_;
  const char* backend_;
  Ref<Event> event_;
  Operation op_;
  std::vector<Transfer> transfers_;
};

class GroupLaunch : public std::enable_shared_from_this<GroupLaunch> {
 public:
  struct Part {
    size_t member;
    size_t groups;  // work-groups, for the balancer (0: not a split kernel's part)
    Ref<PartJob> job;
  };

  GroupLaunch(Ref<Command> command, GroupDevice& group,
              std::vector<std::shared_ptr<NativeQueue>> queues);

  Command& command() const { return *command_; }
  GroupDevice& group() const { return group_; }
  std::vector<Part>& parts() { return parts_; }
  // The balancer's key when the parts split a kernel (empty otherwise).
  void set_balance_key(std::string key) { key_ = std::move(key); }
  // Copies every part needs first: `prologue` runs on the first part's member before any part.
  void set_prologue(Ref<PartJob> prologue) { prologue_ = std::move(prologue); }
  PartJob* prologue() const { return prologue_.get(); }

  // Submits the prologue, or the parts when there is none. Thread: the submitting thread.
  void start();
  // A part (or the prologue: index == parts().size()) ended. Thread: any.
  void part_done(size_t index, cl_int status, const Event& event);

 private:
  void submit_parts();

  Ref<Command> command_;
  GroupDevice& group_;
  std::vector<std::shared_ptr<NativeQueue>> queues_;  // per member
  std::vector<Part> parts_;
  Ref<PartJob> prologue_;
  std::string key_;
  std::atomic<size_t> remaining_{0};
  std::atomic<cl_int> status_{CL_COMPLETE};
  std::mutex times_mutex_;
  std::vector<double> seconds_;
  uint64_t first_start_ = 0, last_end_ = 0;
};

}  // namespace manifold
