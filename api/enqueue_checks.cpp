// The checks and helpers the enqueued buffer and image commands share (api/enqueue_checks.h).
#include "api/enqueue_checks.h"

namespace manifold::api::impl {

Target prepare(cl_command_queue command_queue, cl_uint num_events, const cl_event* events) {
  CommandQueue& q = *resolve<CommandQueue>(command_queue);
  return {q, resolve_wait_list(q.context(), num_events, events)};
}

// cl_arm_import_memory: CL_INVALID_OPERATION when an imported memory object is passed to the
// read, write, copy, fill, map and unmap commands of buffers and images (every caller of
// buffer_in and image_in, and clEnqueueUnmapMemObject).
void check_not_imported(const MemObject& m) {
  // (A buffer over fine-grain SVM is used in place too, but is no import: the commands work.)
  check(!m.imported() || m.svm(), CL_INVALID_OPERATION,
        "imported memory (cl_arm_import_memory) is used in place: no read, write, copy, fill or "
        "map commands");
}

MemObject& buffer_in(CommandQueue& q, cl_mem mem) {
  MemObject& m = *resolve<MemObject>(mem);
  // The spec: CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object.
  check(m.type() == CL_MEM_OBJECT_BUFFER, CL_INVALID_MEM_OBJECT,
        "the memory object is not a buffer");
  // The spec: CL_INVALID_CONTEXT if the queue and the buffer are not in the same context.
  check(&m.context() == &q.context(), CL_INVALID_CONTEXT, "the buffer belongs to another context");
  check_not_imported(m);
  // The spec: CL_MISALIGNED_SUB_BUFFER_OFFSET if a sub-buffer's offset is not aligned to
  // CL_DEVICE_MEM_BASE_ADDR_ALIGN for the queue's device.
  if (m.parent())
    check(m.origin() % (q.device().info().mem_base_addr_align / 8) == 0,
          CL_MISALIGNED_SUB_BUFFER_OFFSET, "the sub-buffer's offset is misaligned for this device");
  return m;
}

// The range (offset, extent) lies inside [0, size), without overflow.
bool range_inside(size_t offset, size_t extent, size_t size) {
  return offset <= size && extent <= size - offset;
}

// The spec: CL_INVALID_OPERATION if a read is called on a buffer created with
// CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS (and likewise for writes).
void check_host_reads(const MemObject& m) {
  check(!(m.flags() & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)), CL_INVALID_OPERATION,
        "the buffer does not allow host reads");
}
void check_host_writes(const MemObject& m) {
  check(!(m.flags() & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)), CL_INVALID_OPERATION,
        "the buffer does not allow host writes");
}

// a * b, or CL_INVALID_VALUE when it does not fit in size_t (offsets must never wrap around).
size_t mul(size_t a, size_t b, const char* what) {
  size_t r;
  check(!__builtin_mul_overflow(a, b, &r), CL_INVALID_VALUE, what);
  return r;
}

// Appendix D of the spec ("Checking for Memory Copy Overlap"), for source and destination
// rectangles with the same pitches in one buffer. Offsets are linear byte offsets: only their
// positions modulo the pitches matter, as with (x, y, z) origins.
bool rect_copy_overlap(size_t src_start, size_t dst_start, const size_t* region, size_t row_pitch,
                       size_t slice_pitch) {
  const size_t slice_size = (region[1] - 1) * row_pitch + region[0];
  const size_t block_size = (region[2] - 1) * slice_pitch + slice_size;
  const size_t src_end = src_start + block_size, dst_end = dst_start + block_size;
  if (dst_end <= src_start || src_end <= dst_start) return false;
  const size_t src_dx = src_start % row_pitch, dst_dx = dst_start % row_pitch;
  if ((dst_dx >= src_dx + region[0] && dst_dx + region[0] <= src_dx + row_pitch) ||
      (src_dx >= dst_dx + region[0] && src_dx + region[0] <= dst_dx + row_pitch))
    return false;
  const size_t src_dy = src_start % slice_pitch, dst_dy = dst_start % slice_pitch;
  if ((dst_dy >= src_dy + slice_size && dst_dy + slice_size <= src_dy + slice_pitch) ||
      (src_dy >= dst_dy + slice_size && src_dy + slice_size <= dst_dy + slice_pitch))
    return false;
  return true;
}
Location at(MemObject& m, size_t offset) { return {Ref<MemObject>(&m), nullptr, offset}; }
Location host(const void* p) { return {nullptr, static_cast<std::byte*>(const_cast<void*>(p)), 0}; }
}  // namespace manifold::api::impl
