// Native queues over a GPU vendor's streams, written once for every vendor API that has streams
// and events (CUDA and HIP): the vendor differences live in a traits type `Api`.
//
// In-order queue = one stream. submit() runs on the enqueueing thread and puts the command's
// work straight into the stream (no scheduler thread, no hand-off): launch latency is a headline
// figure. Completion is found without spinning threads and without a GPU event per command:
//   - a thread about to wait (clFinish, a blocking read: help_until_idle) synchronizes the
//     stream itself and completes what it covered, so a round trip needs no thread hand-off;
//   - for everything else, one waiter thread per queue records one blocking-sync event after the
//     newest command, sleeps in it, then completes every command up to it, in order (a stream
//     runs in order: one event covers them all).
// When the waiter runs (MANIFOLD_GPU_COMPLETION):
//   lazy (default): only when somebody needs completions before a wait of their own would find
//     them: a flush (clFlush, an event's callback or cross-queue dependent, a status poll, a
//     thread sleeping on an event), a command submitted off the enqueue path (its dependencies
//     resolved later, on some other thread), or when the GPU falls 8 batches behind. Every
//     MANIFOLD_GPU_COMPLETION_BATCH (default 256) direct submissions the submitting thread
//     itself completes what the GPU has finished (a non-blocking event query), so finished
//     commands release their buffers and kernels. A stream of launches followed by clFinish
//     then costs the launching thread no wake-up and no contention with a completing thread.
//   eager: after every submission (the waiter chases the stream).
// Runs of launches go into the stream as one graph launch (launch_batch.h): a plain kernel launch
// enqueued while the stream still has work waits in a batch of MANIFOLD_GPU_LAUNCH_BATCH
// (default 32; 0: off) launches, which goes when full, before any other work into the stream,
// at every flush or wait (clFlush, clFinish, an event's waiter, callback or status poll, a
// dependent in another queue), or when it has waited MANIFOLD_GPU_LAUNCH_BATCH_US (default 200)
// microseconds (the waiter thread's job):
// an application that neither enqueues nor flushes still sees its launches start. A launch into
// an idle stream, a profiled one, one that waits for other streams or moves memory first goes
// at once.
// Profiling records an event before and after each command (only on profiling queues).
// A dependency on a command already in another stream queue of the same vendor (any of its
// GPUs) becomes a device-side wait: an event recorded in that stream, waited for in this one.
//
// Out-of-order queue = a small pool of in-order stream queues; the scheduler resolves
// dependencies before submit(), so commands go round-robin to the pool's streams and run
// concurrently.
//
// Api must provide (all static):
//   using Device; using Stream; using Event;
//   void make_current(Device&);                       // the calling thread talks to Device
//   Stream create_stream(Device&);  void destroy_stream(Device&, Stream);
//   Event create_event(Device&, bool timing, bool blocking_sync);
//   void destroy_event(Device&, Event);
//   void record(Event, Stream);  void stream_wait(Stream, Event);  // device-side wait
//   bool event_done(Event);                           // non-blocking: recorded work has run
//   cl_int synchronize_event(Event);  cl_int synchronize_stream(Stream);   // CL_SUCCESS or error
//   double elapsed_ns(Event from, Event to);
//   cl_int execute(Device&, Job&, Stream);  // makes Device current (where the work needs it)
//                                           // and runs the job with the vendor's DeviceOps on
//                                           // the stream (may block on the host for staging);
//                                           // CL_SUCCESS or error
//   and what launch_batch.h asks for.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/gpu_stream/launch_batch.h"
#include "core/backend.h"
#include "core/event.h"
#include "core/job.h"
#include "core/platform.h"
#include "settings/settings.h"

namespace manifold::gpu {

template <class Api>
class StreamQueue final : public NativeQueue {
  using Device = typename Api::Device;
  using Stream = typename Api::Stream;
  using GpuEvent = typename Api::Event;

 public:
  explicit StreamQueue(Device& device) : state_(std::make_shared<State>(device)) {}

  ~StreamQueue() override {
    {
      std::lock_guard lock(state_->mutex);
      state_->stop = true;
    }
    state_->wake.notify_all();
    if (!waiter_.joinable()) return;
    // The waiter may itself drop the last reference to this queue (finishing the last command
    // releases the OpenCL queue): it cannot join itself, and it holds the state alive.
    if (waiter_.get_id() == std::this_thread::get_id())
      waiter_.detach();
    else
      waiter_.join();
  }

