// The CPU device's native queues: commands run on the device's oneTBB arena.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <deque>
#include <memory>
#include <mutex>

#include "core/backend.h"
#include "core/job.h"

namespace manifold::cpu {

class CpuDevice;

// Runs one job on the calling thread through the device's operations and finishes it.
void execute(CpuDevice& device, Job& job);

// In-order: one FIFO, executed by at most one thread at a time. A worker is woken on submit,
// but a thread about to wait (clFinish, a blocking read) runs the FIFO itself if no worker has
// started yet: an enqueue + finish round trip then needs no thread hand-off at all.
class InOrderQueue final : public NativeQueue {
 public:
  InOrderQueue(CpuDevice& device, tbb::task_arena& arena);
  ~InOrderQueue() override;
  void submit(Ref<Job> job) override;
  void help_until_idle() override;

 private:
  void drain();  // runs the FIFO until empty; caller holds the executing_ role

  CpuDevice& device_;
  tbb::task_arena& arena_;
  std::mutex mutex_;
  std::deque<Ref<Job>> fifo_;
  bool executing_ = false;         // a thread is running the FIFO
  bool worker_scheduled_ = false;  // a worker task is on its way
};

// Out-of-order: each ready command is its own task; the scheduler has already resolved its
// dependencies, so the commands may run concurrently.
class ConcurrentQueue final : public NativeQueue {
 public:
  ConcurrentQueue(CpuDevice& device, tbb::task_arena& arena) : device_(device), arena_(arena) {}
  void submit(Ref<Job> job) override;
  bool orders_submissions() const override { return false; }

 private:
  CpuDevice& device_;
  tbb::task_arena& arena_;
};

}  // namespace manifold::cpu
