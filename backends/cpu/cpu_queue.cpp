#include "backends/cpu/cpu_queue.h"

#include "scheduler/command.h"

namespace manifold::cpu {

InOrderQueue::InOrderQueue(tbb::task_arena& arena) : arena_(arena) {}
InOrderQueue::~InOrderQueue() = default;

void InOrderQueue::submit(Ref<Command> command) {
  bool wake;
  {
    std::lock_guard lock(mutex_);
    fifo_.push_back(std::move(command));
    wake = !executing_ && !worker_scheduled_;
    if (wake) worker_scheduled_ = true;
  }
  if (!wake) return;
  // The task keeps the queue alive: the last command may drop the queue's last reference.
  arena_.enqueue([self = std::static_pointer_cast<InOrderQueue>(shared_from_this())] {
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
    Ref<Command> command;
    {
      std::lock_guard lock(mutex_);
      if (fifo_.empty()) {
        executing_ = false;
        return;
      }
      command = std::move(fifo_.front());
      fifo_.pop_front();
    }
    execute(*command);
  }
}

void ConcurrentQueue::submit(Ref<Command> command) {
  arena_.enqueue([command = std::move(command)] { execute(*command); });
}

}  // namespace manifold::cpu
