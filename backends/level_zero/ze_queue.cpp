#include "backends/level_zero/ze_queue.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <utility>

#include "backends/level_zero/ze_program.h"
#include "core/error.h"
#include "core/event.h"
#include "core/operations.h"

namespace manifold::level_zero {

CommandStream::CommandStream(LevelZeroDevice& device, EventPool& events)
    : device_(device), events_(events) {
  ze_command_queue_desc_t desc;
  desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  check_ze(
      device.api().zeCommandListCreateImmediate(device.context(), device.handle(), &desc, &list_),
      CL_OUT_OF_RESOURCES, "zeCommandListCreateImmediate");
}

CommandStream::~CommandStream() {
  // Nothing may still run on the list when it goes (a queue's jobs have all completed).
  try {
    drain();
  } catch (const Error&) {
  }
  last_.reset();
  device_.api().zeCommandListDestroy(list_);
}

void CommandStream::begin(std::vector<SignalEvent> waits, bool timed) {
  waits_ = std::move(waits);
  job_ = {};
  timed_ = timed;
}

template <class Append>
void CommandStream::append(const char* call, Append&& append_with) {
  SignalEvent signal = events_.take(timed_);
  std::vector<ze_event_handle_t> waits;  // only a job's first command has any
  for (const SignalEvent& w : waits_) waits.push_back(w->handle);
  const ze_result_t result = append_with(signal->handle, static_cast<uint32_t>(waits.size()),
                                         waits.empty() ? nullptr : waits.data());
  if (result != ZE_RESULT_SUCCESS) {
    if (result == ZE_RESULT_ERROR_DEVICE_LOST) device_.mark_lost(call);
    check_ze(result, CL_OUT_OF_RESOURCES, call);
  }
  // The waits were appended: from here they only need to stay alive until the job completes.
  std::move(waits_.begin(), waits_.end(), std::back_inserter(job_.waited));
  waits_.clear();
  job_.own.push_back(signal);
  last_ = std::move(signal);
}

void CommandStream::copy(void* dst, const void* src, size_t size) {
  if (!size) return;
  append("zeCommandListAppendMemoryCopy", [&](ze_event_handle_t signal, uint32_t n,
                                              ze_event_handle_t* waits) {
    return device_.api().zeCommandListAppendMemoryCopy(list_, dst, src, size, signal, n, waits);
  });
}

void CommandStream::fill(void* dst, const void* pattern, size_t pattern_size, size_t size) {
  if (!size) return;
  append("zeCommandListAppendMemoryFill",
         [&](ze_event_handle_t signal, uint32_t n, ze_event_handle_t* waits) {
           return device_.api().zeCommandListAppendMemoryFill(list_, dst, pattern, pattern_size,
                                                              size, signal, n, waits);
         });
}

void CommandStream::launch(ze_kernel_handle_t kernel, const ze_group_count_t& groups,
                           std::unique_lock<std::mutex>& kernel_state) {
  append("zeCommandListAppendLaunchKernel",
         [&](ze_event_handle_t signal, uint32_t n, ze_event_handle_t* waits) {
           const ze_result_t result = device_.api().zeCommandListAppendLaunchKernel(
               list_, kernel, &groups, signal, n, waits);
           kernel_state.unlock();
           return result;
         });
}

void CommandStream::drain() {
  if (!last_) return;
  const ze_result_t result = device_.api().zeEventHostSynchronize(last_->handle, UINT64_MAX);
  if (result == ZE_RESULT_ERROR_DEVICE_LOST) device_.mark_lost("zeEventHostSynchronize");
  check_ze(result, CL_OUT_OF_RESOURCES, "zeEventHostSynchronize");
}

CommandStream::JobEvents CommandStream::end() {
  if (!waits_.empty())
    append("zeCommandListAppendBarrier",
           [&](ze_event_handle_t signal, uint32_t n, ze_event_handle_t* waits) {
             return device_.api().zeCommandListAppendBarrier(list_, signal, n, waits);
           });
  return std::exchange(job_, {});
}

namespace {

// The device operations of one job, appended to the queue's list; host-side steps first wait
// for what was appended before them.
class ZeOps final : public DeviceOps {
 public:
  ZeOps(LevelZeroDevice& device, CommandStream& stream) : device_(device), stream_(stream) {}