  bool waits_natively_for(const NativeQueue& source) const override {
    return dynamic_cast<const StreamQueue*>(&source) != nullptr;
  }

  void submit(Ref<Job> job) override {
    State& s = *state_;
    // Before this queue's lock (two queues may wait for each other's earlier work): work another
    // thread puts into this stream meanwhile waits too, which is merely conservative.
    std::vector<Waited> waited;  // empty (no allocation) unless the command waits natively
    for (const auto& source : job->native_waits()) {
      auto& queue = static_cast<StreamQueue&>(*source);
      waited.push_back({queue.state_, queue.make_wait(s.stream)});
    }
    const bool profiling = job->profiling();
    const bool direct = job->submitted_directly();
    std::unique_lock lock(s.mutex);  // FIFO order must be stream order
    Entry entry{std::move(job), ++s.submitted, nullptr, nullptr, std::move(waited)};
    const uint64_t sequence = entry.sequence;
    // A launch waits in the batch while the stream has work (the GPU is busy or the batch is
    // filling); everything else goes after the batch.
    if (s.staged && direct && !profiling && !eager() && entry.waited.empty() &&
        (!s.staged->empty() || s.in_stream > s.completed)) {
      const int prepared = Api::prepare_launch(s.device, *entry.job, s.staged->next());
      if (prepared == CL_SUCCESS) {
        if (s.staged->empty()) s.batch_started = std::chrono::steady_clock::now();
        s.staged->commit();
        s.pending.push_back(std::move(entry));
        if (s.staged->full()) s.launch_staged();
        after_submit(lock, sequence, direct);
        return;
      }
      if (prepared != kNotBatchable) {
        --s.submitted;  // as a failed execute below
        lock.unlock();
        entry.job->finish(prepared);
        return;
      }
    }
    s.launch_staged();
    if (profiling) {
      Api::make_current(s.device);
      entry.start = s.take_event(true);
      Api::record(entry.start, s.stream);
      // RUNNING only where it is timed: elsewhere the event goes from SUBMITTED to COMPLETE
      // (callbacks for CL_RUNNING then fire at completion), one lock less per launch.
      entry.job->running();
    }
    const cl_int status = Api::execute(s.device, *entry.job, s.stream);
    if (status != CL_SUCCESS) {
      // Nothing of it reached the stream: it fails now, earlier commands still run.
      if (entry.start) s.free_events.push_back(entry.start);
      --s.submitted;  // the sequence numbers stay those of the stream's commands
      lock.unlock();
      entry.job->finish(status);
      return;
    }
    if (profiling) {
      entry.end = s.take_event(true);
      Api::record(entry.end, s.stream);
      if (!s.clock) s.clock = &DeviceClock::of(s.device);
    }
    s.pending.push_back(std::move(entry));
    s.in_stream = sequence;
    after_submit(lock, sequence, direct);
  }

  // The end of every submission: completion, wanted now or later (see the header), and the
  // waiter's wake-up. Unlocks.
  void after_submit(std::unique_lock<std::mutex>& lock, uint64_t sequence, bool direct) {
    State& s = *state_;
    // A direct submission is followed by the enqueueing thread's own wait, flush or further
    // enqueues.
    uint64_t harvest = 0;
    if (eager() || !direct) {
      s.wanted_through = sequence;
    } else if (sequence - s.harvest_checked >= completion_batch()) {
      // A long run of launches: every `batch` commands this thread completes those the GPU has
      // finished, found by a non-blocking query of an event recorded a batch ago. Their memory
      // and references are released on the thread that took them: handing them to the waiter
      // made both threads fight over the allocator and the shared reference counts, a cost
      // paid per launch. The waiter takes over when the GPU falls far behind.
      s.harvest_checked = sequence;
      if (s.harvest_through && completing_depth() == 0 && Api::event_done(s.harvest_event)) {
        harvest = s.harvest_through;
        s.harvest_through = 0;
      }
      if (!s.harvest_through && s.in_stream > s.completed) {
        if (!s.harvest_event) {
          Api::make_current(s.device);
          s.harvest_event = Api::create_event(s.device, false, false);
        }
        Api::record(s.harvest_event, s.stream);
        s.harvest_through = s.in_stream;  // a staged launch is not in the stream yet
      }
      if (sequence - std::max(s.completed, s.wanted_through) >=
          kWaiterAfterBatches * completion_batch())
        s.wanted_through = sequence;
    }
    const bool wake = s.wanted_through > s.completed && !s.waiter_busy;
    if (wake) s.waiter_busy = true;
    // A batch started: the waiter launches it if it still waits at its deadline.
    const bool watch = s.staged && !s.staged->empty() && !s.watching;
    if (watch) s.watching = true;
    if ((wake || watch) && !waiter_.joinable())
      waiter_ = std::thread([state = state_] { state->wait_loop(); });
    lock.unlock();
    if (wake || watch) s.wake.notify_one();
    if (harvest) s.complete_through(harvest, CL_SUCCESS);
  }

