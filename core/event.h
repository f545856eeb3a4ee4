// An event: the status of one command (or a user event), its profiling times, its callbacks,
// and the commands that wait for it.
//
// No lock is held while a callback or a dependent runs, so a callback may call any entry point.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/object.h"
#include "core/recycler.h"

namespace manifold {

class Context;
class CommandQueue;
class NativeQueue;

// Something that waits for events (a command node of the scheduler).
class EventListener {
 public:
  virtual void retain() = 0;
  virtual void release() = 0;
  // Thread: whichever thread finished the event (a worker, or the application setting a user
  // event). `status` is CL_COMPLETE, CL_SUBMITTED (the event's command entered native queue
  // `source`, which is the listener's own or one it can wait for on the device) or a negative
  // error.
  virtual void dependency_resolved(cl_int status, NativeQueue* source) = 0;

 protected:
  ~EventListener() = default;
};

using EventCallback = void(CL_CALLBACK*)(cl_event, cl_int, void*);

class Event : public ApiObject<_cl_event, ObjectKind::Event, CL_INVALID_EVENT> {
 public:
  // A command's event (queue set; `context` may be null, the queue's is used) or a user event
  // (queue null).
  // `timed`: profiling times are recorded whatever the queue's properties (the parts of a
  // device group's launch, whose times balance the group).
  Event(Ref<Context> context, Ref<CommandQueue> queue, cl_command_type type, bool timed = false);
  ~Event() override;

  // One per command: recycled per thread (core/recycler.h).
  static void* operator new(size_t size) { return Recycler<sizeof(Event)>::allocate(size); }
  static void operator delete(void* p, size_t size) {
    Recycler<sizeof(Event)>::deallocate(p, size);
  }

  Context& context() const;
  CommandQueue* queue() const { return queue_.get(); }
  cl_command_type command_type() const { return type_; }
  bool is_user_event() const { return type_ == CL_COMMAND_USER; }

  cl_int status() const { return status_.load(std::memory_order_acquire); }
  bool is_terminal() const { return status() <= CL_COMPLETE; }

  // Moves the event to CL_SUBMITTED/RUNNING/COMPLETE or an error (negative), recording the
  // profiling time, waking waiters, calling callbacks and resolving dependents. Later calls with
  // a status at or past the current one are ignored.
  void set_status(cl_int status);
  // The command entered `queue`: the event becomes CL_SUBMITTED (unless it is already further),
  // and dependents that only need ordering on that queue go now. One lock for both: this runs
  // once per enqueued command.
  void mark_submitted(NativeQueue* queue);
  // The command's native queue (one that does not fail at submission) has put it on its way to
  // the device: dependents that list it in their wait lists and need only ordering go now.
  // Thread: the backend's, once per command, before or after mark_submitted().
  void mark_accepted();
  // Whether the command went into `queue` already (a later command there needs no wait for it).
  bool submitted_to(const NativeQueue* queue) const {
    return submitted_to_.load(std::memory_order_acquire) == queue;
  }
  // Whether the event records profiling times (a command of a profiling queue).
  bool timed() const { return timed_; }

  // Sleeps until the event is complete or failed; returns the final status.
  cl_int wait() const;
  // Somebody needs this command's completion without waiting through its queue (a callback, a
  // dependent on another queue, a status poll): the queue flushes, so that a backend that
  // completes lazily completes it. Thread: any, no lock of this event held.
  void want_completion() const;

  // Registers `listener` unless the event is already terminal, or already submitted to a native
  // queue that `ordering_queue` (non-null: the in-order queue the listener will be submitted to)
  // orders it after: the same queue, or one it waits for on the device; then *submitted_to says
  // which. Returns whether the listener now waits.
  // With `propagate_failure` false an error of this event reaches the listener as CL_COMPLETE
  // (queue ordering, not a wait list: the spec fails only commands that list the event).
  bool add_listener(EventListener* listener, NativeQueue* ordering_queue, bool propagate_failure,
                    NativeQueue** submitted_to);

  void add_callback(cl_int on_status, EventCallback fn, void* user_data);

  // Profiling (ns, host clock): QUEUED, SUBMIT, START, END.
  enum Stamp { kQueued, kSubmit, kStart, kEnd, kStampCount };
  uint64_t stamp(Stamp s) const { return stamps_[s].load(std::memory_order_acquire); }
  void set_stamp(Stamp s, uint64_t ns) { stamps_[s].store(ns, std::memory_order_release); }

 private:
  struct Listener {
    EventListener* listener;  // holds a reference
    NativeQueue* ordering_queue;
    bool propagate_failure;
  };
  struct Callback {
    cl_int on_status;
    EventCallback fn;
    void* user_data;
  };

  Ref<Context> context_;  // null for a command's event: its queue holds the context
  Ref<CommandQueue> queue_;
  const cl_command_type type_;
  const bool timed_;
  std::atomic<cl_int> status_;
  std::array<std::atomic<uint64_t>, kStampCount> stamps_{};

  // Moves status_ forward without the lock (events without profiling times); false when it
  // is already at or past `new_status`.
  bool advance(cl_int new_status);
  // Under mutex_: what `new_status` fires.
  void take_observers(cl_int new_status, std::vector<Callback>& fire, std::vector<Listener>& ready);

  std::mutex mutex_;  // guards the lists below (and, on timed events, changes of the state)
  std::atomic<bool> observed_{false};  // a listener or callback was registered (never unset)
  std::atomic<NativeQueue*> submitted_to_{nullptr};
  std::atomic<bool> accepted_{false};  // mark_accepted() was called
  // Whether a listener waiting through `listener_queue` may go once the command entered `queue`.
  bool ordered_before(const Listener& l, const NativeQueue* queue) const;
  std::vector<Listener> listeners_;
  std::vector<Callback> callbacks_;
};

}  // namespace manifold
