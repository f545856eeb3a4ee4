// Shared virtual memory entry points. Allocations come from the platform's one SVM range (svm/):
// the same address on the host and on every device of the context. Commands name SVM memory by
// pointer; each pointer resolves to its allocation (a memory object whose copies the scheduler
// keeps current, as for buffers) or, outside the range, to host memory (fine-grain system SVM on
// the CPU device).
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "api/common.h"
#include "api/impl.h"
#include "api/memory_commands.h"
#include "core/log.h"
#include "svm/svm_space.h"

namespace manifold::api::impl {
namespace {

bool device_has_svm(const DeviceInfo& info) { return info.svm_capabilities != 0; }

struct SvmTarget {
  CommandQueue& queue;
  std::vector<Event*> waits;
};

// Resolves the queue and checks that its device supports SVM. The 3.0 spec: CL_INVALID_OPERATION
// if the device associated with command_queue does not support SVM. The wait list is resolved
// after that check, so that the call is a no-op on devices without SVM whatever it is given.
CommandQueue& svm_queue(cl_command_queue command_queue) {
  CommandQueue& q = *resolve<CommandQueue>(command_queue);
  check(device_has_svm(q.device().info()), CL_INVALID_OPERATION,
        "the queue's device does not support shared virtual memory");
  return q;
}

std::vector<Event*> waits_of(CommandQueue& q, cl_uint n, const cl_event* list) {
  return resolve_wait_list(q.context(), n, list);
}

Location host_location(const void* p) {
  return {nullptr, static_cast<std::byte*>(const_cast<void*>(p)), 0};
}

// Where `size` bytes at `pointer` are: in an SVM allocation of the context (whose copies
// migrate), or host memory the application owns. An address inside the SVM range that is no
// allocation of this context has no bytes anywhere a command could reach: the spec leaves that
// undefined, Manifold refuses it.
Location svm_location(const Context& c, const void* pointer, size_t size, const char* what) {
  const SvmSpace* space = SvmSpace::get();
  if (!space || !space->contains(pointer)) return host_location(pointer);
  size_t offset = 0;
  Ref<MemObject> mem = space->find(pointer, &offset, &c);
  if (!mem)
    fail(CL_INVALID_VALUE,
         std::string(what) + " is in the SVM range but in no allocation of this context");
  if (size > mem->size() - offset)
    fail(CL_INVALID_VALUE,
         std::string(what) + " and the size run past the end of its SVM allocation");
  return {std::move(mem), nullptr, offset};
}

bool is_power_of_two(size_t n) { return n && (n & (n - 1)) == 0; }

}  // namespace

void* clSVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size, cl_uint alignment) {
  Context& c = *resolve<Context>(context);
  // The 3.0 spec: clSVMAlloc returns NULL if no devices in context support SVM.
  if (!c.any_device(device_has_svm)) return nullptr;
  SvmSpace* space = SvmSpace::get();
  if (!space) return nullptr;
  // The spec: clSVMAlloc fails if the flags are not valid, CL_MEM_SVM_ATOMICS is given without
  // CL_MEM_SVM_FINE_GRAIN_BUFFER, size is 0 or too large, or alignment is not a power of two.
  constexpr cl_svm_mem_flags access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
  constexpr cl_svm_mem_flags known = access | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS;
  if ((flags & ~known) != 0 || std::popcount(flags & access) > 1) return nullptr;
  if ((flags & CL_MEM_SVM_ATOMICS) && !(flags & CL_MEM_SVM_FINE_GRAIN_BUFFER)) return nullptr;
  if (size == 0 || (alignment != 0 && !is_power_of_two(alignment))) return nullptr;
  // The spec: ... if CL_MEM_SVM_FINE_GRAIN_BUFFER or CL_MEM_SVM_ATOMICS is specified in flags
  // and these are not supported by at least one device in context.
  const auto supports = [&](cl_device_svm_capabilities wanted) {
    for (const Ref<Device>& d : c.devices())
      if (d->info().svm_capabilities & wanted) return true;
    return false;
  };
  if ((flags & CL_MEM_SVM_FINE_GRAIN_BUFFER) && !supports(CL_DEVICE_SVM_FINE_GRAIN_BUFFER))
    return nullptr;
  if ((flags & CL_MEM_SVM_ATOMICS) && !supports(CL_DEVICE_SVM_ATOMICS)) return nullptr;
  // The spec: ... if size is greater than CL_DEVICE_MAX_MEM_ALLOC_SIZE for any device in context.
  for (const Ref<Device>& d : c.devices())
    if (size > d->info().max_mem_alloc_size) return nullptr;
  // The spec: alignment 0 means the size of the largest data type supported (long16: 128 bytes).
  constexpr cl_uint kLargestType = 128;
  constexpr size_t kLargestAlignment = size_t{1} << 30;
  if (alignment > kLargestAlignment) return nullptr;
  try {
    Ref<MemObject> mem = space->allocate(c, flags, size, alignment ? alignment : kLargestType);
    return mem->host_data();
  } catch (const Error& e) {
    log_debug("clSVMAlloc of %zu bytes: %s", size, e.what());
    return nullptr;
  }
}

