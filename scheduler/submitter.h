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

class Submitter {
 public:
  virtual ~Submitter() = default;
  // Adds the command's dependencies and arms it: it runs once they resolve, possibly before
  // this returns (the direct path). Thread: application.
  virtual void enqueue(Command& command, std::span<Event* const> wait_list, SyncKind sync) = 0;
  // The command of `event` reached a terminal state: the submitter drops what it kept of it.
  // Events hold their queue, so an event kept here after its command ended would keep the
  // queue (which owns this submitter) and its context alive for ever. Thread: any.
  virtual void retire(Event& event) = 0;
  virtual NativeQueue& native() = 0;
};

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

}  // namespace manifold
