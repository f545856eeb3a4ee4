// Transfers between pageable host memory and a GPU, written once for every vendor API with
// streams, events and page-locked memory (CUDA and HIP); the vendor calls live in `Api`.
//
// A GPU's DMA engines read and write only page-locked host memory; from pageable memory a
// driver copies through a staging buffer of its own, one memcpy on one thread, far below what
// the link carries. Manifold does better with one of (MANIFOLD_GPU_STAGING):
//   chunks (default): a ring of pinned chunks (MANIFOLD_GPU_STAGING_SLOTS, default 4, of
//     MANIFOLD_GPU_STAGING_CHUNK_MB, default 8 MiB). Host to device: the host copies chunk k+1
//     into a free slot while the DMA engine moves chunk k; device to host: the DMA fills slots
//     ahead while the host copies landed ones out. The host copies are split over several
//     threads (MANIFOLD_GPU_STAGING_THREADS, default min(8, cores / 2)): one core's memcpy is
//     the bottleneck, the link is not.
//   register: page-locks the application's range for the copy (cuMemHostRegister), DMAs
//     straight from or into it, unlocks it; copies below 32 MiB, and ranges that cannot be
//     locked, use chunks.
//   off: the driver's own path (one cuMemcpy*Async call).
// Copies below 256 KiB always take the driver's path: one small memcpy costs less than the
// synchronization a pipeline needs.
//
// The calling thread returns once the host side is done: host to device, when the last chunk
// is in pinned memory (the DMA may still run; later work in the stream is ordered after it);
// device to host, when the bytes are in the destination (the stream is synchronized up to the
// copy). Thread: the queue's submitting thread; one transfer at a time per device.
//
// Api must provide (all static), besides stream_queue.h's:
//   using DevicePtr;
//   void* alloc_pinned(Device&, size_t);  void free_pinned(Device&, void*);   // null: failed
//   bool register_host(Device&, void*, size_t);  void unregister_host(Device&, void*);
//   cl_int copy_to_device_async(DevicePtr dst, const void* src, size_t, Stream);
//   cl_int copy_to_host_async(void* dst, DevicePtr src, size_t, Stream);
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include <CL/cl.h>

#include "settings/settings.h"

namespace manifold::gpu {

// memcpy split over a few threads for large copies. The pool is process-wide (shared by every
// GPU) and lazily started; idle threads sleep.
class ParallelCopy {
 public:
  static ParallelCopy& instance() {
    static ParallelCopy* pool = new ParallelCopy;  // never destroyed: threads may outlive main
    return *pool;
  }

  // Copies n bytes; returns when all of them are there.
  void copy(void* dst, const void* src, size_t n) {
    constexpr size_t kMinPiece = 1 << 20;
    const size_t pieces = std::min<size_t>(threads_ + 1, std::max<size_t>(1, n / kMinPiece));
    if (pieces <= 1) {
      std::memcpy(dst, src, n);
      return;
    }
    // Pieces of whole cache lines; the caller copies the first one itself.
    const size_t piece = (n / pieces + 63) & ~size_t{63};
    auto* d = static_cast<std::byte*>(dst);
    auto* s = static_cast<const std::byte*>(src);
    std::unique_lock job_lock(job_mutex_);  // one job at a time: pieces of two would interleave
    {
      std::lock_guard lock(mutex_);
      tasks_.clear();
      for (size_t offset = piece; offset < n; offset += piece)
        tasks_.push_back({d + offset, s + offset, std::min(piece, n - offset)});
      next_ = 0;
      remaining_.store(tasks_.size(), std::memory_order_relaxed);
      ++generation_;
    }
    work_.notify_all();
    std::memcpy(d, s, std::min(piece, n));
    run_tasks();  // help with what the workers have not taken yet
    size_t left = remaining_.load(std::memory_order_acquire);
    while (left != 0) {
      remaining_.wait(left, std::memory_order_acquire);
      left = remaining_.load(std::memory_order_acquire);
    }
  }

  unsigned threads() const { return threads_; }

 private:
  struct Task {
    std::byte* dst;
    const std::byte* src;
    size_t size;
  };

  ParallelCopy() {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const unsigned chosen = settings().staging.threads;
    const unsigned total = chosen ? chosen : std::clamp(cores / 2, 1u, 8u);
    threads_ = total - 1;  // the calling thread copies too
    for (unsigned i = 0; i < threads_; ++i) std::thread([this] { worker(); }).detach();
  }

  // Takes and runs tasks of the current job until none is left to take.
  void run_tasks() {
    for (;;) {
      Task task;
      {
        std::lock_guard lock(mutex_);
        if (next_ >= tasks_.size()) return;
        task = tasks_[next_++];
      }
      std::memcpy(task.dst, task.src, task.size);
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) remaining_.notify_all();
    }
  }

  void worker() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        work_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
      }
      run_tasks();
    }
  }

  unsigned threads_ = 0;
  std::mutex job_mutex_;
  std::mutex mutex_;  // guards tasks_, next_, generation_
  std::condition_variable work_;
  std::vector<Task> tasks_;
  size_t next_ = 0;
  uint64_t generation_ = 0;
  std::atomic<size_t> remaining_{0};
};

template <class Api>
class Staging {
  using Device = typename Api::Device;
  using Stream = typename Api::Stream;
  using GpuEvent = typename Api::Event;
  using DevicePtr = typename Api::DevicePtr;

 public:
  using Mode = StagingSettings::Mode;

  explicit Staging(Device& device, const StagingSettings& config = settings().staging)
      : device_(device), mode_(config.mode), slots_(config.slots), chunk_(config.chunk_bytes) {}
  ~Staging() {
    // Devices live for the process; the driver may already be gone at exit: free nothing then.
  }

  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  static constexpr size_t kDirectLimit = 256 << 10;
  static constexpr size_t kRegisterMin = 32 << 20;