void clSVMFree(cl_context context, void* svm_pointer) {
  Context& c = *resolve<Context>(context);
  // The spec: if a NULL pointer is passed in svm_pointer, no action occurs. Freeing memory that
  // clSVMAlloc did not return (or twice) is undefined: Manifold logs it and does nothing.
  if (!svm_pointer) return;
  SvmSpace* space = SvmSpace::get();
  if (!space || !space->free(c, svm_pointer))
    log_debug("clSVMFree: %p is not an allocation of clSVMAlloc in this context", svm_pointer);
}

void clEnqueueSVMFree(cl_command_queue command_queue, cl_uint num_svm_pointers,
                      void* svm_pointers[],
                      void(CL_CALLBACK* pfn_free_func)(cl_command_queue, cl_uint, void*[], void*),
                      void* user_data, cl_uint num_events_in_wait_list,
                      const cl_event* event_wait_list, cl_event* event) {
  CommandQueue& q = svm_queue(command_queue);
  // The spec: CL_INVALID_VALUE if num_svm_pointers is 0 and svm_pointers is non-NULL, or if
  // svm_pointers is NULL and num_svm_pointers is not 0.
  check((num_svm_pointers == 0) == (svm_pointers == nullptr), CL_INVALID_VALUE,
        "num_svm_pointers and svm_pointers disagree");
  const std::vector<Event*> waits = waits_of(q, num_events_in_wait_list, event_wait_list);
  // The list may be reused after the call returns: the command keeps its own copy.
  std::vector<void*> pointers(svm_pointers, svm_pointers + num_svm_pointers);
  // The seed: if pfn_free_func is NULL, all pointers must be allocated using clSVMAlloc (no
  // error code is given for others: clSVMFree logs and skips them when the command runs).
  cl_context context = q.context().handle();
  cl_command_queue queue = q.handle();
  HostFunctionOp op{[pointers, pfn_free_func, user_data, context, queue]() mutable {
    if (pfn_free_func)
      pfn_free_func(queue, static_cast<cl_uint>(pointers.size()), pointers.data(), user_data);
    else
      for (void* p : pointers) impl::clSVMFree(context, p);
  }};
  submit_command(Command::make(q, CL_COMMAND_SVM_FREE, std::move(op)), waits, event);
}

MemoryCommand svm_memcpy_command(CommandQueue& q, void* dst_ptr, const void* src_ptr, size_t size) {
  check(device_has_svm(q.device().info()), CL_INVALID_OPERATION,
        "the queue's device does not support shared virtual memory");
  // The spec: CL_INVALID_VALUE if dst_ptr or src_ptr are NULL.
  check(dst_ptr != nullptr && src_ptr != nullptr, CL_INVALID_VALUE, "dst_ptr or src_ptr is NULL");
  // The spec: CL_MEM_COPY_OVERLAP if the values specified for dst_ptr, src_ptr and size result
  // in an overlapping copy.
  const auto d = reinterpret_cast<uintptr_t>(dst_ptr);
  const auto s = reinterpret_cast<uintptr_t>(src_ptr);
  check(size == 0 || d >= s + size || s >= d + size, CL_MEM_COPY_OVERLAP, "the regions overlap");
  const Context& c = q.context();
  return {CL_COMMAND_SVM_MEMCPY, CopyOp{svm_location(c, src_ptr, size, "src_ptr"),
                                        svm_location(c, dst_ptr, size, "dst_ptr"), size}};
}

MemoryCommand svm_fill_command(CommandQueue& q, void* svm_ptr, const void* pattern,
                               size_t pattern_size, size_t size) {
  check(device_has_svm(q.device().info()), CL_INVALID_OPERATION,
        "the queue's device does not support shared virtual memory");
  // The spec: CL_INVALID_VALUE if svm_ptr is NULL; if pattern is NULL or pattern_size is not
  // one of {1, 2, 4, ..., 128}; if svm_ptr is not aligned to pattern_size bytes; if size is
  // not a multiple of pattern_size.
  check(svm_ptr != nullptr, CL_INVALID_VALUE, "svm_ptr is NULL");
  check(pattern != nullptr, CL_INVALID_VALUE, "pattern is NULL");
  check(is_power_of_two(pattern_size) && pattern_size <= 128, CL_INVALID_VALUE,
        "pattern_size is not a power of two up to 128");
  check(reinterpret_cast<uintptr_t>(svm_ptr) % pattern_size == 0, CL_INVALID_VALUE,
        "svm_ptr is not aligned to pattern_size");
  check(size % pattern_size == 0, CL_INVALID_VALUE, "size is not a multiple of pattern_size");
  FillOp op{svm_location(q.context(), svm_ptr, size, "svm_ptr"), size, {}, pattern_size};
  std::memcpy(op.pattern.data(), pattern, pattern_size);
  return {CL_COMMAND_SVM_MEMFILL, std::move(op)};
}

