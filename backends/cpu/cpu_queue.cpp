#include "backends/cpu/cpu_queue.h"

#include "backends/cpu/cpu_device.h"

// oneTBB is not built with ThreadSanitizer: the hand-off of a task from the enqueueing thread to
// a worker is invisible to it. These annotations state that everything the enqueueing thread
// wrote before arena_.enqueue (the command, its operands) happens before the task runs. The
// task object itself (its captures) is built inside enqueue, in TBB's task pool: reports about
// it are covered by tests/tsan.supp.
#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#define MANIFOLD_TSAN_RELEASE(p) __tsan_release(p)
#define MANIFOLD_TSAN_ACQUIRE(p) __tsan_acquire(p)
#else
#define MANIFOLD_TSAN_RELEASE(p) static_cast<void>(p)
#define MANIFOLD_TSAN_ACQUIRE(p) static_cast<void>(p)
#endif

namespace manifold::cpu {

InOrderQueue::InOrderQueue(CpuDevice& device, tbb::task_arena& arena)
    : device_(device), arena_(arena) {}
InOrderQueue::~InOrderQueue() = default;

void InOrderQueue::submit(Ref<Job> job) {
  bool wake;
  {
    std::lock_guard lock(mutex_);
    fifo_.push_back(std::move(job));
    wake = !executing_ && !worker_scheduled_;
    if (wake) worker_scheduled_ = true;
  }
  if (!wake) return;
  // The task keeps the queue alive: the last command may drop the queue's last reference.
  MANIFOLD_TSAN_RELEASE(this);
  arena_.enqueue([self = std::static_pointer_cast<InOrderQueue>(shared_from_this())] {
    MANIFOLD_TSAN_ACQUIRE(self.get());
    {
      std::lock_guard lock(self->mutex_);
      self->worker_scheduled_ = false;
      if (self->executing_) return;
      self->executing_ = true;
    }
    self->drain();
  });
}

void InOrderQueue::help_until_idle() {
  // A sub-device runs on its own cores only: a thread joining its arena would add one more
  // (the halves of a CPU in a device group would each take the whole machine).
  if (!device_.is_root()) return;
  {
    std::lock_guard lock(mutex_);
    if (executing_ || fifo_.empty()) return;
    executing_ = true;
  }
  auto keep_alive = shared_from_this();
  arena_.execute([this] { drain(); });
}

void InOrderQueue::drain() {
  for (;;) {
    Ref<Job> job;
    {
      std::lock_guard lock(mutex_);
      if (fifo_.empty()) {
        executing_ = false;
        return;
      }
      job = std::move(fifo_.front());
      fifo_.pop_front();
    }
    execute(device_, *job);
  }
}

void ConcurrentQueue::submit(Ref<Job> job) {
  MANIFOLD_TSAN_RELEASE(job.get());
  arena_.enqueue([&device = device_, job = std::move(job)] {
    MANIFOLD_TSAN_ACQUIRE(job.get());
    execute(device, *job);
  });
}

}  // namespace manifold::cpu