  // Makes `waiting` (a stream of any device of this vendor) wait on the device for everything
  // submitted here so far; returns the sequence number of the newest command it covers.
  // Thread: the waiting queue's submit.
  uint64_t make_wait(Stream waiting) {
    State& s = *state_;
    std::lock_guard lock(s.mutex);
    s.launch_staged();
    Api::make_current(s.device);
    if (!s.cross_event) s.cross_event = Api::create_event(s.device, false, false);
    // The wait takes the event's state at this call: the event can be recorded again at once.
    Api::record(s.cross_event, s.stream);
    Api::stream_wait(waiting, s.cross_event);
    return s.submitted;
  }

  // The commands submitted so far complete without anybody waiting for them.
  void flush() override {
    State& s = *state_;
    bool wake;
    {
      std::lock_guard lock(s.mutex);
      s.launch_staged();
      if (s.pending.empty()) return;
      s.wanted_through = s.submitted;
      wake = !s.waiter_busy;
      if (wake) s.waiter_busy = true;
      if (wake && !waiter_.joinable())
        waiter_ = std::thread([state = state_] { state->wait_loop(); });
    }
    if (wake) s.wake.notify_one();
  }

  void help_until_idle() override {
    State& s = *state_;
    uint64_t covered;
    {
      std::lock_guard lock(s.mutex);
      s.launch_staged();
      if (s.pending.empty()) return;
      covered = s.submitted;
    }
    Api::make_current(s.device);
    const cl_int status = Api::synchronize_stream(s.stream);
    s.complete_through(covered, status);
  }

 private:
  static bool eager() { return settings().gpu_completion_eager; }
  // A thread inside complete_through (running a callback) must not complete more of the same
  // stream: the entries it holds would never finish for the nested call.
  [[gnu::visibility("hidden")]] static int& completing_depth() {
    static thread_local int depth = 0;
    return depth;
  }
  static constexpr uint64_t kWaiterAfterBatches = 8;
  // How long a launch may wait in a batch that does not fill (the application stopped enqueueing
  // without a flush): a few times what filling one takes.
  static std::chrono::microseconds batch_deadline() { return settings().gpu_launch_batch_deadline; }
  static size_t launch_batch_size() { return settings().gpu_launch_batch; }
  static uint64_t completion_batch() { return settings().gpu_completion_batch; }

  // Device timestamps on the host clock, one anchor per GPU: a timing event whose host time is
  // known, recorded on an idle stream of its own between two clock reads (the closest of a few
  // tries; its host time is the middle). Every stream of the device measures from it, so the
  // profiling times of commands in different streams (an out-of-order queue's, other queues')
  // compare. Made once, by the first profiled command of the device; lives as long as the
  // process (devices do).
  struct DeviceClock {
    GpuEvent anchor{};
    uint64_t anchor_ns = 0;

    uint64_t host_ns(double elapsed_ns) const {
      return anchor_ns + static_cast<uint64_t>(std::max(0.0, elapsed_ns));
    }
    static const DeviceClock& of(Device& device) {
      static std::mutex mutex;
      static std::vector<std::pair<const Device*, std::unique_ptr<DeviceClock>>> clocks;
      std::lock_guard lock(mutex);
      for (const auto& [d, c] : clocks)
        if (d == &device) return *c;
      auto clock = std::make_unique<DeviceClock>();
      Api::make_current(device);
      const Stream idle = Api::create_stream(device);
      uint64_t best = UINT64_MAX;
      for (int attempt = 0; attempt < 5 && best > 4000; ++attempt) {
        const GpuEvent e = Api::create_event(device, true, false);
        const uint64_t before = host_time_ns();
        Api::record(e, idle);
        Api::synchronize_event(e);
        const uint64_t after = host_time_ns();
        if (after - before < best) {
          best = after - before;
          if (clock->anchor) Api::destroy_event(device, clock->anchor);
          clock->anchor = e;
          clock->anchor_ns = before + (after - before) / 2;
        } else {
          Api::destroy_event(device, e);
        }
      }
      Api::destroy_stream(device, idle);
      clocks.emplace_back(&device, std::move(clock));
      return *clocks.back().second;
    }
  };

