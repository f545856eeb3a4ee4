#include "backends/remote/remote_queue.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>

#include "backends/remote/remote_ops.h"
#include "core/error.h"
#include "core/event.h"
#include "core/log.h"
#include "core/platform.h"

namespace manifold::remote {

struct RemoteQueue::State final : QueueSink {
  State(RemoteDevice& d, uint32_t queue_id) : device(d), link(d.shared_link()), id(queue_id) {}

  RemoteDevice& device;
  const std::shared_ptr<ServerLink> link;
  const uint32_t id;

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Ref<Job>> incoming;                      // submitted, not yet sent
  std::deque<std::shared_ptr<PendingJob>> in_flight;  // sent, in order, until their Done
  bool stopping = false;
  bool sending = false;  // a job is being sent (by the worker or the submitting thread)
  bool link_down = false;
  std::string why;

  // Thread: the link's dispatcher.
  void done(const Done& d) override {
    std::shared_ptr<PendingJob> p;
    Ref<Job> next;
    {
      std::lock_guard lock(mutex);
      if (in_flight.empty() || in_flight.front()->job != d.job) return;  // not ours: ignored
      p = std::move(in_flight.front());
      in_flight.pop_front();
      if (!in_flight.empty()) next = in_flight.front()->owner;
    }
    // Before the job ends, as a local kernel's output is there when its event completes.
    if (!d.printf_output.empty()) print(*p, d.printf_output);
    finish(*p, d.status, d.start_ns, d.end_ns, d.message);
    // The server runs a queue's jobs in order: the next one starts now.
    if (next) next->running();
    changed.notify_all();
    if (released()) link->detach(id);
  }

  void link_failed(const std::string& reason) override {
    std::deque<std::shared_ptr<PendingJob>> lost;
    {
      std::lock_guard lock(mutex);
      link_down = true;
      why = reason;
      lost.swap(in_flight);
    }
    device.mark_unavailable();
    for (auto& p : lost) finish(*p, CL_DEVICE_NOT_AVAILABLE, 0, 0, reason);
    changed.notify_all();
    link->detach(id);
  }

  static void print(const PendingJob& p, const std::string& text) {
    if (p.printf_sink.callback) {
      p.printf_sink.callback(text.data(), text.size(), p.printf_sink.user_data);
      return;
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }

  // The queue is gone and nothing of it is in flight: the link may let go of it.
  bool released() {
    std::lock_guard lock(mutex);
    return stopping && incoming.empty() && in_flight.empty();
  }

  void finish(PendingJob& p, cl_int server_status, uint64_t start, uint64_t end,
              const std::string& message) {
    for (uint64_t tag : p.reads) link->forget_data(tag);
    cl_int status = p.status != CL_SUCCESS ? p.status : server_status;
    if (status == CL_COMPLETE) {
      try {
        for (auto& step : p.after) step();
      } catch (const Error& e) {
        status = e.code();
      }
    }
    if (status < 0 && !message.empty())
      log_debug("remote: a command of %s failed: %s", device.info().name.c_str(), message.c_str());
    if (p.fence) {
      std::lock_guard lock(mutex);
      p.fence_status = status;
      p.fence_done = true;
      return;
    }
    Event& event = p.owner->event();
    if (p.owner->profiling() && status == CL_COMPLETE) {
      // The server's times, in this machine's time base; a job that ran nothing there (a
      // marker) ran when the server had run everything before it: when its Done came.
      // Whatever the clocks' offset, the job ran after it was submitted and had ended when its
      // Done came: the times stay inside that window, so that dependents never seem to start
      // before it ended.
      const uint64_t arrived = host_time_ns();
      uint64_t s = arrived, e = arrived;
      if (start) {
        const int64_t offset = link->clock_offset_ns();
        e = std::min<uint64_t>(uint64_t(int64_t(end) - offset), arrived);
        s = std::max(std::min<uint64_t>(uint64_t(int64_t(start) - offset), e),
                     event.stamp(Event::kSubmit));
        e = std::max(e, s);
      }
      event.set_stamp(Event::kStart, s);
      event.set_stamp(Event::kEnd, e);
    }
    p.owner->finish(status == CL_COMPLETE ? CL_COMPLETE : status);
  }

  // Puts `p` in flight and ends it on the server; a link already down fails it at once.
  void send_end(const std::shared_ptr<PendingJob>& p) {
    bool first = false;
    {
      std::lock_guard lock(mutex);
      if (!link_down) {
        in_flight.push_back(p);
        p->sent = true;
        first = in_flight.size() == 1;
      }
    }
    if (p->sent) {
      // Nothing of this queue ahead of it on the server: it runs now (CL_RUNNING), else when
      // the job before it ends.
      if (first && p->owner) p->owner->running();
      link->send(message(Kind::EndJob, EndJob{id, p->job}));
      return;  // a failed send: link_failed() ends it
    }
    finish(*p, CL_DEVICE_NOT_AVAILABLE, 0, 0, why);
  }

  // Waits until the server has run everything sent so far (a step that needs the host next).
  // Throws CL_DEVICE_NOT_AVAILABLE when the server is gone.
  void drain() {
    auto fence = std::make_shared<PendingJob>();
    fence->job = link->next_id();
    fence->fence = true;
    send_end(fence);
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return fence->fence_done || (!fence->sent && link_down); });
    if (!fence->fence_done || fence->fence_status == CL_DEVICE_NOT_AVAILABLE)
      fail(CL_DEVICE_NOT_AVAILABLE, device.info().name + ": the server is not reachable: " + why);
  }

