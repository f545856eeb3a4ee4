// The enqueueing of kernels: clEnqueueNDRangeKernel, clEnqueueTask and
// clEnqueueNDRangeKernelPartMFLD, planned by ndrange_operation (api/ndrange.h, local sizes chosen
// where the application gave none), and clEnqueueNativeKernel.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <variant>
#include <vector>

#include "api/common.h"
#include "api/impl.h"
#include "api/kernel_on_device.h"
#include "api/ndrange.h"
#include "core/info.h"
#include "core/kernel.h"
#include "core/memory.h"
#include "core/program.h"
#include "svm/svm_space.h"

namespace manifold::api::impl {
namespace {

// Largest divisor of `n` that is at most `cap`, among multiples of `step` when `step` > 1
// (0 when there is none).
size_t largest_divisor(size_t n, size_t cap, size_t step) {
  for (size_t d = cap - cap % step; d >= step; d -= step)
    if (n % d == 0) return d;
  return 0;
}

// The work-group size of one dimension when the application gave none. `cap` bounds it;
// `multiple` is the device's preferred multiple (dimension 0 only).
size_t pick_local(size_t global, size_t cap, size_t multiple, bool non_uniform) {
  if (global <= cap) return global;
  multiple = std::max<size_t>(1, std::min(multiple, cap));
  const size_t best_multiple = largest_divisor(global, cap, multiple);
  // A divisor keeps every group full; take it when it is not much smaller than the cap.
  if (best_multiple * 2 >= cap) return best_multiple;
  if (non_uniform) return cap - cap % multiple;  // the last group is partial
  const size_t best = largest_divisor(global, cap, 1);
  return std::max(best, best_multiple);
}

// Chooses local sizes for an NDRange whose local_work_size is NULL: a total near `target`
// items (fewer when the range is too small to give every compute unit a group), shaped along
// dimension 0 first and a multiple of the preferred multiple there.
void choose_local_size(const DeviceInfo& dev, size_t kernel_max, bool non_uniform, cl_uint dims,
                       const size_t* global, size_t* local) {
  size_t total = 1;
  for (cl_uint i = 0; i < dims; ++i)
    if (__builtin_mul_overflow(total, global[i], &total))
      total = std::numeric_limits<size_t>::max();
  size_t target = std::min<size_t>(kernel_max, 256);
  const size_t units = std::max<cl_uint>(dev.max_compute_units, 1);
  const size_t multiple = std::max<size_t>(dev.preferred_work_group_size_multiple, 1);
  // total / target < units, without a 64-bit division per step (this runs on every launch).
  while (target > multiple && total < units * target) target /= 2;
  size_t remaining = std::max<size_t>(target, 1);
  for (cl_uint i = 0; i < dims; ++i) {
    const size_t cap = std::max<size_t>(1, std::min(remaining, dev.max_work_item_sizes[i]));
    local[i] = pick_local(global[i], cap, i == 0 ? multiple : 1, non_uniform);
    remaining = std::max<size_t>(1, remaining / local[i]);
  }
}

// The work-groups of each dimension that a part of an NDRange runs
// (clEnqueueNDRangeKernelPartMFLD).
struct GroupPart {
  const size_t* first = nullptr;
  const size_t* count = nullptr;
};

// Makes `op` run `part` of its NDRange's work-groups. Throws CL_INVALID_VALUE for a part that
// does not lie inside them (an empty NDRange has none).
void restrict_to_part(Operation& op, cl_uint work_dim, const GroupPart& part) {
  auto* kernel_op = std::get_if<KernelOp>(&op);
  check(kernel_op != nullptr, CL_INVALID_VALUE, "a part of an NDRange without work-groups");
  compiler::NDRange& range = kernel_op->range;
  for (cl_uint d = 0; d < work_dim; ++d) {
    const size_t groups = range.num_groups(d);
    check(part.count[d] > 0, CL_INVALID_VALUE, "a group_count is 0");
    check(part.first[d] < groups && part.count[d] <= groups - part.first[d], CL_INVALID_VALUE,
          "a part lies outside the NDRange's work-groups");
    range.group_first[d] = part.first[d];
    range.group_count[d] = part.count[d];
  }
}

void enqueue_ndrange(cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
                     const size_t* global_work_offset, const size_t* global_work_size,
                     const size_t* local_work_size, cl_uint num_events_in_wait_list,
                     const cl_event* event_wait_list, cl_event* event,
                     const GroupPart* part = nullptr) {
  CommandQueue& q = *resolve<CommandQueue>(command_queue);
  Kernel& k = *resolve<Kernel>(kernel);
  // The spec: CL_INVALID_CONTEXT if context associated with command_queue and kernel are not
  // the same, or if the context of the queue and of events in event_wait_list differ.
  check(&k.program().context() == &q.context(), CL_INVALID_CONTEXT,
        "the kernel and the queue belong to different contexts");
  const std::vector<Event*> waits =
      resolve_wait_list(q.context(), num_events_in_wait_list, event_wait_list);
  if (part) {
    // A group would split the launch again, as if it were whole.
    check(q.device().runs_partial_ranges(), CL_INVALID_OPERATION,
          "the queue's device does not run parts of NDRanges");
    check(part->first && part->count, CL_INVALID_VALUE, "group_first or group_count is NULL");
    // The parts of one NDRange must agree on its work-groups: no local size chosen per part.
    check(local_work_size != nullptr, CL_INVALID_WORK_GROUP_SIZE,
          "a part of an NDRange needs local_work_size");
  }
  Operation op = ndrange_operation(q.device(), k, work_dim, global_work_offset, global_work_size,
                                   local_work_size, nullptr);
  if (part) restrict_to_part(op, work_dim, *part);
  if (auto* launch = std::get_if<KernelOp>(&op)) launch->printf_sink = q.printf_sink();
  submit_command(Command::make(q, CL_COMMAND_NDRANGE_KERNEL, std::move(op)), waits, event);
}

}  // namespace

Operation ndrange_operation(const Device& device, Kernel& k, cl_uint work_dim,
                            const size_t* global_work_offset, const size_t* global_work_size,
                            const size_t* local_work_size, std::shared_ptr<const KernelArgs> args) {
  const DeviceInfo& dev = device.info();
  // The spec: CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built program
  // executable available for device associated with command_queue.
  const KernelLaunchInfo* launch = launch_for(k, device);
  check(launch != nullptr && launch->loaded != nullptr, CL_INVALID_PROGRAM_EXECUTABLE,
        "the program has no executable for the queue's device");
  const compiler::KernelInfo& info = launch->info;
  // The spec: CL_INVALID_WORK_DIMENSION if work_dim is not a valid value (between 1 and
  // CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS).
  check(work_dim >= 1 && work_dim <= std::min<cl_uint>(dev.max_work_item_dimensions, 3),
        CL_INVALID_WORK_DIMENSION, "work_dim is out of range");

  // The spec: if global_work_size is NULL, or the value in any passed dimension is 0, the
  // kernel command trivially succeeds after its event dependencies are satisfied.
  bool empty = global_work_size == nullptr;
  for (cl_uint i = 0; !empty && i < work_dim; ++i) empty = global_work_size[i] == 0;

  const size_t size_max = device_size_max(dev);
  if (!empty) {
    for (cl_uint i = 0; i < work_dim; ++i) {
      // The spec: CL_INVALID_GLOBAL_WORK_SIZE if a value exceeds the maximum value
      // representable by size_t on the device.
      check(global_work_size[i] <= size_max, CL_INVALID_GLOBAL_WORK_SIZE,
            "a global work size exceeds the device's size_t");
      // The spec: CL_INVALID_GLOBAL_OFFSET if global_work_size + global_work_offset exceeds
      // that maximum in any dimension.
      if (global_work_offset)
        check(global_work_offset[i] <= size_max - global_work_size[i], CL_INVALID_GLOBAL_OFFSET,
              "global offset + global size exceeds the device's size_t");
    }
  }

  const size_t kernel_max = kernel_work_group_size(info, dev);
  const bool non_uniform = launch->non_uniform_groups;
  size_t local[3] = {1, 1, 1};
  if (local_work_size) {
    size_t items = 1;
    for (cl_uint i = 0; i < work_dim; ++i) {
      check(local_work_size[i] > 0, CL_INVALID_WORK_GROUP_SIZE, "a local work size is 0");
      // The spec: CL_INVALID_WORK_GROUP_SIZE if local_work_size does not match the required
      // work-group size for kernel in the program source.
      if (has_reqd_size(info))
        check(local_work_size[i] == info.reqd_work_group_size[i], CL_INVALID_WORK_GROUP_SIZE,
              "local_work_size differs from the kernel's reqd_work_group_size");
      // The spec: CL_INVALID_WORK_ITEM_SIZE if a local size is greater than the
      // corresponding CL_DEVICE_MAX_WORK_ITEM_SIZES value.
      check(local_work_size[i] <= dev.max_work_item_sizes[i], CL_INVALID_WORK_ITEM_SIZE,
            "a local work size exceeds CL_DEVICE_MAX_WORK_ITEM_SIZES");
      items *= local_work_size[i];
      local[i] = local_work_size[i];
    }
    if (has_reqd_size(info))
      for (cl_uint i = work_dim; i < 3; ++i)
        check(info.reqd_work_group_size[i] <= 1, CL_INVALID_WORK_GROUP_SIZE,
              "the kernel requires more dimensions than work_dim");
    // The spec: CL_INVALID_WORK_GROUP_SIZE if the total number of work-items in the
    // work-group is greater than CL_KERNEL_WORK_GROUP_SIZE.
    check(items <= kernel_max, CL_INVALID_WORK_GROUP_SIZE,
          "the work-group is larger than CL_KERNEL_WORK_GROUP_SIZE");
    // The spec: without non-uniform work-groups, global_work_size must be evenly divisible by
    // local_work_size.
    if (!empty && !non_uniform)
      for (cl_uint i = 0; i < work_dim; ++i)
        check(global_work_size[i] % local[i] == 0, CL_INVALID_WORK_GROUP_SIZE,
              "global_work_size is not a multiple of local_work_size (uniform work-groups)");
  } else if (has_reqd_size(info)) {
    for (cl_uint i = 0; i < work_dim; ++i) {
      local[i] = info.reqd_work_group_size[i];
      // The spec: CL_INVALID_WORK_GROUP_SIZE if the global size is not evenly divisible by
      // the required work-group size specified in the kernel source (uniform work-groups).
      if (!empty && !non_uniform)
        check(global_work_size[i] % local[i] == 0, CL_INVALID_WORK_GROUP_SIZE,
              "global_work_size is not a multiple of the kernel's reqd_work_group_size");
    }
  } else if (!empty) {
    choose_local_size(dev, kernel_max, non_uniform && !dev.partial_groups_launch_apart, work_dim,
                      global_work_size, local);
  }

  // The spec: CL_INVALID_KERNEL_ARGS if the kernel argument values have not been specified.
  if (!args) args = k.snapshot_args();
  uint64_t local_bytes = info.local_mem_size;
  cl_uint constant_args = 0;
  for (size_t i = 0; i < args->values.size(); ++i) {
    const KernelArgValue& a = args->values[i];
    const compiler::KernelArg& decl = info.args[i];
    local_bytes += a.local_size;
    if (a.buffer) {
      // The spec: CL_MISALIGNED_SUB_BUFFER_OFFSET if a sub-buffer's offset is not aligned to
      // CL_DEVICE_MEM_BASE_ADDR_ALIGN for the queue's device.
      if (a.buffer->parent())
        check(a.buffer->origin() % std::max<cl_uint>(dev.mem_base_addr_align / 8, 1) == 0,
              CL_MISALIGNED_SUB_BUFFER_OFFSET,
              "a sub-buffer argument is misaligned for the device");
      if (decl.address == CL_KERNEL_ARG_ADDRESS_CONSTANT)
        // Resources of the device: a __constant buffer fits CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE.
        check(a.buffer->size() <= dev.max_constant_buffer_size, CL_OUT_OF_RESOURCES,
              "a __constant buffer exceeds CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE");
    }
    if (decl.kind == compiler::ArgKind::Buffer && decl.address == CL_KERNEL_ARG_ADDRESS_CONSTANT)
      ++constant_args;
    // The spec: CL_INVALID_OPERATION if SVM pointers are passed as arguments to a kernel and
    // the device does not support SVM.
    if (a.svm_pointer)
      check(device_has_svm(dev), CL_INVALID_OPERATION, "an SVM argument on a device without SVM");
  }
  check(constant_args <= dev.max_constant_args, CL_OUT_OF_RESOURCES,
        "more __constant arguments than CL_DEVICE_MAX_CONSTANT_ARGS");
  // The spec: CL_OUT_OF_RESOURCES if the kernel needs more local memory than the device has.
  check(local_bytes <= dev.local_mem_size, CL_OUT_OF_RESOURCES,
        "the kernel needs more local memory than CL_DEVICE_LOCAL_MEM_SIZE");

  if (empty) return NoOp{};
  compiler::NDRange range;
  range.work_dim = work_dim;
  for (cl_uint i = 0; i < work_dim; ++i) {
    range.global_offset[i] = global_work_offset ? global_work_offset[i] : 0;
    range.global_size[i] = global_work_size[i];
    range.local_size[i] = local[i];
  }
  return KernelOp{std::move(args), launch, range};
}

// ---- Enqueueing ----

void clEnqueueNDRangeKernel(cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
                            const size_t* global_work_offset, const size_t* global_work_size,
                            const size_t* local_work_size, cl_uint num_events_in_wait_list,
                            const cl_event* event_wait_list, cl_event* event) {
  enqueue_ndrange(command_queue, kernel, work_dim, global_work_offset, global_work_size,
                  local_work_size, num_events_in_wait_list, event_wait_list, event);
}

void clEnqueueNDRangeKernelPartMFLD(cl_command_queue command_queue, cl_kernel kernel,
                                    cl_uint work_dim, const size_t* global_work_offset,
                                    const size_t* global_work_size, const size_t* local_work_size,
                                    const size_t* group_first, const size_t* group_count,
                                    cl_uint num_events_in_wait_list,
                                    const cl_event* event_wait_list, cl_event* event) {
  const GroupPart part{group_first, group_count};
  enqueue_ndrange(command_queue, kernel, work_dim, global_work_offset, global_work_size,
                  local_work_size, num_events_in_wait_list, event_wait_list, event, &part);
}

void clEnqueueTask(cl_command_queue command_queue, cl_kernel kernel,
                   cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                   cl_event* event) {
  // The spec (1.2): equivalent to clEnqueueNDRangeKernel with work_dim 1, global_work_offset
  // NULL, global_work_size[0] and local_work_size[0] set to 1.
  const size_t one = 1;
  enqueue_ndrange(command_queue, kernel, 1, nullptr, &one, &one, num_events_in_wait_list,
                  event_wait_list, event);
}

void clEnqueueNativeKernel(cl_command_queue command_queue, void(CL_CALLBACK* user_func)(void*),
                           void* args, size_t cb_args, cl_uint num_mem_objects,
                           const cl_mem* mem_list, const void** args_mem_loc,
                           cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                           cl_event* event) {
  CommandQueue& q = *resolve<CommandQueue>(command_queue);
  const std::vector<Event*> waits =
      resolve_wait_list(q.context(), num_events_in_wait_list, event_wait_list);
  // The spec: CL_INVALID_VALUE if user_func is NULL; if args is NULL and cb_args > 0 or
  // num_mem_objects > 0; if args is not NULL and cb_args is 0; if num_mem_objects > 0 and
  // mem_list or args_mem_loc are NULL; if num_mem_objects = 0 and mem_list or args_mem_loc
  // are not NULL.
  check(user_func != nullptr, CL_INVALID_VALUE, "user_func is NULL");
  check(args || (cb_args == 0 && num_mem_objects == 0), CL_INVALID_VALUE,
        "args is NULL but cb_args or num_mem_objects is not 0");
  check(!args || cb_args > 0, CL_INVALID_VALUE, "args is not NULL but cb_args is 0");
  if (num_mem_objects > 0)
    check(mem_list && args_mem_loc, CL_INVALID_VALUE, "mem_list or args_mem_loc is NULL");
  else
    check(!mem_list && !args_mem_loc, CL_INVALID_VALUE,
          "mem_list or args_mem_loc given with num_mem_objects 0");
  // The spec: CL_INVALID_OPERATION if the device associated with command_queue cannot execute
  // the native kernel (CL_EXEC_NATIVE_KERNEL).
  check(q.device().info().execution_capabilities & CL_EXEC_NATIVE_KERNEL, CL_INVALID_OPERATION,
        "the queue's device cannot run native kernels");

  NativeKernelOp op;
  op.fn = user_func;
  if (args) {
    const auto* bytes = static_cast<const std::byte*>(args);
    op.args.assign(bytes, bytes + cb_args);
  }
  const auto base = reinterpret_cast<uintptr_t>(args);
  for (cl_uint i = 0; i < num_mem_objects; ++i) {
    // Each location must lie inside the args block, with room for a pointer.
    const auto loc = reinterpret_cast<uintptr_t>(args_mem_loc[i]);
    check(loc >= base && cb_args >= sizeof(void*) && loc - base <= cb_args - sizeof(void*),
          CL_INVALID_VALUE, "an args_mem_loc entry lies outside args");
    const size_t offset = loc - base;
    if (!mem_list[i]) {
      // A NULL buffer becomes a NULL pointer.
      std::memset(op.args.data() + offset, 0, sizeof(void*));
      continue;
    }
    // The spec: CL_INVALID_MEM_OBJECT if one or more memory objects specified in mem_list are
    // not valid or are not buffer objects.
    MemObject& m = *resolve<MemObject>(mem_list[i]);
    check(m.type() == CL_MEM_OBJECT_BUFFER, CL_INVALID_MEM_OBJECT,
          "a mem_list entry is not a buffer");
    check(&m.context() == &q.context(), CL_INVALID_MEM_OBJECT,
          "a mem_list entry belongs to another context");
    op.mem_slots.emplace_back(Ref<MemObject>(&m), offset);
  }
  submit_command(Command::make(q, CL_COMMAND_NATIVE_KERNEL, std::move(op)), waits, event);
}

}  // namespace manifold::api::impl
