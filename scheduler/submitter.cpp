#include "scheduler/submitter.h"

#include "core/error.h"
#include "scheduler/command.h"

namespace manifold {

void CountingSubmitter::enqueue(Command& command, std::span<Event* const> wait_list,
                                SyncKind sync) {
  in_flight_.fetch_add(1, std::memory_order_relaxed);  // counted before it can end
  command.set_target(native_.get());
  for (Event* e : wait_list) command.depend_on(*e, /*from_wait_list=*/true);
  order(command, wait_list, sync);
  command.arm();
  // clFinish on another thread waits for this command too (in_flight_): it must complete
  // without a wait of this thread's own (a GPU queue may defer completion until one).
  if (finishing_.load(std::memory_order_seq_cst) != 0) native_->flush();
}

void CountingSubmitter::count_retired() {
  if (in_flight_.fetch_sub(1, std::memory_order_acq_rel) == 1) in_flight_.notify_all();
}

void CountingSubmitter::finish() {
  finishing_.fetch_add(1, std::memory_order_seq_cst);
  // This thread completes what the native queue holds itself (no hand-off to a completion
  // thread: latency); the flush then covers only what that left, e.g. commands that wait for
  // other queues or user events and are submitted later.
  native_->help_until_idle();
  native_->flush();
  uint64_t n = in_flight_.load(std::memory_order_acquire);
  while (n != 0) {
    in_flight_.wait(n, std::memory_order_acquire);
    n = in_flight_.load(std::memory_order_acquire);
  }
  finishing_.fetch_sub(1, std::memory_order_relaxed);
}

InOrderSubmitter::~InOrderSubmitter() {
  if (Event* tail = tail_.exchange(nullptr)) tail->release();
}

void InOrderSubmitter::order(Command& command, std::span<Event* const>, SyncKind) {
  // The queue's reference to the new tail moves into tail_; the old tail's comes out to here.
  const Ref<Event> previous =
      Ref<Event>::adopt(tail_.exchange(command.event_ref().detach(), std::memory_order_acq_rel));
  // Usually already in the native stream: then the stream orders the two and the command goes
  // straight to it below (no scheduler thread, no extra hop, not even the previous event's
  // lock). A previous command that has ended was retired: nothing to wait for.
  if (previous && !(native_->orders_submissions() && previous->submitted_to(native_.get())))
    command.depend_on(*previous, /*from_wait_list=*/false);
}

void InOrderSubmitter::retire(Event& event) {
  // Once a newer command is the tail, this event can never be it again: a plain load settles
  // the usual case (a run of launches) without a locked instruction.
  if (tail_.load(std::memory_order_relaxed) == &event) {
    Event* expected = &event;
    if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel))
      event.release();  // the reference tail_ held (the caller holds another)
  }
  count_retired();
}

void OutOfOrderSubmitter::order(Command& command, std::span<Event* const> wait_list,
                                SyncKind sync) {
  std::vector<Ref<Event>> before;
  std::vector<Ref<Event>> dropped;  // released after the lock
  {
    std::lock_guard lock(mutex_);
    if (barrier_) before.push_back(barrier_);
    // A marker or barrier without a wait list waits for every command enqueued before it.
    const bool waits_for_all = sync != SyncKind::None && wait_list.empty();
    if (waits_for_all)
      for (const auto& entry : pending_) before.push_back(entry.second);
    if (sync == SyncKind::Barrier) {
      // Every later command waits for the barrier. One that waits for everything covers the
      // pending commands for the next barrier; one with a wait list does not.
      if (waits_for_all) {
        dropped.reserve(pending_.size());
        for (auto& entry : pending_) dropped.push_back(std::move(entry.second));
        pending_.clear();
      }
      if (barrier_) dropped.push_back(std::move(barrier_));
      barrier_ = command.event_ref();
    } else {
      pending_.emplace(&command.event(), command.event_ref());
    }
  }
  for (const Ref<Event>& e : before) command.depend_on(*e, /*from_wait_list=*/false);
}

void OutOfOrderSubmitter::retire(Event& event) {
  {
    Ref<Event> dropped_barrier;  // released after the lock, before clFinish may return
    Ref<Event> dropped;
    std::lock_guard lock(mutex_);
    if (barrier_.get() == &event) dropped_barrier = std::exchange(barrier_, nullptr);
    auto it = pending_.find(&event);
    if (it != pending_.end()) {
      dropped = std::move(it->second);
      pending_.erase(it);
    }
  }
  count_retired();
}

