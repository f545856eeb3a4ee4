#include "scheduler/submitter.h"

#include "scheduler/command.h"

namespace manifold {

InOrderSubmitter::~InOrderSubmitter() {
  if (Event* tail = tail_.exchange(nullptr)) tail->release();
}

void InOrderSubmitter::enqueue(Command& command, std::span<Event* const> wait_list, SyncKind) {
  command.set_target(native_.get());
  for (Event* e : wait_list) command.depend_on(*e, /*from_wait_list=*/true);
  // The queue's reference to the new tail moves into tail_; the old tail's comes out to here.
  const Ref<Event> previous =
      Ref<Event>::adopt(tail_.exchange(command.event_ref().detach(), std::memory_order_acq_rel));
  // Usually already in the native stream: then the stream orders the two and the command goes
  // straight to it below (no scheduler thread, no extra hop, not even the previous event's
  // lock). A previous command that has ended was retired: nothing to wait for.
  if (previous && !(native_->orders_submissions() && previous->submitted_to(native_.get())))
    command.depend_on(*previous, /*from_wait_list=*/false);
  command.arm();
}

void InOrderSubmitter::retire(Event& event) {
  // Once a newer command is the tail, this event can never be it again: a plain load settles
  // the usual case (a run of launches) without a locked instruction.
  if (tail_.load(std::memory_order_relaxed) != &event) return;
  Event* expected = &event;
  if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel))
    event.release();  // the reference tail_ held (the caller holds another)
}

void OutOfOrderSubmitter::enqueue(Command& command, std::span<Event* const> wait_list,
                                  SyncKind sync) {
  command.set_target(native_.get());
  for (Event* e : wait_list) command.depend_on(*e, /*from_wait_list=*/true);
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
  command.arm();
}

void OutOfOrderSubmitter::retire(Event& event) {
  Ref<Event> dropped_barrier;
  Ref<Event> dropped;
  std::lock_guard lock(mutex_);
  if (barrier_.get() == &event) dropped_barrier = std::exchange(barrier_, nullptr);
  auto it = pending_.find(&event);
  if (it != pending_.end()) {
    dropped = std::move(it->second);
    pending_.erase(it);
  }
}

std::unique_ptr<Submitter> make_submitter(std::shared_ptr<NativeQueue> native, bool out_of_order) {
  if (out_of_order) return std::make_unique<OutOfOrderSubmitter>(std::move(native));
  return std::make_unique<InOrderSubmitter>(std::move(native));
}

}  // namespace manifold
