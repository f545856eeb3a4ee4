// How a queue orders its commands. One small class per mode: an in-order queue chains each
// command to the previous one (a native in-order stream makes that free), an out-of-order
// queue only honours wait lists, markers and barriers.
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

class InOrderSubmitter final : public Submitter {
 public:
  explicit InOrderSubmitter(std::shared_ptr<NativeQueue> native) : native_(std::move(native)) {}
  ~InOrderSubmitter() override;
  void enqueue(Command& command, std::span<Event* const> wait_list, SyncKind sync) override;
  void retire(Event& event) override;
  NativeQueue& native() override { return *native_; }

 private:
  std::shared_ptr<NativeQueue> native_;
  // The last command enqueued, while it has not ended; holds a reference to it. Exchanged
  // without a lock: one atomic swap per enqueue, one compare-exchange per retired tail.
  std::atomic<Event*> tail_{nullptr};
};

class OutOfOrderSubmitter final : public Submitter {
 public:
  explicit OutOfOrderSubmitter(std::shared_ptr<NativeQueue> native) : native_(std::move(native)) {}
  void enqueue(Command& command, std::span<Event* const> wait_list, SyncKind sync) override;
  void retire(Event& event) override;
  NativeQueue& native() override { return *native_; }

 private:
  std::shared_ptr<NativeQueue> native_;
  std::mutex mutex_;
  // The last barrier while it has not ended: every later command waits for it.
  Ref<Event> barrier_;
  // Commands not yet ended that a marker or barrier without a wait list must wait for: those
  // enqueued since the last such barrier (a barrier with a wait list does not cover them).
  std::unordered_map<const Event*, Ref<Event>> pending_;
};

// The submitter of a queue in the mode `out_of_order` names, over the device's native queue.
std::unique_ptr<Submitter> make_submitter(std::shared_ptr<NativeQueue> native, bool out_of_order);

}  // namespace manifold
