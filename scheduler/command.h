// A command node of the event DAG: an operation, its event, and the count of dependencies it
// still waits for. When the count reaches zero it goes to its native queue, as a Job: the
// backend runs the job's plain data through its DeviceOps (core/job.h). Its way down (its
// dependencies and its submission) is in submitter.cpp; here, its making and its end.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "core/event.h"
#include "core/job.h"
#include "core/operations.h"
#include "core/queue.h"
#include "core/recycler.h"
#include "scheduler/migration.h"

namespace manifold {

class Command final : public Job, public EventListener {
 public:
  Command(CommandQueue& queue, cl_command_type type);

  static void* operator new(size_t size) { return Recycler<sizeof(Command)>::allocate(size); }
  static void operator delete(void* p, size_t size) {
    Recycler<sizeof(Command)>::deallocate(p, size);
  }

  // `op`: one of Operation's alternatives (or an Operation), built in place in the command.
  template <class Op>
  static Ref<Command> make(CommandQueue& queue, cl_command_type type, Op&& op) {
    auto command = Ref<Command>::adopt(new Command(queue, type));
    command->operation() = std::forward<Op>(op);
    return command;
  }

  Event& event() const override { return *event_; }
  Ref<Event> event_ref() const { return event_; }
  CommandQueue& queue() const { return *event_->queue(); }

  void retain() override { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() override {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // ---- Scheduler side (thread: application or the thread resolving a dependency) ----
  // Where the command will run once ready.
  // The queue's own native queue: it lives as long as the queue, which the event holds.
  void set_target(NativeQueue* target) { target_ = target; }
  NativeQueue* target() const { return target_; }
  // Makes the command wait for `event`: a wait-list entry (`from_wait_list`: its failure fails
  // this command) or queue ordering. An event already submitted to this command's own in-order
  // target needs no wait: the native queue orders them.
  void depend_on(Event& event, bool from_wait_list);
  // Ends the enqueue: from now on the last resolved dependency submits the command. Without
  // dependencies nothing but this thread knows the command: it goes at once (no atomic).
  void arm();

  void dependency_resolved(cl_int status, NativeQueue* source) override {
    resolve(status, source, /*direct=*/false);
  }

  // Other native queues whose submitted work this command must wait for on the device (their
  // commands it depends on were already there); the target queue inserts the waits.
  // Thread: the target's submit (every dependency has resolved by then).
  const std::vector<std::shared_ptr<NativeQueue>>& native_waits() const override {
    return native_waits_;
  }

  // ---- Backend side (Job) ----
  bool profiling() const override { return queue().profiling(); }
  bool submitted_directly() const override { return submitted_directly_; }
  // Completes the command (CL_COMPLETE or a negative error). Thread: any.
  void finish(cl_int status) override;

 private:
  ~Command() = default;
  void resolve(cl_int status, NativeQueue* source, bool direct);
  void submit(bool direct);

  std::atomic<uint32_t> refs_{1};
  std::atomic<int> pending_{1};  // dependencies + the enqueue guard released by arm()
  std::atomic<bool> dependency_failed_{false};
  bool submitted_directly_ = false;  // written before submission, by the submitting thread
  bool has_dependencies_ = false;    // depend_on was called (by the enqueueing thread)
  Ref<Event> event_;
  NativeQueue* target_ = nullptr;
  std::mutex native_waits_mutex_;  // dependencies may resolve on several threads at once
  std::vector<std::shared_ptr<NativeQueue>> native_waits_;
};

}  // namespace manifold
