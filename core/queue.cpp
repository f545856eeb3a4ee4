#include "core/queue.h"

#include "core/backend.h"
#include "core/event.h"

namespace manifold {

CommandQueue::CommandQueue(Ref<Context> context, Device& device,
                           cl_command_queue_properties properties,
                           std::vector<cl_queue_properties> property_list,
                           std::unique_ptr<Submitter> submitter)
    : context_(std::move(context)),
      device_(&device),
      properties_(properties),
      property_list_(std::move(property_list)),
      submitter_(std::move(submitter)) {}

CommandQueue::~CommandQueue() = default;

void CommandQueue::enqueue(Command& command, std::span<Event* const> wait_list, SyncKind sync) {
  in_flight_.fetch_add(1, std::memory_order_relaxed);
  submitter_->enqueue(command, wait_list, sync);
  // clFinish on another thread waits for this command too (in_flight_): it must complete
  // without a wait of this thread's own (a GPU queue may defer completion until one).
  if (finishing_.load(std::memory_order_seq_cst) != 0) flush();
}

void CommandQueue::flush() { submitter_->native().flush(); }

void CommandQueue::finish() {
  finishing_.fetch_add(1, std::memory_order_seq_cst);
  // This thread completes what the native queue holds itself (no hand-off to a completion
  // thread: latency); the flush then covers only what that left, e.g. commands that wait for
  // other queues or user events and are submitted later.
  submitter_->native().help_until_idle();
  flush();
  uint64_t n = in_flight_.load(std::memory_order_acquire);
  while (n != 0) {
    in_flight_.wait(n, std::memory_order_acquire);
    n = in_flight_.load(std::memory_order_acquire);
  }
  finishing_.fetch_sub(1, std::memory_order_relaxed);
}

cl_int CommandQueue::wait_for(Event& event) {
  if (event.is_terminal()) return event.status();
  submitter_->native().help_until_idle();
  // Event::wait flushes this queue when the event is still pending.
  return event.wait();
}

void CommandQueue::command_done(Event& event) {
  // First the submitter forgets the event (it must not keep this queue alive through it), then
  // clFinish may return.
  submitter_->retire(event);
  if (in_flight_.fetch_sub(1, std::memory_order_acq_rel) == 1) in_flight_.notify_all();
}

void CommandQueue::on_last_api_release() {
  // The spec: clReleaseCommandQueue performs an implicit flush. Queued commands hold their own
  // references, so they still run.
  flush();
}

}  // namespace manifold
