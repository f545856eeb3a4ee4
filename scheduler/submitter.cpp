#include "scheduler/submitter.h"

#include "scheduler/command.h"

namespace manifold {

void InOrderSubmitter::enqueue(Command& command, std::span<Event* const> wait_list, SyncKind) {
  command.set_target(native_);
  for (Event* e : wait_list) command.depend_on(*e, /*from_wait_list=*/true);
  Ref<Event> previous;
  {
    std::lock_guard lock(mutex_);
    previous = std::exchange(tail_, command.event_ref());
  }
  // Usually already in the native stream: then this adds nothing and the command goes
  // straight to the stream below (no scheduler thread, no extra hop).
  if (previous) command.depend_on(*previous, /*from_wait_list=*/false);
  command.arm();
}

void OutOfOrderSubmitter::enqueue(Command& command, std::span<Event* const> wait_list, SyncKind sync) {
  command.set_target(native_);
  for (Event* e : wait_list) command.depend_on(*e, /*from_wait_list=*/true);
  std::vector<Ref<Event>> before;
  {
    std::lock_guard lock(mutex_);
    if (barrier_) before.push_back(barrier_);
    // A marker or barrier without a wait list waits for every command enqueued before it.
    if (sync != SyncKind::None && wait_list.empty())
      before.insert(before.end(), since_barrier_.begin(), since_barrier_.end());
    if (sync == SyncKind::Barrier) {
      barrier_ = command.event_ref();
      since_barrier_.clear();
    } else {
      // Keep the list short: finished commands no longer matter to a future barrier.
      if (since_barrier_.size() >= 64)
        std::erase_if(since_barrier_, [](const Ref<Event>& e) { return e->is_terminal(); });
      since_barrier_.push_back(command.event_ref());
    }
  }
  for (const Ref<Event>& e : before) command.depend_on(*e, /*from_wait_list=*/false);
  command.arm();
}

}  // namespace manifold