void clEnqueueSVMMemcpy(cl_command_queue command_queue, cl_bool blocking_copy, void* dst_ptr,
                        const void* src_ptr, size_t size, cl_uint num_events_in_wait_list,
                        const cl_event* event_wait_list, cl_event* event) {
  CommandQueue& q = svm_queue(command_queue);
  const std::vector<Event*> waits = waits_of(q, num_events_in_wait_list, event_wait_list);
  MemoryCommand c = svm_memcpy_command(q, dst_ptr, src_ptr, size);
  submit_command(Command::make(q, c.type, std::move(c.op)), waits, event, blocking_copy);
}

void clEnqueueSVMMemFill(cl_command_queue command_queue, void* svm_ptr, const void* pattern,
                         size_t pattern_size, size_t size, cl_uint num_events_in_wait_list,
                         const cl_event* event_wait_list, cl_event* event) {
  CommandQueue& q = svm_queue(command_queue);
  const std::vector<Event*> waits = waits_of(q, num_events_in_wait_list, event_wait_list);
  MemoryCommand c = svm_fill_command(q, svm_ptr, pattern, pattern_size, size);
  submit_command(Command::make(q, c.type, std::move(c.op)), waits, event);
}

void clEnqueueSVMMap(cl_command_queue command_queue, cl_bool blocking_map, cl_map_flags flags,
                     void* svm_ptr, size_t size, cl_uint num_events_in_wait_list,
                     const cl_event* event_wait_list, cl_event* event) {
  CommandQueue& q = svm_queue(command_queue);
  const std::vector<Event*> waits = waits_of(q, num_events_in_wait_list, event_wait_list);
  // The spec: CL_INVALID_VALUE if svm_ptr is NULL, if size is 0 or if values specified in
  // map_flags are not valid (CL_MAP_WRITE_INVALIDATE_REGION excludes the other two).
  check(svm_ptr != nullptr, CL_INVALID_VALUE, "svm_ptr is NULL");
  check(size > 0, CL_INVALID_VALUE, "size is 0");
  constexpr cl_map_flags known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
  check((flags & ~known) == 0, CL_INVALID_VALUE, "unknown map flags");
  check(!((flags & CL_MAP_WRITE_INVALIDATE_REGION) && (flags & (CL_MAP_READ | CL_MAP_WRITE))),
        CL_INVALID_VALUE, "CL_MAP_WRITE_INVALIDATE_REGION with CL_MAP_READ or CL_MAP_WRITE");
  // The host's pages at svm_ptr become current (a coarse-grain allocation last written by a
  // GPU moves back); host memory outside allocations is there already.
  Location l = svm_location(q.context(), svm_ptr, size, "svm_ptr");
  Operation op = NoOp{};
  if (l.mem) op = MapOp{l.mem, l.offset, size, flags};
  submit_command(Command::make(q, CL_COMMAND_SVM_MAP, std::move(op)), waits, event, blocking_map);
}

void clEnqueueSVMUnmap(cl_command_queue command_queue, void* svm_ptr,
                       cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                       cl_event* event) {
  CommandQueue& q = svm_queue(command_queue);
  const std::vector<Event*> waits = waits_of(q, num_events_in_wait_list, event_wait_list);
  // The spec: CL_INVALID_VALUE if svm_ptr is NULL.
  check(svm_ptr != nullptr, CL_INVALID_VALUE, "svm_ptr is NULL");
  submit_command(Command::make(q, CL_COMMAND_SVM_UNMAP, NoOp{}), waits, event);
}

void clEnqueueSVMMigrateMem(cl_command_queue command_queue, cl_uint num_svm_pointers,
                            const void** svm_pointers, const size_t* sizes,
                            cl_mem_migration_flags flags, cl_uint num_events_in_wait_list,
                            const cl_event* event_wait_list, cl_event* event) {
  CommandQueue& q = svm_queue(command_queue);
  const std::vector<Event*> waits = waits_of(q, num_events_in_wait_list, event_wait_list);
  // The spec: CL_INVALID_VALUE if num_svm_pointers is zero or svm_pointers is NULL, or if
  // flags holds bits other than the migration flags.
  check(num_svm_pointers > 0 && svm_pointers != nullptr, CL_INVALID_VALUE,
        "num_svm_pointers is 0 or svm_pointers is NULL");
  constexpr cl_mem_migration_flags known =
      CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED;
  check((flags & ~known) == 0, CL_INVALID_VALUE, "unknown migration flags");
  MigrateOp op{{}, flags};
  for (cl_uint i = 0; i < num_svm_pointers; ++i) {
    check(svm_pointers[i] != nullptr, CL_INVALID_VALUE, "an SVM pointer is NULL");
    // The spec: a size of 0 migrates the whole allocation from the pointer on.
    const size_t size = sizes ? sizes[i] : 0;
    Location l = svm_location(q.context(), svm_pointers[i], size, "an SVM pointer");
    if (!l.mem) continue;  // host memory: where every device reads it already
    const size_t n = size ? size : l.mem->size() - l.offset;
    op.mems.push_back(l.mem);
    op.ranges.emplace_back(l.offset, n);
  }
  submit_command(Command::make(q, CL_COMMAND_SVM_MIGRATE_MEM, std::move(op)), waits, event);
}

}  // namespace manifold::api::impl
