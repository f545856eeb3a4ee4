// Command submission on a Level Zero device: an in-order immediate command list per queue,
// each appended command signalling one event that the submitting thread waits for (and resets
// before its next use), and the native queue whose worker thread runs the jobs in order.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "backends/level_zero/ze_device.h"
#include "core/backend.h"

namespace manifold::level_zero {

// An immediate command list (ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, in order) with the event its
// commands signal. Each call appends one command and returns when it has completed. Thread:
// one at a time (the owner serializes).
class ImmediateList {
 public:
  explicit ImmediateList(LevelZeroDevice& device);
  ~ImmediateList();
  ImmediateList(const ImmediateList&) = delete;
  ImmediateList& operator=(const ImmediateList&) = delete;

  void copy(void* dst, const void* src, size_t size);
  void fill(void* dst, const void* pattern, size_t pattern_size, size_t size);
  // `kernel_state` (the lock of the kernel's arguments) is released once the launch is appended:
  // the driver has copied the arguments by then.
  void launch(ze_kernel_handle_t kernel, const ze_group_count_t& groups,
              std::unique_lock<std::mutex>& kernel_state);

 private:
  // Waits for the command just appended (`appended`: its append's result), then resets the
  // event for the next one.
  void finish(ze_result_t appended, const char* call);
  void destroy();

  const Api& api_;
  ze_command_list_handle_t list_ = nullptr;
  ze_event_pool_handle_t pool_ = nullptr;
  ze_event_handle_t event_ = nullptr;
};

// A command queue's native queue: jobs run in submission order on a worker thread of the
// queue (submit() never waits for the device).
class ZeQueue final : public NativeQueue {
 public:
  explicit ZeQueue(LevelZeroDevice& device);
  ~ZeQueue() override;
  void submit(Ref<Job> job) override;

 private:
  // Shared with the worker: a job's end may drop the queue's last reference on the worker
  // itself, which then finishes what is queued and ends on its own.
  struct State {
    explicit State(LevelZeroDevice& device) : device(device), list(device) {}
    LevelZeroDevice& device;
    ImmediateList list;
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Ref<Job>> fifo;
    bool stopping = false;
  };
  static void work(const std::shared_ptr<State>& state);

  std::shared_ptr<State> state_;
  std::thread worker_;
};

}  // namespace manifold::level_zero
