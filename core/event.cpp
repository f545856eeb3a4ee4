#include "core/event.h"

#include <algorithm>

#include "core/context.h"
#include "core/job.h"
#include "core/platform.h"
#include "core/queue.h"

namespace manifold {

Event::Event(Ref<Context> context, Ref<CommandQueue> queue, cl_command_type type, bool timed)
    : context_(std::move(context)),
      queue_(std::move(queue)),
      type_(type),
      timed_(timed || (queue_ && queue_->profiling())),
      status_(type == CL_COMMAND_USER ? CL_SUBMITTED : CL_QUEUED) {}

Context& Event::context() const { return context_ ? *context_ : queue_->context(); }

Event::~Event() {
  // A listener left here means the event never finished (e.g. a user event released unset):
  // its dependents fail rather than wait forever.
  for (const Listener& l : listeners_) {
    l.listener->dependency_resolved(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, nullptr);
    l.listener->release();
  }
}

// Status changes of an event nobody observes (no listener, no callback: nearly every command's)
// take no lock: a compare-exchange of the status, then a look at observed_. Registration sets
// observed_ and then reads the status, both under the lock; all four accesses are sequentially
// consistent, so at least one side sees the other: either the change finds observed_ set and
// hands what is registered over under the lock, or the registration sees the new status.
// Events with profiling times keep every change under the lock (stamps and status together).
bool Event::advance(cl_int new_status) {
  cl_int old = status_.load(std::memory_order_relaxed);
  do {
    if (old <= CL_COMPLETE || new_status >= old) return false;  // terminal, or not a step forward
  } while (!status_.compare_exchange_weak(old, new_status, std::memory_order_seq_cst,
                                          std::memory_order_relaxed));
  return true;
}

void Event::set_status(cl_int new_status) {
  std::vector<Listener> ready;
  std::vector<Callback> fire;
  if (!timed_) {
    if (!advance(new_status)) return;
    if (!observed_.load(std::memory_order_seq_cst)) {
      if (new_status <= CL_COMPLETE) status_.notify_all();
      return;
    }
    std::lock_guard lock(mutex_);
    take_observers(new_status, fire, ready);
  } else {
    std::lock_guard lock(mutex_);
    const cl_int old = status_.load(std::memory_order_relaxed);
    if (old <= CL_COMPLETE || new_status >= old) return;  // terminal, or not a step forward
    // Only profiling queues report times: no clock read for the others.
    const uint64_t now = host_time_ns();
    if (new_status <= CL_SUBMITTED && old > CL_SUBMITTED && stamp(kSubmit) == 0)
      set_stamp(kSubmit, now);
    if (new_status <= CL_RUNNING && old > CL_RUNNING && stamp(kStart) == 0) set_stamp(kStart, now);
    // A backend with device timestamps (CUDA events) sets START/END itself before completing.
    if (new_status <= CL_COMPLETE && stamp(kEnd) == 0) set_stamp(kEnd, now);
    status_.store(new_status, std::memory_order_seq_cst);
    take_observers(new_status, fire, ready);
  }
  // A status may be skipped (a GPU command goes from SUBMITTED to COMPLETE): its callbacks still
  // come in the order of the statuses, SUBMITTED before RUNNING before COMPLETE.
  if (fire.size() > 1)
    std::stable_sort(fire.begin(), fire.end(), [](const Callback& a, const Callback& b) {
      return a.on_status > b.on_status;
    });
  if (new_status <= CL_COMPLETE) status_.notify_all();
  for (const Callback& c : fire)
    c.fn(handle(), new_status < 0 ? new_status : c.on_status, c.user_data);
  for (const Listener& l : ready) {
    l.listener->dependency_resolved(l.propagate_failure ? new_status : CL_COMPLETE, nullptr);
    l.listener->release();
  }
}

void Event::take_observers(cl_int new_status, std::vector<Callback>& fire,
                           std::vector<Listener>& ready) {
  // Callbacks registered for a status the event has now reached (an error reaches them all).
  std::erase_if(callbacks_, [&](const Callback& c) {
    if (new_status > c.on_status) return false;
    fire.push_back(c);
    return true;
  });
  if (new_status <= CL_COMPLETE) ready.swap(listeners_);
}

namespace {
// `listener_queue` runs its work after everything already submitted to `queue`.
bool orders_after(const NativeQueue* listener_queue, const NativeQueue* queue) {
  return listener_queue && queue &&
         (listener_queue == queue || listener_queue->waits_natively_for(*queue));
}
}  // namespace

// A wait-list entry (failure propagates) also needs the command's failure to be known: at its
// submission, or where the queue learns it later, once it accepted the command.
bool Event::ordered_before(const Listener& l, const NativeQueue* queue) const {
  return orders_after(l.ordering_queue, queue) &&
         (!l.propagate_failure || queue->fails_at_submission() ||
          accepted_.load(std::memory_order_seq_cst));
}

void Event::mark_submitted(NativeQueue* queue) {
  std::vector<Listener> ordered;
  std::vector<Callback> fire;
  bool advanced = false;
  if (!timed_) {  // see advance()
    submitted_to_.store(queue, std::memory_order_seq_cst);
    advanced = advance(CL_SUBMITTED);  // not if further already (the backend may have run it)
    if (!observed_.load(std::memory_order_seq_cst)) return;
  }
  {
    std::lock_guard lock(mutex_);
    if (timed_) {
      submitted_to_.store(queue, std::memory_order_seq_cst);
      if (status_.load(std::memory_order_relaxed) > CL_SUBMITTED) {
        if (stamp(kSubmit) == 0) set_stamp(kSubmit, host_time_ns());
        status_.store(CL_SUBMITTED, std::memory_order_seq_cst);
        advanced = true;
      }
    }
    if (advanced)
      std::erase_if(callbacks_, [&](const Callback& c) {
        if (c.on_status < CL_SUBMITTED) return false;
        fire.push_back(c);
        return true;
      });
    if (!listeners_.empty())
      std::erase_if(listeners_, [&](const Listener& l) {
        if (!ordered_before(l, queue)) return false;
        ordered.push_back(l);
        return true;
      });
  }
  for (const Callback& c : fire) c.fn(handle(), CL_SUBMITTED, c.user_data);
  for (const Listener& l : ordered) {
    l.listener->dependency_resolved(CL_SUBMITTED, queue);
    l.listener->release();
  }
}

void Event::mark_accepted() {
  accepted_.store(true, std::memory_order_seq_cst);
  // As in mark_submitted: a listener registers after setting observed_ and then reads accepted_.
  if (!observed_.load(std::memory_order_seq_cst)) return;
  std::vector<Listener> ordered;
  NativeQueue* queue;
  {
    std::lock_guard lock(mutex_);
    // Not submitted yet (the backend was faster than mark_submitted): that releases them.
    queue = submitted_to_.load(std::memory_order_seq_cst);
    if (!queue || listeners_.empty()) return;
    std::erase_if(listeners_, [&](const Listener& l) {
      if (!ordered_before(l, queue)) return false;
      ordered.push_back(l);
      return true;
    });
  }
  for (const Listener& l : ordered) {
    l.listener->dependency_resolved(CL_SUBMITTED, queue);
    l.listener->release();
  }
}

void Event::want_completion() const {
  if (queue_ && !is_terminal()) queue_->flush();
}

cl_int Event::wait() const {
  cl_int s = status();
  if (s > CL_COMPLETE) want_completion();
  while (s > CL_COMPLETE) {
    status_.wait(s, std::memory_order_acquire);
    s = status();
  }
  return s;
}

bool Event::add_listener(EventListener* listener, NativeQueue* ordering_queue,
                         bool propagate_failure, NativeQueue** submitted_to) {
  {
    std::lock_guard lock(mutex_);
    *submitted_to = nullptr;
    observed_.store(true, std::memory_order_seq_cst);  // before reading the state: see advance()
    if (status_.load(std::memory_order_seq_cst) <= CL_COMPLETE) return false;
    NativeQueue* const in = submitted_to_.load(std::memory_order_seq_cst);
    if (ordered_before({listener, ordering_queue, propagate_failure}, in)) {
      *submitted_to = in;
      return false;
    }
    listener->retain();
    listeners_.push_back({listener, ordering_queue, propagate_failure});
  }
  // A dependent command waits (unless the event's submission to `ordering_queue` releases it
  // first): its completion may be the only one asked for.
  want_completion();
  return true;
}

void Event::add_callback(cl_int on_status, EventCallback fn, void* user_data) {
  // Once registered, the callback may come on another thread and release the application's last
  // reference (its right): the event stays alive for the rest of this call.
  Ref<Event> alive(this);
  cl_int reached;
  {
    std::lock_guard lock(mutex_);
    observed_.store(true, std::memory_order_seq_cst);  // before reading the status: see advance()
    reached = status_.load(std::memory_order_seq_cst);
    if (reached > on_status) callbacks_.push_back({on_status, fn, user_data});
  }
  if (reached > on_status) {
    want_completion();  // the callback must come without a wait of the application's
    return;
  }
  // Already there: call now, from the registering thread.
  fn(handle(), reached < 0 ? reached : on_status, user_data);
}

}  // namespace manifold

namespace manifold {
void Job::running() { event().set_status(CL_RUNNING); }
}  // namespace manifold
