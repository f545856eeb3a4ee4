// How a command is submitted: its queue orders it (one small class per mode: an in-order queue
// chains each command to the previous one, which a native in-order stream makes free; an
// out-of-order queue only honours wait lists, markers and barriers), its dependencies resolve,
// and it goes down to its native queue (Command::submit). The whole way from an entry point to
// the backend is submitter.cpp: nothing on it calls back up.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/backend.h"
#include "core/event.h"
#include "core/queue.h"

namespace manifold {

class Command;

// What both modes share: the native queue, and the commands in flight that clFinish waits for.
class CountingSubmitter : public Submitter {
 public:
  explicit CountingSubmitter(std::shared_ptr<NativeQueue> native) : native_(std::move(native)) {}
  // Counts the command in flight, adds its wait list and the mode's order, and arms it.
  void enqueue(Command& command, std::span<Event* const> wait_list, SyncKind sync) final;
  void finish() final;
  NativeQueue& native() final { return *native_; }

 protected:
  // The mode's part of an enqueue: the dependencies its order adds (the wait list's are in).
  virtual void order(Command& command, std::span<Event* const> wait_list, SyncKind sync) = 0;
  // At the end of a mode's retire: a clFinish may return once nothing is in flight.
  void count_retired();

  std::shared_ptr<NativeQueue> native_;

 private:
  std::atomic<uint64_t> in_flight_{0};
  std::atomic<uint32_t> finishing_{0};  // threads inside finish()
};

class InOrderSubmitter final : public CountingSubmitter {
 public:
  using CountingSubmitter::CountingSubmitter;
  ~InOrderSubmitter() override;
  void retire(Event& event) override;

 private:
  void order(Command& command, std::span<Event* const> wait_list, SyncKind sync) override;
  // The last command enqueued, while it has not ended; holds a reference to it. Exchanged
  // without a lock: one atomic swap per enqueue, one compare-exchange per retired tail.
  std::atomic<Event*> tail_{nullptr};
};

class OutOfOrderSubmitter final : public CountingSubmitter {
 public:
  using CountingSubmitter::CountingSubmitter;
  void retire(Event& event) override;

 private:
  void order(Command& command, std::span<Event* const> wait_list, SyncKind sync) override;
  std::mutex mutex_;
  // The last barrier while it has not ended: every later command waits for it.
  Ref<Event> barrier_;
  // Commands not yet ended that a marker or barrier without a wait list must wait for: those
  // enqueued since the last such barrier (a barrier with a wait list does not cover them).
  std::unordered_map<const Event*, Ref<Event>> pending_;
};

// The submitter of a queue in the mode `out_of_order` names, over the device's native queue.
std::unique_ptr<Submitter> make_submitter(std::shared_ptr<NativeQueue> native, bool out_of_order);

// An entry point's enqueue: puts `command` into the DAG of its queue (it runs once `wait_list`
// and the queue's own ordering allow), gives its event to the application if it asked
// (`event_out`), and waits for it when `blocking` (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
// if it failed). Thread: application.
void submit_command(Ref<Command> command, std::span<Event* const> wait_list, cl_event* event_out,
                    bool blocking = false, SyncKind sync = SyncKind::None);

}  // namespace manifold
