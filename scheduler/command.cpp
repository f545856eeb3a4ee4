#include "scheduler/command.h"

#include <cstdio>

#include "core/executor.h"
#include "core/platform.h"

namespace manifold {

Command::Command(CommandQueue& queue, cl_command_type type)
    : Job(queue.device().backend_name()),
      event_(new Event(nullptr, Ref<CommandQueue>(&queue), type)) {  // the event holds the queue
  // The event was born with one API reference: the entry point hands it to the application,
  // or drops it when the application asked for no event. event_ holds the command's own.
  if (queue.profiling()) event_->set_stamp(Event::kQueued, host_time_ns());
}

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

void Command::finish(cl_int status) {
  // The operation's objects go first: a buffer released by the application meanwhile is
  // deleted here (its destructor callbacks run), before the event completes and before clFinish or
  // a wait for this event returns.
  drop_work();
  event_->set_status(status);
  // A command that failed by itself (not because of its wait list) is reported to the
  // context's pfn_notify.
  if (status < 0 && status != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
    char message[128];
    std::snprintf(message, sizeof(message), "command 0x%x failed: %s",
                  static_cast<unsigned>(event_->command_type()), error_name(status));
    queue().context().notify(message);
  }
  queue().command_done(*event_);
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
  queue.enqueue(*command, wait_list, sync);
  command = nullptr;
  if (event_out) *event_out = event.handle();
  if (blocking && queue.wait_for(event) < 0)
    fail(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "the command did not complete");
}

}  // namespace manifold
