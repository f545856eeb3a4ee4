// Command submission on a Level Zero device: an in-order immediate command list per queue. A
// queue's worker thread appends each job's commands without waiting for them (each signals an
// event from the device's pool); its completion thread waits for the jobs' last events in order
// and finishes them. Jobs wait for other queues of the device on the device (append-wait).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/level_zero/ze_device.h"
#include "backends/level_zero/ze_events.h"
#include "core/backend.h"
#include "core/job.h"

namespace manifold::level_zero {

// An immediate command list (ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, in order). Commands are
// appended for one job at a time: each signals an event of its own, and the job's first
// command waits for the events it was given. Thread: one at a time (the owner serializes).
class CommandStream {
 public:
  CommandStream(LevelZeroDevice& device, EventPool& events);
  ~CommandStream();
  CommandStream(const CommandStream&) = delete;
  CommandStream& operator=(const CommandStream&) = delete;

  // Starts a job's commands: the first waits for `waits`; `timed`: events with timestamps.
  void begin(std::vector<SignalEvent> waits, bool timed);
  void copy(void* dst, const void* src, size_t size);
  void fill(void* dst, const void* pattern, size_t pattern_size, size_t size);
  // `kernel_state` (the lock of the kernel's arguments) is released once the launch is appended:
  // the driver has copied the arguments by then.
  void launch(ze_kernel_handle_t kernel, const ze_group_count_t& groups,
              std::unique_lock<std::mutex>& kernel_state);
  // Blocks until every command appended so far has completed (for steps done on the host).
  void drain();
  // The events of a job: its commands' in append order (the last signals its completion) and
  // those it waited for, all held until it completes.
  struct JobEvents {
    std::vector<SignalEvent> own, waited;
  };
  // Ends the job. A job that waited for others but appended nothing gets a barrier, so that
  // whoever waits for it waits for those too.
  JobEvents end();

 private:
  template <class Append>
  void append(const char* call, Append&& append_with);

  LevelZeroDevice& device_;
  EventPool& events_;
  ze_command_list_handle_t list_ = nullptr;
  std::vector<SignalEvent> waits_;  // not yet passed to a command
  JobEvents job_;
  bool timed_ = false;
  SignalEvent last_;  // the last command appended (for drain)
};

// A command queue's native queue.
class ZeQueue final : public NativeQueue {
 public:
  explicit ZeQueue(LevelZeroDevice& device);
  ~ZeQueue() override;
  void submit(Ref<Job> job) override;
  // Another queue of the same device: its events can be waited for on this list.
  bool waits_natively_for(const NativeQueue& source) const override;
  // Jobs are appended on the queue's worker, after submit() returned.
  bool fails_at_submission() const override { return false; }

 private:
  struct State;
  // The last event of the newest job of `state` numbered `number` or lower that is still in
  // flight (null when all have completed); waits until that job's commands were appended.
  static SignalEvent signal_through(State& state, uint64_t number);
  static void work(const std::shared_ptr<State>& state);
  static void complete(const std::shared_ptr<State>& state);

  std::shared_ptr<State> state_;
  std::thread worker_, completer_;
};

}  // namespace manifold::level_zero