  struct State;
  // Commands of another stream queue, through `sequence`, that a command waited for on the
  // device: they have run when it has, and complete (on the host) before it does.
  struct Waited {
    std::shared_ptr<State> queue;
    uint64_t sequence;
  };
  struct Entry {
    Ref<Job> job;
    uint64_t sequence;
    GpuEvent start, end;  // profiling only
    std::vector<Waited> waited;
    cl_int failed = CL_SUCCESS;  // a staged launch the driver refused when its batch went
  };

  struct State {
    explicit State(Device& d) : device(d) {
      Api::make_current(device);
      stream = Api::create_stream(device);
      sync_event = Api::create_event(device, false, true);
      if (launch_batch_size() && Api::has_graphs(device)) {
        staged = std::make_unique<LaunchBatch<Api>>(launch_batch_size());
        batch_statuses.resize(launch_batch_size());
      }
    }
    ~State() {
      launch_staged();  // normally nothing: staged commands hold the queue
      Api::make_current(device);
      Api::synchronize_stream(stream);
      if (staged) staged->destroy(device);
      for (GpuEvent e : free_events) Api::destroy_event(device, e);
      if (cross_event) Api::destroy_event(device, cross_event);
      if (harvest_event) Api::destroy_event(device, harvest_event);
      Api::destroy_event(device, sync_event);
      Api::destroy_stream(device, stream);
    }

    // Puts the staged launches, if any, into the stream (the newest entries of `pending`). Lock
    // held.
    void launch_staged() {
      const size_t n = staged ? staged->size() : 0;
      if (n == 0) return;
      Api::make_current(device);
      staged->launch(device, stream, batch_statuses);
      for (size_t i = 0; i < n; ++i)
        if (batch_statuses[i] != CL_SUCCESS)
          pending[pending.size() - n + i].failed = batch_statuses[i];
      in_stream = pending.back().sequence;
    }

    GpuEvent take_event(bool timing) {
      (void)timing;
      if (free_events.empty()) return Api::create_event(device, true, false);
      GpuEvent e = free_events.back();
      free_events.pop_back();
      return e;
    }

    // Completes, in order, every pending command up to `sequence` (the stream ran them).
    void complete_through(uint64_t sequence, cl_int status) {
      ++completing_depth();
      struct Leave {
        ~Leave() { --completing_depth(); }
      } leave;
      std::vector<Entry> done;
      {
        std::lock_guard lock(mutex);
        done.reserve(std::min<uint64_t>(pending.size(), sequence - completed));
        while (!pending.empty() && pending.front().sequence <= sequence) {
          completed = pending.front().sequence;
          done.push_back(std::move(pending.front()));
          pending.pop_front();
        }
      }
      for (Entry& e : done) {
        // Commands before it that another thread took off the list finish first: statuses
        // change in stream order.
        wait_finished(e.sequence - 1);
        // What it waited for in other streams first: statuses stay in dependency order even
        // where those queues complete lazily.
        if (status == CL_SUCCESS)
          for (const Waited& w : e.waited) w.queue->complete_through(w.sequence, CL_SUCCESS);
        if (e.start && status == CL_SUCCESS) {
          Event& event = e.job->event();
          const uint64_t submitted = event.stamp(Event::kSubmit);
          uint64_t start = clock->host_ns(Api::elapsed_ns(clock->anchor, e.start));
          uint64_t end = clock->host_ns(Api::elapsed_ns(clock->anchor, e.end));
          start = std::max(start, submitted);
          end = std::max(end, start);
          event.set_stamp(Event::kStart, start);
          event.set_stamp(Event::kEnd, end);
        }
        if (e.start) {
          std::lock_guard lock(mutex);
          free_events.push_back(e.start);
          free_events.push_back(e.end);
        }
        e.job->finish(status != CL_SUCCESS     ? status
                      : e.failed != CL_SUCCESS ? e.failed
                                               : CL_COMPLETE);
        finished.store(e.sequence, std::memory_order_release);
        finished.notify_all();
      }
      // Commands through `sequence` that another thread took off the list: they have finished
      // when this returns (a dependent in another stream counts on it). Waits only ever go to
      // commands submitted earlier, so two queues completing each other's work cannot deadlock.
      wait_finished(std::min(sequence, submitted_snapshot(sequence)));
    }

