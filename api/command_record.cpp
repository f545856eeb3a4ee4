// Recording commands into a command buffer (cl_khr_command_buffer 0.9.8): barriers, buffer and
// image copies and fills, SVM copies and fills, ND-range kernels. Each returns the errors of its
// clEnqueue* function (api/memory_commands.h, api/ndrange.h) with the replacements the extension
// gives: the queue, the context and the sync-point wait list are the command buffer's.
#include <algorithm>

#include "api/common.h"
#include "api/impl.h"
#include "api/memory_commands.h"
#include "api/ndrange.h"
#include "core/device.h"
#include "scheduler/command_buffer.h"

namespace manifold::api::impl {
namespace {

// What every recording entry point resolves first.
struct RecordTarget {
  CommandBuffer& buffer;
  uint32_t queue_index;
  CommandQueue& queue;
  std::span<const cl_sync_point_khr> waits;
};

RecordTarget prepare(cl_command_buffer_khr command_buffer, cl_command_queue command_queue,
                     cl_uint num_sync_points_in_wait_list,
                     const cl_sync_point_khr* sync_point_wait_list) {
  // The spec: CL_INVALID_COMMAND_BUFFER_KHR if command_buffer is not a valid command-buffer.
  CommandBuffer& cb = *resolve<CommandBuffer>(command_buffer);
  uint32_t index = 0;
  if (!command_queue) {
    // The spec (multi_device): CL_INVALID_COMMAND_QUEUE if command_queue is NULL and
    // command_buffer was created with more than one queue.
    check(cb.queues().size() == 1, CL_INVALID_COMMAND_QUEUE,
          "command_queue is NULL but the command-buffer has several queues");
  } else {
    CommandQueue& q = *resolve<CommandQueue>(command_queue);
    // The spec (multi_device): CL_INVALID_CONTEXT if command_queue is not NULL, and the
    // context associated with command_queue and command_buffer is not the same.
    check(&q.context() == &cb.context(), CL_INVALID_CONTEXT,
          "the queue belongs to another context than the command-buffer's");
    // The spec (multi_device): CL_INVALID_COMMAND_QUEUE if command_queue is not NULL and not a
    // command-queue listed on command_buffer creation.
    const std::optional<uint32_t> found = cb.queue_index(q);
    check(found.has_value(), CL_INVALID_COMMAND_QUEUE,
          "the queue is not one the command-buffer was created with");
    index = *found;
  }
  // The spec: CL_INVALID_OPERATION if command_buffer has been finalized.
  check(!cb.finalized(), CL_INVALID_OPERATION, "the command-buffer is finalized");
  // The spec: CL_INVALID_SYNC_POINT_WAIT_LIST_KHR if sync_point_wait_list is NULL and
  // num_sync_points_in_wait_list is > 0, or sync_point_wait_list is not NULL and
  // num_sync_points_in_wait_list is 0, or if synchronization-point objects in
  // sync_point_wait_list are not valid synchronization-points.
  check((sync_point_wait_list == nullptr) == (num_sync_points_in_wait_list == 0),
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR, "the sync-point wait list and its size disagree");
  std::span<const cl_sync_point_khr> waits(sync_point_wait_list, num_sync_points_in_wait_list);
  for (cl_sync_point_khr p : waits)
    check(cb.valid_sync_point(p), CL_INVALID_SYNC_POINT_WAIT_LIST_KHR,
          "a sync point of a command not recorded in this command-buffer");
  return {cb, index, *cb.queues()[index], waits};
}

// Commands other than ND-ranges: the extension defines no properties for them and gives them
// no mutable handle.
void check_plain(const cl_command_properties_khr* properties,
                 cl_mutable_command_khr* mutable_handle) {
  // The spec: CL_INVALID_VALUE if values specified in properties are not valid.
  check(properties == nullptr || properties[0] == 0, CL_INVALID_VALUE,
        "this command takes no properties");
  // The spec: CL_INVALID_VALUE if mutable_handle is not NULL.
  check(mutable_handle == nullptr, CL_INVALID_VALUE, "this command has no mutable handle");
}

void record(RecordTarget& t, MemoryCommand c, cl_sync_point_khr* sync_point) {
  const auto p = t.buffer.record(t.queue_index, c.type, std::move(c.op), t.waits);
  if (sync_point) *sync_point = p;
}

}  // namespace

void clCommandBarrierWithWaitListKHR(cl_command_buffer_khr command_buffer,
                                     cl_command_queue command_queue,
                                     const cl_command_properties_khr* properties,
                                     cl_uint num_sync_points_in_wait_list,
                                     const cl_sync_point_khr* sync_point_wait_list,
                                     cl_sync_point_khr* sync_point,
                                     cl_mutable_command_khr* mutable_handle) {
  RecordTarget t =
      prepare(command_buffer, command_queue, num_sync_points_in_wait_list, sync_point_wait_list);
  check_plain(properties, mutable_handle);
  const auto p =
      t.buffer.record(t.queue_index, CL_COMMAND_BARRIER, NoOp{}, t.waits, /*barrier=*/true);
  if (sync_point) *sync_point = p;
}

void clCommandCopyBufferKHR(cl_command_buffer_khr command_buffer, cl_command_queue command_queue,
                            const cl_command_properties_khr* properties, cl_mem src_buffer,
                            cl_mem dst_buffer, size_t src_offset, size_t dst_offset, size_t size,
                            cl_uint num_sync_points_in_wait_list,
                            const cl_sync_point_khr* sync_point_wait_list,
                            cl_sync_point_khr* sync_point, cl_mutable_command_khr* mutable_handle) {
  RecordTarget t =
      prepare(command_buffer, command_queue, num_sync_points_in_wait_list, sync_point_wait_list);
  check_plain(properties, mutable_handle);
  record(t, copy_buffer_command(t.queue, src_buffer, dst_buffer, src_offset, dst_offset, size),
         sync_point);
}

void clCommandCopyBufferRectKHR(
    cl_command_buffer_khr command_buffer, cl_command_queue command_queue,
    const cl_command_properties_khr* properties, cl_mem src_buffer, cl_mem dst_buffer,
    const size_t* src_origin, const size_t* dst_origin, const size_t* region, size_t src_row_pitch,
    size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
    cl_uint num_sync_points_in_wait_list, const cl_sync_point_khr* sync_point_wait_list,
    cl_sync_point_khr* sync_point, cl_mutable_command_khr* mutable_handle) {
  RecordTarget t =
      prepare(command_buffer, command_queue, num_sync_points_in_wait_list, sync_point_wait_list);
  check_plain(properties, mutable_handle);
  record(t,
         copy_buffer_rect_command(t.queue, src_buffer, dst_buffer, src_origin, dst_origin, region,
                                  src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch),
         sync_point);
}

void clCommandCopyBufferToImageKHR(cl_command_buffer_khr command_buffer,
                                   cl_command_queue command_queue,
                                   const cl_command_properties_khr* properties, cl_mem src_buffer,
                                   cl_mem dst_image, size_t src_offset, const size_t* dst_origin,
                                   const size_t* region, cl_uint num_sync_points_in_wait_list,
                                   const cl_sync_point_khr* sync_point_wait_list,
                                   cl_sync_point_khr* sync_point,
                                   cl_mutable_command_khr* mutable_handle) {
  RecordTarget t =
      prepare(command_buffer, command_queue, num_sync_points_in_wait_list, sync_point_wait_list);
  check_plain(properties, mutable_handle);
  record(
      t,
      copy_buffer_to_image_command(t.queue, src_buffer, dst_image, src_offset, dst_origin, region),
      sync_point);
}

void clCommandCopyImageKHR(cl_command_buffer_khr command_buffer, cl_command_queue command_queue,
                           const cl_command_properties_khr* properties, cl_mem src_image,
                           cl_mem dst_image, const size_t* src_origin, const size_t* dst_origin,
                           const size_t* region, cl_uint num_sync_points_in_wait_list,
                           const cl_sync_point_khr* sync_point_wait_list,
                           cl_sync_point_khr* sync_point, cl_mutable_command_khr* mutable_handle) {
  RecordTarget t =
      prepare(command_buffer, command_queue, num_sync_points_in_wait_list, sync_point_wait_list);
  check_plain(properties, mutable_handle);
  record(t, copy_image_command(t.queue, src_image, dst_image, src_origin, dst_origin, region),
         sync_point);
}

void clCommandCopyImageToBufferKHR(
    cl_command_buffer_khr command_buffer, cl_command_queue command_queue,
    const cl_command_properties_khr* properties, cl_mem src_image, cl_mem dst_buffer,
    const size_t* src_origin, const size_t* region, size_t dst_offset,
    cl_uint num_sync_points_in_wait_list, const cl_sync_point_khr* sync_point_wait_list,
    cl_sync_point_khr* sync_point, cl_mutable_command_khr* mutable_handle) {
  RecordTarget t =
      prepare(command_buffer, command_queue, num_sync_points_in_wait_list, sync_point_wait_list);
  check_plain(properties, mutable_handle);
  record(
      t,
      copy_image_to_buffer_command(t.queue, src_image, dst_buffer, src_origin, region, dst_offset),
      sync_point);
}

void clCommandFillBufferKHR(cl_command_buffer_khr command_buffer, cl_command_queue command_queue,
                            const cl_command_properties_khr* properties, cl_mem buffer,
                            const void* pattern, size_t pattern_size, size_t offset, size_t size,
                            cl_uint num_sync_points_in_wait_list,
                            const cl_sync_point_khr* sync_point_wait_list,
                            cl_sync_point_khr* sync_point, cl_mutable_command_khr* mutable_handle) {
  RecordTarget t =
      prepare(command_buffer, command_queue, num_sync_points_in_wait_list, sync_point_wait_list);
  check_plain(properties, mutable_handle);
  record(t, fill_buffer_command(t.queue, buffer, pattern, pattern_size, offset, size), sync_point);
}

void clCommandFillImageKHR(cl_command_buffer_khr command_buffer, cl_command_queue command_queue,
                           const cl_command_properties_khr* properties, cl_mem image,
                           const void* fill_color, const size_t* origin, const size_t* region,
                           cl_uint num_sync_points_in_wait_list,
                           const cl_sync_point_khr* sync_point_wait_list,
                           cl_sync_point_khr* sync_point, cl_mutable_command_khr* mutable_handle) {
  RecordTarget t =
      prepare(command_buffer, command_queue, num_sync_points_in_wait_list, sync_point_wait_list);
  check_plain(properties, mutable_handle);
  record(t, fill_image_command(t.queue, image, fill_color, origin, region), sync_point);
}

void clCommandSVMMemcpyKHR(cl_command_buffer_khr command_buffer, cl_command_queue command_queue,
                           const cl_command_properties_khr* properties, void* dst_ptr,
                           const void* src_ptr, size_t size, cl_uint num_sync_points_in_wait_list,
                           const cl_sync_point_khr* sync_point_wait_list,
                           cl_sync_point_khr* sync_point, cl_mutable_command_khr* mutable_handle) {
  RecordTarget t =
      prepare(command_buffer, command_queue, num_sync_points_in_wait_list, sync_point_wait_list);
  check_plain(properties, mutable_handle);
  record(t, svm_memcpy_command(t.queue, dst_ptr, src_ptr, size), sync_point);
}

void clCommandSVMMemFillKHR(cl_command_buffer_khr command_buffer, cl_command_queue command_queue,
                            const cl_command_properties_khr* properties, void* svm_ptr,
                            const void* pattern, size_t pattern_size, size_t size,
                            cl_uint num_sync_points_in_wait_list,
                            const cl_sync_point_khr* sync_point_wait_list,
                            cl_sync_point_khr* sync_point, cl_mutable_command_khr* mutable_handle) {
  RecordTarget t =
      prepare(command_buffer, command_queue, num_sync_points_in_wait_list, sync_point_wait_list);
  check_plain(properties, mutable_handle);
  record(t, svm_fill_command(t.queue, svm_ptr, pattern, pattern_size, size), sync_point);
}

void clCommandNDRangeKernelKHR(cl_command_buffer_khr command_buffer, cl_command_queue command_queue,
                               const cl_command_properties_khr* properties, cl_kernel kernel,
                               cl_uint work_dim, const size_t* global_work_offset,
                               const size_t* global_work_size, const size_t* local_work_size,
                               cl_uint num_sync_points_in_wait_list,
                               const cl_sync_point_khr* sync_point_wait_list,
                               cl_sync_point_khr* sync_point,
                               cl_mutable_command_khr* mutable_handle) {
  RecordTarget t =
      prepare(command_buffer, command_queue, num_sync_points_in_wait_list, sync_point_wait_list);
  const cl_mutable_dispatch_fields_khr supported = kMutableDispatchCapabilities;
  cl_mutable_dispatch_fields_khr updatable = supported;
  cl_mutable_dispatch_asserts_khr asserts = 0;
  bool updatable_seen = false, asserts_seen = false;
  std::vector<cl_properties> copy = read_properties(
      properties, [&](cl_command_properties_khr name, cl_command_properties_khr value) {
        switch (name) {
          case CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR:
            // The spec: CL_INVALID_VALUE if values specified in properties are not valid.
            check(!updatable_seen, CL_INVALID_VALUE, "a property is given twice");
            updatable_seen = true;
            check((value & ~cl_command_properties_khr(CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR |
                                                      CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR |
                                                      CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR |
                                                      CL_MUTABLE_DISPATCH_ARGUMENTS_KHR |
                                                      CL_MUTABLE_DISPATCH_EXEC_INFO_KHR)) == 0,
                  CL_INVALID_VALUE, "unknown mutable-dispatch fields");
            // The spec: CL_INVALID_OPERATION if the requested
            // CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR properties are not reported by
            // CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR for the device.
            check((value & ~supported) == 0, CL_INVALID_OPERATION,
                  "the device cannot update these fields");
            updatable = value;
            break;
          case CL_MUTABLE_DISPATCH_ASSERTS_KHR:
            check(!asserts_seen, CL_INVALID_VALUE, "a property is given twice");
            asserts_seen = true;
            check((value & ~cl_command_properties_khr(
                               CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR)) == 0,
                  CL_INVALID_VALUE, "unknown mutable-dispatch asserts");
            asserts = value;
            break;
          default:
            fail(CL_INVALID_VALUE, "unknown ND-range command property");
        }
      });
  Kernel& k = *resolve<Kernel>(kernel);
  // The spec: CL_INVALID_CONTEXT if the context associated with command_buffer and kernel is
  // not the same.
  check(&k.program().context() == &t.buffer.context(), CL_INVALID_CONTEXT,
        "the kernel belongs to another context than the command-buffer's");
  // The spec: CL_INVALID_VALUE if command_buffer was created with
  // CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR, or properties include it, and
  // local_work_size is NULL.
  bool no_more_groups = asserts & CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR;
  const auto& bp = t.buffer.properties();
  for (size_t i = 0; i + 1 < bp.size(); i += 2)
    if (bp[i] == CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR &&
        (bp[i + 1] & CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR))
      no_more_groups = true;
  check(!(no_more_groups && local_work_size == nullptr), CL_INVALID_VALUE,
        "NO_ADDITIONAL_WORK_GROUPS asserted without a local_work_size");

  // The errors of clEnqueueNDRangeKernel, against the queue's device; the arguments are a
  // snapshot (the spec: later clSetKernelArg calls have no effect on the recorded command).
  // The spec (mutable dispatch): CL_INVALID_KERNEL_ARGS if the kernel argument values have
  // not been specified and the CL_MUTABLE_DISPATCH_ARGUMENTS_KHR flag was not set in the
  // properties parameter; with it, arguments may come by update after finalize (the command
  // buffer is Finalized until they all have).
  const bool arguments_later = updatable_seen && (updatable & CL_MUTABLE_DISPATCH_ARGUMENTS_KHR);
  std::shared_ptr<const KernelArgs> args =
      arguments_later ? k.snapshot_set_args() : k.snapshot_args();
  Operation op = ndrange_operation(t.queue.device(), k, work_dim, global_work_offset,
                                   global_work_size, local_work_size, args);
  // The spec: CL_INVALID_OPERATION if the device associated with command_queue does not
  // support CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR and kernel contains a printf call.
  if (const auto* launch_op = std::get_if<KernelOp>(&op))
    check(t.queue.device().info().command_buffer_printf || !launch_op->program().uses_printf(),
          CL_INVALID_OPERATION, "the device cannot record kernels that call printf");
  RecordedLaunch launch;
  launch.args = std::move(args);
  launch.work_dim = work_dim;
  for (cl_uint d = 0; d < work_dim && d < 3; ++d) {
    if (global_work_offset) launch.global_offset[d] = global_work_offset[d];
    if (global_work_size) launch.global_size[d] = global_work_size[d];
    if (local_work_size) launch.local_size[d] = local_work_size[d];
  }
  launch.offset_given = global_work_offset != nullptr;
  launch.global_given = global_work_size != nullptr;
  launch.local_given = local_work_size != nullptr;

  const auto p = t.buffer.record(t.queue_index, CL_COMMAND_NDRANGE_KERNEL, std::move(op), t.waits);
  t.buffer.set_launch(p, std::move(launch));
  if (mutable_handle)
    *mutable_handle =
        t.buffer.add_mutable(p, CL_COMMAND_NDRANGE_KERNEL, std::move(copy), updatable)->handle();
  if (sync_point) *sync_point = p;
}

}  // namespace manifold::api::impl