  void transfer(const Transfer& t) override {
    MemObject& root = *t.root;
    std::byte* host = root.dma_host_data() + t.offset;
    DeviceBacking* source = t.source();
    auto* from = dynamic_cast<ZeBacking*>(source);
    const bool same_device = from && &from->device() == &device_;
    if (same_device) {
      std::byte* src = static_cast<std::byte*>(from->pointer()) + t.offset;
      stream_.copy(t.to == kHostPlace ? host : at(root, t.offset), src, t.size);
      return;
    }
    // Through the buffer's host memory: earlier copies out of it must have run first.
    if (source) {
      stream_.drain();
      source->read_to_host(host, t.offset, t.size);
    }
    if (t.to != kHostPlace) stream_.copy(at(root, t.offset), host, t.size);
  }
  void copy(const CopyOp& op) override {
    if (!op.src.mem && !op.dst.mem) {
      stream_.drain();
      std::memmove(host_address(op.dst), host_address(op.src), op.size);
    } else {
      stream_.copy(at(op.dst), at(op.src), op.size);
    }
  }
  void copy_rect(const CopyRectOp& op) override {
    // One copy per row (no region copies yet).
    const Rect& r = op.rect;
    std::byte* dst = at(op.dst);
    const std::byte* src = at(op.src);
    const bool host_only = !op.src.mem && !op.dst.mem;
    if (host_only) stream_.drain();
    for (size_t z = 0; z < r.region[2]; ++z)
      for (size_t y = 0; y < r.region[1]; ++y) {
        std::byte* d = dst + z * r.dst_slice_pitch + y * r.dst_row_pitch;
        const std::byte* s = src + z * r.src_slice_pitch + y * r.src_row_pitch;
        if (host_only)
          std::memmove(d, s, r.region[0]);
        else
          stream_.copy(d, s, r.region[0]);
      }
  }
  void fill(const FillOp& op) override {
    stream_.fill(at(op.dst), op.pattern.data(), op.pattern_size, op.size);
  }
  // A mapping is the buffer's host memory: the transfer before it brought the bytes there.
  void map(const MapOp& op) override { device_.address(*op.mem); }
  void make_resident(MemObject& mem) override { device_.address(mem); }
  void launch(const KernelOp& op) override { launch_kernel(device_, stream_, op); }
  void native_kernel(const NativeKernelOp&) override {
    fail(CL_INVALID_OPERATION, "native kernels do not run on Level Zero devices");
  }
  void host_function(const HostFunctionOp& op) override {
    stream_.drain();
    op.fn();
  }

 private:
  std::byte* at(MemObject& root, size_t offset) {
    return static_cast<std::byte*>(device_.address(root)) + offset;
  }
  std::byte* at(const Location& l) {
    return l.mem ? static_cast<std::byte*>(device_.address(*l.mem)) + l.offset : host_address(l);
  }

  LevelZeroDevice& device_;
  CommandStream& stream_;
};

// A profiled command starts no earlier than what it depends on ended (`after`): a job that put
// nothing on the device (a marker, a barrier) was taken by the worker long before.
void start_after(Event& event, uint64_t after) {
  if (event.stamp(Event::kStart) < after) event.set_stamp(Event::kStart, after);
  const uint64_t end = event.stamp(Event::kEnd);
  if (end && end < event.stamp(Event::kStart))
    event.set_stamp(Event::kEnd, event.stamp(Event::kStart));
}

}  // namespace

struct ZeQueue::State {
  explicit State(LevelZeroDevice& d) : keep_device(&d), device(d), stream(d, d.events()) {}

  struct Waited {
    std::shared_ptr<State> queue;
    uint64_t number;  // its jobs through this one
  };
  struct Pending {
    Ref<Job> job;
    uint64_t number;
    std::vector<Waited> waits;
  };
  struct InFlight {
    Ref<Job> job;
    uint64_t number;
    cl_int status;
    CommandStream::JobEvents events;
    // The other queues' jobs it waited for on the device: they complete first, so that event
    // statuses change in dependency order although each queue completes its own jobs.
    std::vector<Waited> waited;
  };

  // The queue's threads may outlive the queue and the application's last reference to a
  // sub-device: the device (its context, its event pools) stays until they end. Destroyed last.
  Ref<Device> keep_device;
  LevelZeroDevice& device;
  CommandStream stream;  // the worker's
  std::mutex mutex;
  std::condition_variable work_ready, appended_changed, in_flight_ready;
  std::deque<Pending> fifo;
  std::deque<InFlight> in_flight;
  std::atomic<uint64_t> submitted{0};
  uint64_t appended = 0;   // the newest job whose commands are on the list (or that failed)
  uint64_t completed = 0;  // the newest job finished
  uint64_t last_end = 0;   // the END time of the newest profiled job finished
  std::condition_variable completed_changed;
  bool stopping = false, worker_done = false;
};

ZeQueue::ZeQueue(LevelZeroDevice& device)
    : state_(std::make_shared<State>(device)),
      worker_([state = state_] { work(state); }),
      completer_([state = state_] { complete(state); }) {}

ZeQueue::~ZeQueue() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->work_ready.notify_one();
  // The last reference may go on either thread of the queue (a job's end): that thread then
  // finishes what is queued and ends on its own.
  for (std::thread* t : {&worker_, &completer_}) {
    if (t->get_id() == std::this_thread::get_id())
      t->detach();
    else
      t->join();
  }
}

bool ZeQueue::waits_natively_for(const NativeQueue& source) const {
  const auto* other = dynamic_cast<const ZeQueue*>(&source);
  return other && &other->state_->device == &state_->device;
}

