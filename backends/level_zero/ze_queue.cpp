#include "backends/level_zero/ze_queue.h"

#include <cstdint>
#include <cstring>

#include "backends/level_zero/ze_program.h"
#include "core/error.h"
#include "core/operations.h"

namespace manifold::level_zero {

ImmediateList::ImmediateList(LevelZeroDevice& device) : api_(device.api()) {
  ze_command_queue_desc_t queue_desc;
  queue_desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  ze_event_pool_desc_t pool_desc;
  pool_desc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
  pool_desc.count = 1;
  ze_device_handle_t handle = device.handle();
  ze_event_desc_t event_desc;
  event_desc.signal = event_desc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
  try {
    check_ze(api_.zeCommandListCreateImmediate(device.context(), handle, &queue_desc, &list_),
             CL_OUT_OF_RESOURCES, "zeCommandListCreateImmediate");
    check_ze(api_.zeEventPoolCreate(device.context(), &pool_desc, 1, &handle, &pool_),
             CL_OUT_OF_RESOURCES, "zeEventPoolCreate");
    check_ze(api_.zeEventCreate(pool_, &event_desc, &event_), CL_OUT_OF_RESOURCES, "zeEventCreate");
  } catch (...) {
    destroy();
    throw;
  }
}

ImmediateList::~ImmediateList() { destroy(); }

void ImmediateList::destroy() {
  if (event_) api_.zeEventDestroy(event_);
  if (pool_) api_.zeEventPoolDestroy(pool_);
  if (list_) api_.zeCommandListDestroy(list_);
  event_ = nullptr, pool_ = nullptr, list_ = nullptr;
}

void ImmediateList::finish(ze_result_t appended, const char* call) {
  check_ze(appended, CL_OUT_OF_RESOURCES, call);
  check_ze(api_.zeEventHostSynchronize(event_, UINT64_MAX), CL_OUT_OF_RESOURCES,
           "zeEventHostSynchronize");
  check_ze(api_.zeEventHostReset(event_), CL_OUT_OF_RESOURCES, "zeEventHostReset");
}

void ImmediateList::copy(void* dst, const void* src, size_t size) {
  if (!size) return;
  finish(api_.zeCommandListAppendMemoryCopy(list_, dst, src, size, event_, 0, nullptr),
         "zeCommandListAppendMemoryCopy");
}

void ImmediateList::fill(void* dst, const void* pattern, size_t pattern_size, size_t size) {
  if (!size) return;
  finish(api_.zeCommandListAppendMemoryFill(list_, dst, pattern, pattern_size, size, event_, 0,
                                            nullptr),
         "zeCommandListAppendMemoryFill");
}

void ImmediateList::launch(ze_kernel_handle_t kernel, const ze_group_count_t& groups,
                           std::unique_lock<std::mutex>& kernel_state) {
  const ze_result_t appended =
      api_.zeCommandListAppendLaunchKernel(list_, kernel, &groups, event_, 0, nullptr);
  kernel_state.unlock();
  finish(appended, "zeCommandListAppendLaunchKernel");
}

namespace {

// The device operations of one job, each complete before the next begins.
class ZeOps final : public DeviceOps {
 public:
  ZeOps(LevelZeroDevice& device, ImmediateList& list) : device_(device), list_(list) {}

  void transfer(const Transfer& t) override {
    MemObject& root = *t.root;
    std::byte* host = root.dma_host_data() + t.offset;
    DeviceBacking* source = t.source();
    auto* from = dynamic_cast<ZeBacking*>(source);
    const bool same_device = from && &from->device() == &device_;
    if (t.to == kHostPlace) {  // for a mapping
      if (same_device)
        list_.copy(host, static_cast<std::byte*>(from->pointer()) + t.offset, t.size);
      else if (source)
        source->read_to_host(host, t.offset, t.size);
      return;
    }
    std::byte* dst = static_cast<std::byte*>(device_.address(root)) + t.offset;
    if (same_device) {
      list_.copy(dst, static_cast<std::byte*>(from->pointer()) + t.offset, t.size);
      return;
    }
    if (source) source->read_to_host(host, t.offset, t.size);
    list_.copy(dst, host, t.size);
  }
  void copy(const CopyOp& op) override {
    if (!op.src.mem && !op.dst.mem)
      std::memmove(host_address(op.dst), host_address(op.src), op.size);
    else
      list_.copy(at(op.dst), at(op.src), op.size);
  }
  void copy_rect(const CopyRectOp& op) override {
    // One copy per row (no region copies yet).
    const Rect& r = op.rect;
    std::byte* dst = at(op.dst);
    const std::byte* src = at(op.src);
    for (size_t z = 0; z < r.region[2]; ++z)
      for (size_t y = 0; y < r.region[1]; ++y) {
        std::byte* d = dst + z * r.dst_slice_pitch + y * r.dst_row_pitch;
        const std::byte* s = src + z * r.src_slice_pitch + y * r.src_row_pitch;
        if (!op.src.mem && !op.dst.mem)
          std::memmove(d, s, r.region[0]);
        else
          list_.copy(d, s, r.region[0]);
      }
  }
  void fill(const FillOp& op) override {
    list_.fill(at(op.dst), op.pattern.data(), op.pattern_size, op.size);
  }
  // A mapping is the buffer's host memory: the transfer before it brought the bytes there.
  void map(const MapOp& op) override { device_.address(*op.mem); }
  void make_resident(MemObject& mem) override { device_.address(mem); }
  void launch(const KernelOp& op) override { launch_kernel(device_, list_, op); }
  void native_kernel(const NativeKernelOp&) override {
    fail(CL_INVALID_OPERATION, "native kernels do not run on Level Zero devices");
  }
  // Everything appended before has completed (each command is waited for).
  void host_function(const HostFunctionOp& op) override { op.fn(); }

 private:
  std::byte* at(const Location& l) {
    return l.mem ? static_cast<std::byte*>(device_.address(*l.mem)) + l.offset : host_address(l);
  }

  LevelZeroDevice& device_;
  ImmediateList& list_;
};

}  // namespace

ZeQueue::ZeQueue(LevelZeroDevice& device)
    : state_(std::make_shared<State>(device)), worker_([state = state_] { work(state); }) {}

ZeQueue::~ZeQueue() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_one();
  if (worker_.get_id() == std::this_thread::get_id())
    worker_.detach();
  else
    worker_.join();
}

void ZeQueue::submit(Ref<Job> job) {
  {
    std::lock_guard lock(state_->mutex);
    state_->fifo.push_back(std::move(job));
  }
  state_->wake.notify_one();
}

void ZeQueue::work(const std::shared_ptr<State>& state) {
  for (;;) {
    Ref<Job> job;
    {
      std::unique_lock lock(state->mutex);
      state->wake.wait(lock, [&] { return state->stopping || !state->fifo.empty(); });
      if (state->fifo.empty()) return;  // stopping, nothing left
      job = std::move(state->fifo.front());
      state->fifo.pop_front();
    }
    ZeOps ops(state->device, state->list);
    job->running();
    job->finish(job->run(ops));  // CL_SUCCESS is CL_COMPLETE
  }
}

}  // namespace manifold::level_zero