  // Sends one job's operations and its end.
  void run_one(Ref<Job> job) {
    auto p = std::make_shared<PendingJob>();
    p->job = link->next_id();
    p->owner = job;
    cl_int status = CL_DEVICE_NOT_AVAILABLE;
    if (link->alive()) {
      RemoteOps ops(device, id, *p, [this] { drain(); });
      status = job->run(ops);
    }
    if (status == CL_SUCCESS) job->event().mark_accepted();
    p->status = status;
    send_end(p);
  }

  void work() {
    for (;;) {
      Ref<Job> job;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock,
                     [&] { return (stopping && !sending) || (!incoming.empty() && !sending); });
        if (incoming.empty()) return;
        job = std::move(incoming.front());
        incoming.pop_front();
        sending = true;
      }
      run_one(std::move(job));
      {
        std::lock_guard lock(mutex);
        sending = false;
      }
    }
  }
};

RemoteQueue::RemoteQueue(RemoteDevice& device)
    : state_(std::make_shared<State>(device, uint32_t(device.link().next_id()))) {
  device.link().attach(state_->id, state_);
  device.link().send(message(Kind::CreateQueue, CreateQueue{state_->id, device.index(), 1}));
  worker_ = std::thread([s = state_] { s->work(); });
}

RemoteQueue::~RemoteQueue() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->changed.notify_all();
  // The last reference may go on the worker itself (a finished job held the command queue): it
  // ends on its own once it sees `stopping`, holding the state it needs.
  if (worker_.get_id() == std::this_thread::get_id())
    worker_.detach();
  else
    worker_.join();
  // The server releases its queue after what was sent before; Done messages still come.
  state_->link->send(message(Kind::ReleaseQueue, ReleaseQueue{state_->id}));
  if (state_->released()) state_->link->detach(state_->id);
}

void RemoteQueue::submit(Ref<Job> job) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  // A launch that moves no memory needs no host step and never waits: when nothing is ahead of
  // it here, the submitting thread sends it itself (no thread hop: latency).
  if (job->plain_launch() && s.incoming.empty() && !s.sending) {
    s.sending = true;
    lock.unlock();
    s.run_one(std::move(job));
    lock.lock();
    s.sending = false;
    if (!s.incoming.empty()) s.changed.notify_all();
    return;
  }
  s.incoming.push_back(std::move(job));
  lock.unlock();
  s.changed.notify_all();
}

std::shared_ptr<NativeQueue> RemoteDevice::create_native_queue_impl(bool /*out_of_order*/) {
  return std::make_shared<RemoteQueue>(*this);
}

}  // namespace manifold::remote
