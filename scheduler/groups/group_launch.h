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
#include "core/job.h"
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
  Event& event() const override { return *event_; }
  bool profiling() const override;
  bool submitted_directly() const override;
  const std::vector<std::shared_ptr<NativeQueue>>& native_waits() const override;
  void finish(cl_int status) override;

 private:
  ~PartJob() = default;
  std::atomic<uint32_t> refs_{1};
  std::shared_ptr<GroupLaunch> launch_;
  const size_t index_;
  Ref<Event> event_;
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

  // Submits the prologue, or the parts when there is none. `direct`: from the enqueueing thread,
  // inside the enqueue. Thread: any.
  void start(bool direct);
  // The members the launch runs on, fixed once its parts are made (before it is shared).
  void fix_members();
  const std::vector<size_t>& members() const { return members_; }
  // start() has run (the parts or the prologue went to their queues).
  bool started() const { return started_.load(std::memory_order_acquire); }
  // Runs `next` once this launch's parts have all ended (an in-order queue's next command), or
  // returns false when they already have. Thread: any.
  bool then(std::shared_ptr<GroupLaunch> next);
  // Whether the parts record times (for the balancer, or the queue's profiling).
  bool timed() const { return timed_; }
  bool started_directly() const { return direct_; }
  // A part (or the prologue: index == parts().size()) ended. Thread: any.
  void part_done(size_t index, cl_int status, const Event& event);

 private:
  void submit_parts();
  // Marks the launch ended; the launch chained after it (to start now), if any.
  std::shared_ptr<GroupLaunch> end_chain();

  Ref<Command> command_;
  GroupDevice& group_;
  std::vector<std::shared_ptr<NativeQueue>> queues_;  // per member
  std::vector<Part> parts_;
  Ref<PartJob> prologue_;
  std::string key_;
  bool timed_ = false, direct_ = false;
  std::vector<size_t> members_;
  std::atomic<bool> started_{false};
  std::mutex chain_mutex_;
  bool ended_ = false;
  std::shared_ptr<GroupLaunch> next_;
  std::atomic<size_t> remaining_{0};
  std::atomic<cl_int> status_{CL_COMPLETE};
  std::mutex times_mutex_;
  std::vector<double> seconds_;
  uint64_t first_start_ = 0, last_end_ = 0;
};

}  // namespace manifold