    uint64_t submitted_snapshot(uint64_t sequence) {
      std::lock_guard lock(mutex);
      // Sequence numbers of commands that failed at submission were given back: the newest
      // number in use bounds what can finish.
      return std::min(sequence, submitted);
    }
    void wait_finished(uint64_t sequence) const {
      uint64_t f = finished.load(std::memory_order_acquire);
      while (f < sequence) {
        finished.wait(f, std::memory_order_acquire);
        f = finished.load(std::memory_order_acquire);
      }
    }

    void wait_loop() {
      std::unique_lock lock(mutex);
      for (;;) {
        if (stop && pending.empty()) return;
        // A queue being destroyed drains what is left (normally nothing: commands hold it).
        if (stop) wanted_through = submitted;
        if (pending.empty() || wanted_through <= completed) {
          waiter_busy = false;
          if (!staged || staged->empty()) {
            watching = false;
            wake.wait(lock);
            continue;
          }
          // A staged batch: launched here if it still waits at its deadline.
          const auto deadline = batch_started + batch_deadline();
          if (std::chrono::steady_clock::now() < deadline)
            wake.wait_until(lock, deadline);
          else
            launch_staged();
          continue;
        }
        const uint64_t sequence = submitted;
        launch_staged();
        Api::make_current(device);
        Api::record(sync_event, stream);  // under the lock: after every command up to sequence
        lock.unlock();
        const cl_int status = Api::synchronize_event(sync_event);
        complete_through(sequence, status);
        lock.lock();
      }
    }

    Device& device;
    Stream stream{};
    GpuEvent sync_event{};
    const DeviceClock* clock = nullptr;  // set with the first profiled command
    GpuEvent cross_event{};    // recorded for other streams' device-side waits (make_wait)
    GpuEvent harvest_event{};  // recorded after command harvest_through (0: none out)
    uint64_t harvest_through = 0, harvest_checked = 0;
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Entry> pending;
    std::vector<GpuEvent> free_events;
    // Sequence numbers: the newest command submitted, the newest one in the stream (staged
    // launches are not yet), the newest one somebody wants completed soon, the newest one taken
    // out of `pending` for completion (by the waiter or a thread about to wait).
    uint64_t submitted = 0, in_stream = 0, wanted_through = 0, completed = 0;
    // Launches staged for one graph launch (null: batching off or no graphs) and when the
    // current batch began; the waiter launches a batch still there at its deadline.
    std::unique_ptr<LaunchBatch<Api>> staged;
    std::vector<cl_int> batch_statuses;
    std::chrono::steady_clock::time_point batch_started;
    bool watching = false;              // the waiter knows a batch waits (it wakes at its deadline)
    std::atomic<uint64_t> finished{0};  // every command through this sequence has finished
    bool waiter_busy = false;
    bool stop = false;
  };

  std::shared_ptr<State> state_;
  std::thread waiter_;
};

// Out-of-order: ready commands spread over a few in-order streams.
template <class Api>
class StreamPoolQueue final : public NativeQueue {
 public:
  StreamPoolQueue(typename Api::Device& device, unsigned streams) {
    for (unsigned i = 0; i < streams; ++i)
      pool_.push_back(std::make_shared<StreamQueue<Api>>(device));
  }
  void submit(Ref<Job> job) override {
    const size_t i = next_.fetch_add(1, std::memory_order_relaxed) % pool_.size();
    pool_[i]->submit(std::move(job));
  }
  bool orders_submissions() const override { return false; }
  void flush() override {
    for (auto& q : pool_) q->flush();
  }
  void help_until_idle() override {
    for (auto& q : pool_) q->help_until_idle();
  }

 private:
  std::vector<std::shared_ptr<StreamQueue<Api>>> pool_;
  std::atomic<size_t> next_{0};
};

}  // namespace manifold::gpu
