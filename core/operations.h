// What a command does, as plain data: the scheduler plans and orders it, the shared executor
// (scheduler/command.cpp) hands each part to a backend's DeviceOps (core/backend.h).
// Memory operands keep their objects alive until the command is destroyed.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <variant>
#include <vector>

#include "compiler/compiler.h"
#include "core/kernel.h"
#include "core/memory.h"

namespace manifold {

// A place in memory: bytes of a memory object, or application host memory when `mem` is null.
struct Location {
  Ref<MemObject> mem;
  std::byte* host = nullptr;
  size_t offset = 0;
};

// Rectangular region: origins are folded into the locations' offsets.
struct Rect {
  std::array<size_t, 3> region{};  // bytes, rows, slices
  size_t src_row_pitch = 0, src_slice_pitch = 0, dst_row_pitch = 0, dst_slice_pitch = 0;

  // The bytes a side spans, from its first row's first byte to one past its last row (0 when the
  // region is empty).
  size_t src_span() const { return span(src_row_pitch, src_slice_pitch); }
  size_t dst_span() const { return span(dst_row_pitch, dst_slice_pitch); }

 private:
  size_t span(size_t row_pitch, size_t slice_pitch) const {
    if (region[0] == 0 || region[1] == 0 || region[2] == 0) return 0;
    return (region[2] - 1) * slice_pitch + (region[1] - 1) * row_pitch + region[0];
  }
};

struct NoOp {};  // markers, barriers, migrations on the CPU
struct CopyOp {
  Location src, dst;
  size_t size;
};
struct CopyRectOp {
  Location src, dst;
  Rect rect;
};
struct FillOp {
  Location dst;
  size_t size;
  std::array<std::byte, 128> pattern;
  size_t pattern_size;
};
struct MapOp {  // the data becomes visible at `mapped` (a pointer into the object on the CPU)
  Ref<MemObject> mem;
  size_t offset, size;
  cl_map_flags flags;
};
struct UnmapOp {
  Ref<MemObject> mem;
  void* mapped;
};
struct MigrateOp {
  std::vector<Ref<MemObject>> mems;
  cl_mem_migration_flags flags;
  // Per object, the bytes to move (offset, size); empty: every object whole (SVM migrations
  // name ranges of allocations).
  std::vector<std::pair<size_t, size_t>> ranges = {};
};
// Where a launch's printf output goes instead of the standard output: its queue's
// CL_QUEUE_PRINTF_CALLBACK_MFLD (none: the standard output).
struct PrintfSink {
  void(CL_CALLBACK* callback)(const char* text, size_t length, void* user_data) = nullptr;
  void* user_data = nullptr;
};
struct KernelOp {
  // Shared with other launches, read only; it holds the kernel, which holds `launch`.
  std::shared_ptr<const KernelArgs> args;
  const KernelLaunchInfo* launch;  // the kernel's, for the queue's device (or its parent)
  compiler::NDRange range;
  PrintfSink printf_sink = {};
  const LoadedProgram& program() const { return *launch->loaded; }
};
struct NativeKernelOp {
  void(CL_CALLBACK* fn)(void*);
  std::vector<std::byte> args;
  std::vector<std::pair<Ref<MemObject>, size_t>> mem_slots;  // (object, byte offset in args)
};
struct HostFunctionOp {  // e.g. clEnqueueSVMFree's callback
  std::function<void()> fn;
};
struct OperationList;
// Operations carried out in order by one command: a command buffer's recorded commands for one
// queue (cl_khr_command_buffer), made at finalize and shared, read only, by every enqueue.
struct SequenceOp {
  std::shared_ptr<const OperationList> list;
};

using Operation = std::variant<NoOp, CopyOp, CopyRectOp, FillOp, MapOp, UnmapOp, MigrateOp,
                               KernelOp, NativeKernelOp, HostFunctionOp, SequenceOp>;

// What backends made of one operation list natively (a CUDA graph per device), each made once,
// under `key` (the device), and dropped with the list. A list copied to change some operations
// (mutable dispatch) shares them: the backend brings what it made up to date with the new
// operations (`version` tells lists apart). Thread-safe.
class NativeRecordings {
 public:
  NativeRecordings() : version_(next_version()) {}
  NativeRecordings(const NativeRecordings& other) : version_(next_version()) {
    std::lock_guard lock(other.mutex_);
    entries_ = other.entries_;
  }
  NativeRecordings& operator=(const NativeRecordings&) = delete;
  uint64_t version() const { return version_; }
  template <class T>
  std::shared_ptr<T> get(const void* key) const {
    std::lock_guard lock(mutex_);
    for (const auto& [k, v] : entries_)
      if (k == key) return std::static_pointer_cast<T>(v);
    auto made = std::make_shared<T>();
    entries_.emplace_back(key, made);
    return made;
  }

 private:
  static uint64_t next_version() {
    static std::atomic<uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  const uint64_t version_;
  mutable std::mutex mutex_;
  mutable std::vector<std::pair<const void*, std::shared_ptr<void>>> entries_;
};

struct OperationList {
  std::vector<Operation> ops;
  // Per operation: the earlier operations of the list it must follow (its recorded sync points
  // and queue order). Running them in list order honours these; a backend that runs the list
  // as a graph makes them its edges, so that independent operations may overlap.
  std::vector<std::vector<uint32_t>> after;
  NativeRecordings native;
};

// One move of bytes into place `to` of a root buffer's range, planned by the scheduler
// (scheduler/migration.h) and carried out by the target device before the operation.
struct Transfer {
  Ref<MemObject> root;
  size_t offset = 0, size = 0;  // in the root buffer
  MemoryPlace to = kHostPlace;
  // Where the current bytes are. A device's backing there may not exist yet when the transfer is
  // planned (the command that writes it makes it when it runs); it does once the transfer runs.
  MemoryPlace from = kHostPlace;
  // The backing holding the current bytes; null: host memory.
  DeviceBacking* source() const { return from == kHostPlace ? nullptr : root->find_backing(from); }
};

// Resolves a location to host memory (CPU device, and host-side operands of GPU copies).
inline std::byte* host_address(const Location& l) {
  return (l.mem ? l.mem->host_data() : l.host) + l.offset;
}

}  // namespace manifold