std::unique_ptr<Submitter> make_submitter(std::shared_ptr<NativeQueue> native, bool out_of_order) {
  if (out_of_order) return std::make_unique<OutOfOrderSubmitter>(std::move(native));
  return std::make_unique<InOrderSubmitter>(std::move(native));
}

// ---- A command's dependencies and its way down to the native queue ----

void Command::depend_on(Event& event, bool from_wait_list) {
  has_dependencies_ = true;
  pending_.fetch_add(1, std::memory_order_relaxed);
  NativeQueue* submitted_to = nullptr;
  if (!event.add_listener(this, target_->orders_submissions() ? target_ : nullptr, from_wait_list,
                          &submitted_to)) {
    if (submitted_to) {
      dependency_resolved(CL_SUBMITTED, submitted_to);
      return;
    }
    const cl_int status = event.status();
    dependency_resolved(status < 0 && !from_wait_list ? CL_COMPLETE : status, nullptr);
  }
}

void Command::arm() {
  if (!has_dependencies_) {
    pending_.store(0, std::memory_order_relaxed);
    submit(/*direct=*/true);
    return;
  }
  resolve(CL_COMPLETE, nullptr, /*direct=*/true);
}

void Command::resolve(cl_int status, NativeQueue* source, bool direct) {
  if (status < 0) dependency_failed_.store(true, std::memory_order_relaxed);
  // In another stream the device can wait for: the target queue inserts that wait.
  if (status == CL_SUBMITTED && source && source != target_) {
    std::lock_guard lock(native_waits_mutex_);
    native_waits_.push_back(source->shared_from_this());
  }
  if (pending_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (dependency_failed_.load(std::memory_order_relaxed)) {
    finish(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    return;
  }
  submit(direct);
}

void Command::submit(bool direct) {
  NativeQueue* target = target_;
  // A device group's queue plans each part's migrations on its member (scheduler/groups).
  if (queue().context().tracks_residency() && !queue().device().is_group()) {
    // The copies a command makes serve the later commands of its native queue before they land
    // only where that queue's commands are planned in the order they enter it: an in-order queue
    // submits a command once the one before it is in the native queue. Two unordered commands
    // of an out-of-order queue are submitted by whichever threads resolve them, and the one
    // planned second may reach the native queue first.
    const bool planned_in_queue_order = target->orders_submissions() && !queue().out_of_order();
    // The device's memory first: a command whose allocation fails ends here, before its plan
    // makes the device's copy the current one (it would never hold the bytes).
    try {
      make_backings(operation(), queue().device(), *event_);
    } catch (...) {
      finish(status_of_current_exception(queue().device().backend_name()));
      return;
    }
    transfers() = plan_migrations(operation(), queue().device(),
                                  planned_in_queue_order ? target : nullptr, *event_);
  }
  submitted_directly_ = direct;
  // A profiling queue's SUBMIT time is taken before the backend can start the command; elsewhere
  // the event becomes SUBMITTED together with the step below (one lock per command, not two).
  if (event_->timed()) event_->set_status(CL_SUBMITTED);
  // `this` stays alive meanwhile: the enqueue, or the event resolving it, holds a reference.
  target->submit(Ref<Job>(this));
  // After the push: a command waiting only for this one's place in `target` may follow it now.
  event_->mark_submitted(target);
}

void submit_command(Ref<Command> command, std::span<Event* const> wait_list, cl_event* event_out,
                    bool blocking, SyncKind sync) {
  // The command's event was created with one API reference, meant for the application; that
  // reference keeps it alive here. Not wanted: it goes before the command is shared (no atomic
  // operation), and only a blocking call keeps the event alive for its wait.
  CommandQueue& queue = command->queue();
  Event& event = command->event();
  Ref<Event> waited;
  if (!event_out) {
    if (blocking) waited = command->event_ref();
    event.drop_unpublished_api_reference();
  }
  queue.submitter().enqueue(*command, wait_list, sync);
  command = nullptr;
  if (event_out) *event_out = event.handle();
  if (blocking && queue.wait_for(event) < 0)
    fail(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "the command did not complete");
}

}  // namespace manifold