  // Whether a copy of `size` bytes from or to pageable memory goes through this class (else the
  // caller hands it to the driver directly).
  bool wants(size_t size) const { return mode_ != Mode::Off && size > kDirectLimit; }

  cl_int to_device(DevicePtr dst, const void* src, size_t size, Stream stream) {
    std::lock_guard lock(mutex_);
    if (mode_ == Mode::Register && size >= kRegisterMin) {
      void* host = const_cast<void*>(src);
      if (Api::register_host(device_, host, size)) {
        cl_int status = Api::copy_to_device_async(dst, src, size, stream);
        // The range must stay locked until the DMA has read it.
        if (status == CL_SUCCESS) status = wait_for_stream(stream);
        Api::unregister_host(device_, host);
        return status;
      }
    }
    if (!ensure_slots()) return Api::copy_to_device_async(dst, src, size, stream);
    const auto* bytes = static_cast<const std::byte*>(src);
    for (size_t done = 0; done < size; done += chunk_) {
      Slot& slot = slots_data_[next_slot_];
      next_slot_ = (next_slot_ + 1) % slots_;
      const size_t n = std::min(chunk_, size - done);
      if (slot.busy) {
        if (cl_int status = Api::synchronize_event(slot.done); status != CL_SUCCESS) return status;
      }
      ParallelCopy::instance().copy(slot.memory, bytes + done, n);
      if (cl_int status = Api::copy_to_device_async(dst + done, slot.memory, n, stream);
          status != CL_SUCCESS)
        return status;
      Api::record(slot.done, stream);
      slot.busy = true;
    }
    return CL_SUCCESS;
  }

  cl_int to_host(void* dst, DevicePtr src, size_t size, Stream stream) {
    std::lock_guard lock(mutex_);
    if (mode_ == Mode::Register && size >= kRegisterMin) {
      if (Api::register_host(device_, dst, size)) {
        cl_int status = Api::copy_to_host_async(dst, src, size, stream);
        if (status == CL_SUCCESS) status = wait_for_stream(stream);
        Api::unregister_host(device_, dst);
        return status;
      }
    }
    if (!ensure_slots()) return Api::copy_to_host_async(dst, src, size, stream);
    // The DMA fills up to slots_ chunks ahead; each is copied out as soon as it has landed.
    auto* bytes = static_cast<std::byte*>(dst);
    const size_t chunks = (size + chunk_ - 1) / chunk_;
    auto slot_of = [&](size_t chunk) -> Slot& { return slots_data_[chunk % slots_]; };
    auto issue = [&](size_t chunk) {
      const size_t offset = chunk * chunk_;
      Slot& slot = slot_of(chunk);
      if (cl_int status = Api::copy_to_host_async(slot.memory, src + offset,
                                                  std::min(chunk_, size - offset), stream);
          status != CL_SUCCESS)
        return status;
      Api::record(slot.done, stream);
      slot.busy = true;
      return CL_SUCCESS;
    };
    // Slots an earlier host-to-device copy still reads are reused only after that DMA, which
    // the stream orders before these: the events recorded here come later in the same stream
    // or, for another queue's stream, are waited for first.
    for (size_t i = 0; i < slots_; ++i)
      if (slots_data_[i].busy) {
        if (cl_int status = Api::synchronize_event(slots_data_[i].done); status != CL_SUCCESS)
          return status;
        slots_data_[i].busy = false;
      }
    size_t issued = 0;
    for (; issued < std::min(chunks, slots_); ++issued)
      if (cl_int status = issue(issued); status != CL_SUCCESS) return status;
    for (size_t chunk = 0; chunk < chunks; ++chunk) {
      Slot& slot = slot_of(chunk);
      if (cl_int status = Api::synchronize_event(slot.done); status != CL_SUCCESS) return status;
      slot.busy = false;
      const size_t offset = chunk * chunk_;
      ParallelCopy::instance().copy(bytes + offset, slot.memory, std::min(chunk_, size - offset));
      if (issued < chunks) {
        if (cl_int status = issue(issued++); status != CL_SUCCESS) return status;
      }
    }
    next_slot_ = chunks % slots_;
    return CL_SUCCESS;
  }

  Mode mode() const { return mode_; }

 private:
  struct Slot {
    void* memory = nullptr;
    GpuEvent done{};
    bool busy = false;  // `done` was recorded after a DMA that uses the slot
  };

  bool ensure_slots() {
    if (ready_) return true;
    if (failed_) return false;
    Api::make_current(device_);
    std::vector<Slot> slots(slots_);
    for (Slot& slot : slots) {
      slot.memory = Api::alloc_pinned(device_, chunk_);
      if (!slot.memory) {
        for (Slot& s : slots)
          if (s.memory) Api::free_pinned(device_, s.memory);
        failed_ = true;  // no pinned memory to spare: the driver's own path from now on
        return false;
      }
      slot.done = Api::create_event(device_, false, false);
    }
    slots_data_ = std::move(slots);
    ready_ = true;
    return true;
  }

  cl_int wait_for_stream(Stream stream) {
    if (!sync_event_) sync_event_ = Api::create_event(device_, false, false);
    Api::record(sync_event_, stream);
    return Api::synchronize_event(sync_event_);
  }

  Device& device_;
  Mode mode_ = Mode::Chunks;
  size_t slots_ = 4, chunk_ = size_t{8} << 20;
  std::mutex mutex_;
  std::vector<Slot> slots_data_;
  size_t next_slot_ = 0;
  GpuEvent sync_event_{};
  bool ready_ = false, failed_ = false;
};

}  // namespace manifold::gpu