void ZeQueue::submit(Ref<Job> job) {
  std::vector<State::Waited> waits;
  for (const std::shared_ptr<NativeQueue>& queue : job->native_waits()) {
    auto& source = static_cast<ZeQueue&>(*queue);
    waits.push_back({source.state_, source.state_->submitted.load(std::memory_order_acquire)});
  }
  {
    std::lock_guard lock(state_->mutex);
    const uint64_t number = state_->submitted.load(std::memory_order_relaxed) + 1;
    state_->fifo.push_back({std::move(job), number, std::move(waits)});
    state_->submitted.store(number, std::memory_order_release);
  }
  state_->work_ready.notify_one();
}

SignalEvent ZeQueue::signal_through(State& state, uint64_t number) {
  std::unique_lock lock(state.mutex);
  state.appended_changed.wait(lock, [&] { return state.appended >= number; });
  for (auto it = state.in_flight.rbegin(); it != state.in_flight.rend(); ++it)
    if (it->number <= number && !it->events.own.empty()) return it->events.own.back();
  return nullptr;
}

void ZeQueue::work(const std::shared_ptr<State>& state) {
  for (;;) {
    State::Pending p;
    {
      std::unique_lock lock(state->mutex);
      state->work_ready.wait(lock, [&] { return state->stopping || !state->fifo.empty(); });
      if (state->fifo.empty()) break;  // stopping, nothing left
      p = std::move(state->fifo.front());
      state->fifo.pop_front();
    }
    std::vector<SignalEvent> waits;
    for (const State::Waited& w : p.waits)
      if (SignalEvent e = signal_through(*w.queue, w.number)) waits.push_back(std::move(e));
    cl_int status = CL_SUCCESS;
    CommandStream::JobEvents events;
    if (state->device.lost()) {
      status = CL_OUT_OF_RESOURCES;
    } else {
      state->stream.begin(std::move(waits), p.job->profiling());
      ZeOps ops(state->device, state->stream);
      p.job->running();
      status = p.job->run(ops);
      try {
        events = state->stream.end();
      } catch (const Error& e) {
        if (status == CL_SUCCESS) status = e.code();
      }
    }
    // The device has the job: commands that list it may follow it there now (a refused one
    // fails them at its end instead).
    if (status == CL_SUCCESS) p.job->event().mark_accepted();
    {
      std::lock_guard lock(state->mutex);
      state->in_flight.push_back(
          {std::move(p.job), p.number, status, std::move(events), std::move(p.waits)});
      state->appended = p.number;
    }
    state->appended_changed.notify_all();
    state->in_flight_ready.notify_one();
  }
  {
    std::lock_guard lock(state->mutex);
    state->worker_done = true;
  }
  state->in_flight_ready.notify_one();
}

void ZeQueue::complete(const std::shared_ptr<State>& state) {
  const Api& api = state->device.api();
  for (;;) {
    State::InFlight* job;
    {
      std::unique_lock lock(state->mutex);
      state->in_flight_ready.wait(lock,
                                  [&] { return !state->in_flight.empty() || state->worker_done; });
      if (state->in_flight.empty()) return;  // the worker has ended: nothing more comes
      job = &state->in_flight.front();       // stays in place while the worker appends more
    }
    cl_int status = job->status;
    if (const std::vector<SignalEvent>& own = job->events.own; !own.empty()) {
      // In order: the job's last event signalled means all its commands have completed.
      const ze_result_t result = api.zeEventHostSynchronize(own.back()->handle, UINT64_MAX);
      if (result == ZE_RESULT_ERROR_DEVICE_LOST) state->device.mark_lost("zeEventHostSynchronize");
      if (result != ZE_RESULT_SUCCESS && status == CL_SUCCESS) status = CL_OUT_OF_RESOURCES;
      if (status == CL_SUCCESS && job->job->profiling())
        state->device.stamp_device_times(job->job->event(), *own.front(), *own.back());
    }
    State::InFlight done;
    {
      std::lock_guard lock(state->mutex);
      done = std::move(state->in_flight.front());
      state->in_flight.pop_front();
    }
    // Jobs submitted there before this one never wait for it: no cycle.
    uint64_t after = state->last_end;  // only this thread writes it
    for (const State::Waited& w : done.waited) {
      std::unique_lock lock(w.queue->mutex);
      w.queue->completed_changed.wait(lock, [&] { return w.queue->completed >= w.number; });
      after = std::max(after, w.queue->last_end);
    }
    const bool timed = done.job->profiling();
    if (timed) start_after(done.job->event(), after);
    done.job->finish(status == CL_SUCCESS ? CL_COMPLETE : status);
    {
      std::lock_guard lock(state->mutex);
      state->completed = done.number;
      if (timed) state->last_end = std::max(after, done.job->event().stamp(Event::kEnd));
    }
    state->completed_changed.notify_all();
  }
}

}  // namespace manifold::level_zero
