// How a queue orders its commands. One small class per mode: an in-order queue chains each
// command to the previous one (a native in-order stream makes that free), an out-of-order
// queue only honours wait lists, markers and barriers.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "core/backend.h"
#include "core/event.h"

namespace manifold {

class Command;

enum class SyncKind { None, Marker, Barrier };

class Submitter {
 public:
  virtual ~Submitter() = default;
  // Adds the command's dependencies and arms it: it runs once they resolve, possibly before
  // this returns (the direct path). Thread: application.
  virtual void enqueue(Command& command, std::span<Event* const> wait_list, SyncKind sync) = 0;
  virtual NativeQueue& native() = 0;
};

class InOrderSubmitter final : public Submitter {
 public:
  explicit InOrderSubmitter(std::shared_ptr<NativeQueue> native) : native_(std::move(native)) {}
  void enqueue(Command& command, std::span<Event* const> wait_list, SyncKind sync) override;
  NativeQueue& native() override { return *native_; }

 private:
  std::shared_ptr<NativeQueue> native_;
  std::mutex mutex_;
  Ref<Event> tail_;  // the last command enqueued
};

class OutOfOrderSubmitter final : public Submitter {
 public:
  explicit OutOfOrderSubmitter(std::shared_ptr<NativeQueue> native) : native_(std::move(native)) {}
  void enqueue(Command& command, std::span<Event* const> wait_list, SyncKind sync) override;
  NativeQueue& native() override { return *native_; }

 private:
  std::shared_ptr<NativeQueue> native_;
  std::mutex mutex_;
  Ref<Event> barrier_;                    // the last barrier: every later command waits for it
  std::vector<Ref<Event>> since_barrier_;  // commands enqueued after it, for the next barrier
};

}  // namespace manifold
