// Enqueued memory commands: read, write, copy, fill (and their rect forms), map, unmap, migrate,
// for buffers and images. Image commands are the rectangular operations on the image's bytes.
#include <algorithm>
#include <bit>
#include <cstring>

#include "api/common.h"
#include "api/impl.h"
#include "api/memory_commands.h"
#include "core/memory.h"

namespace manifold::api::impl {
namespace {

struct Target {
  CommandQueue& queue;
  std::vector<Event*> waits;
  void submit(MemoryCommand c, cl_event* event) {
    submit_command(Command::make(queue, c.type, std::move(c.op)), waits, event);
  }
};

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

void check_range(const MemObject& m, size_t offset, size_t size) {
  check(range_inside(offset, size, m.size()), CL_INVALID_VALUE,
        "the region lies outside the buffer");
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

bool ranges_overlap(size_t a, size_t b, size_t size) { return a < b + size && b < a + size; }

// Pitches of one side of a rect transfer, defaults applied and checked as the spec says.
struct Pitches {
  size_t row, slice;
};

// a * b, or CL_INVALID_VALUE when it does not fit in size_t (offsets must never wrap around).
size_t mul(size_t a, size_t b, const char* what) {
  size_t r;
  check(!__builtin_mul_overflow(a, b, &r), CL_INVALID_VALUE, what);
  return r;
}
size_t add(size_t a, size_t b, const char* what) {
  size_t r;
  check(!__builtin_add_overflow(a, b, &r), CL_INVALID_VALUE, what);
  return r;
}

Pitches rect_pitches(const size_t* region, size_t row, size_t slice, const char* side) {
  if (row == 0) row = region[0];
  check(row >= region[0], CL_INVALID_VALUE,
        (std::string(side) + " row pitch is smaller than region[0]").c_str());
  const size_t min_slice = mul(region[1], row, "region[1] * row pitch overflows");
  if (slice == 0) slice = min_slice;
  check(slice >= min_slice, CL_INVALID_VALUE,
        (std::string(side) + " slice pitch is smaller than region[1] * row pitch").c_str());
  check(slice % row == 0, CL_INVALID_VALUE,
        (std::string(side) + " slice pitch is not a multiple of the row pitch").c_str());
  return {row, slice};
}

// origin[2] * slice + origin[1] * row + origin[0], checked for overflow.
size_t rect_offset(const size_t* origin, Pitches p) {
  const char* what = "the rectangle's origin overflows";
  return add(add(mul(origin[2], p.slice, what), mul(origin[1], p.row, what), what), origin[0],
             what);
}
// Bytes from the first to one past the last byte of the region, checked for overflow.
size_t rect_extent(const size_t* region, Pitches p) {
  const char* what = "the rectangle's region overflows";
  return add(add(mul(region[2] - 1, p.slice, what), mul(region[1] - 1, p.row, what), what),
             region[0], what);
}

void check_region(const size_t* origin_a, const size_t* origin_b, const size_t* region) {
  check(origin_a && origin_b && region, CL_INVALID_VALUE, "an origin or the region is NULL");
  check(region[0] && region[1] && region[2], CL_INVALID_VALUE, "a region dimension is 0");
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

Rect make_rect(const size_t* region, Pitches src, Pitches dst) {
  Rect r;
  r.region = {region[0], region[1], region[2]};
  r.src_row_pitch = src.row;
  r.src_slice_pitch = src.slice;
  r.dst_row_pitch = dst.row;
  r.dst_slice_pitch = dst.slice;
  return r;
}

Location at(MemObject& m, size_t offset) { return {Ref<MemObject>(&m), nullptr, offset}; }
Location host(const void* p) { return {nullptr, static_cast<std::byte*>(const_cast<void*>(p)), 0}; }

}  // namespace

void clEnqueueReadBuffer(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
                         size_t offset, size_t size, void* ptr, cl_uint num_events_in_wait_list,
                         const cl_event* event_wait_list, cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  MemObject& m = buffer_in(t.queue, buffer);
  check_range(m, offset, size);
  check(ptr && size, CL_INVALID_VALUE, "ptr is NULL or size is 0");
  check_host_reads(m);
  auto cmd = Command::make(t.queue, CL_COMMAND_READ_BUFFER, CopyOp{at(m, offset), host(ptr), size});
  submit_command(std::move(cmd), t.waits, event, blocking_read);
}

void clEnqueueWriteBuffer(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write,
                          size_t offset, size_t size, const void* ptr,
                          cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                          cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  MemObject& m = buffer_in(t.queue, buffer);
  check_range(m, offset, size);
  check(ptr && size, CL_INVALID_VALUE, "ptr is NULL or size is 0");
  check_host_writes(m);
  auto cmd =
      Command::make(t.queue, CL_COMMAND_WRITE_BUFFER, CopyOp{host(ptr), at(m, offset), size});
  submit_command(std::move(cmd), t.waits, event, blocking_write);
}

MemoryCommand copy_buffer_command(CommandQueue& queue, cl_mem src_buffer, cl_mem dst_buffer,
                                  size_t src_offset, size_t dst_offset, size_t size) {
  MemObject& src = buffer_in(queue, src_buffer);
  MemObject& dst = buffer_in(queue, dst_buffer);
  check(size > 0, CL_INVALID_VALUE, "size is 0");
  check_range(src, src_offset, size);
  check_range(dst, dst_offset, size);
  // The spec: CL_MEM_COPY_OVERLAP if src and dst are the same buffer or sub-buffers of the
  // same buffer and the regions overlap.
  if (&src.root() == &dst.root())
    check(!ranges_overlap(src.root_offset() + src_offset, dst.root_offset() + dst_offset, size),
          CL_MEM_COPY_OVERLAP, "source and destination regions overlap");
  return {CL_COMMAND_COPY_BUFFER, CopyOp{at(src, src_offset), at(dst, dst_offset), size}};
}

void clEnqueueCopyBuffer(cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
                         size_t src_offset, size_t dst_offset, size_t size,
                         cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                         cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  t.submit(copy_buffer_command(t.queue, src_buffer, dst_buffer, src_offset, dst_offset, size),
           event);
}

MemoryCommand fill_buffer_command(CommandQueue& queue, cl_mem buffer, const void* pattern,
                                  size_t pattern_size, size_t offset, size_t size) {
  MemObject& m = buffer_in(queue, buffer);
  // The spec: CL_INVALID_VALUE if pattern is NULL, pattern_size is 0 or not one of
  // {1, 2, 4, 8, 16, 32, 64, 128}, or offset and size are not multiples of pattern_size.
  check(pattern != nullptr, CL_INVALID_VALUE, "pattern is NULL");
  check(pattern_size && pattern_size <= 128 && (pattern_size & (pattern_size - 1)) == 0,
        CL_INVALID_VALUE, "pattern_size must be a power of two up to 128");
  check(offset % pattern_size == 0 && size % pattern_size == 0, CL_INVALID_VALUE,
        "offset and size must be multiples of pattern_size");
  check_range(m, offset, size);
  FillOp op{at(m, offset), size, {}, pattern_size};
  std::memcpy(op.pattern.data(), pattern, pattern_size);
  return {CL_COMMAND_FILL_BUFFER, std::move(op)};
}

void clEnqueueFillBuffer(cl_command_queue command_queue, cl_mem buffer, const void* pattern,
                         size_t pattern_size, size_t offset, size_t size,
                         cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                         cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  t.submit(fill_buffer_command(t.queue, buffer, pattern, pattern_size, offset, size), event);
}

void clEnqueueReadBufferRect(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
                             const size_t* buffer_origin, const size_t* host_origin,
                             const size_t* region, size_t buffer_row_pitch,
                             size_t buffer_slice_pitch, size_t host_row_pitch,
                             size_t host_slice_pitch, void* ptr, cl_uint num_events_in_wait_list,
                             const cl_event* event_wait_list, cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  MemObject& m = buffer_in(t.queue, buffer);
  check_region(buffer_origin, host_origin, region);
  check(ptr != nullptr, CL_INVALID_VALUE, "ptr is NULL");
  const Pitches bp = rect_pitches(region, buffer_row_pitch, buffer_slice_pitch, "buffer");
  const Pitches hp = rect_pitches(region, host_row_pitch, host_slice_pitch, "host");
  const size_t boff = rect_offset(buffer_origin, bp);
  check(range_inside(boff, rect_extent(region, bp), m.size()), CL_INVALID_VALUE,
        "the region lies outside the buffer");
  const size_t hoff = rect_offset(host_origin, hp);
  add(hoff, rect_extent(region, hp), "the host rectangle overflows");
  check_host_reads(m);
  CopyRectOp op{at(m, boff), host(static_cast<std::byte*>(ptr) + hoff), make_rect(region, bp, hp)};
  submit_command(Command::make(t.queue, CL_COMMAND_READ_BUFFER_RECT, std::move(op)), t.waits, event,
                 blocking_read);
}

void clEnqueueWriteBufferRect(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write,
                              const size_t* buffer_origin, const size_t* host_origin,
                              const size_t* region, size_t buffer_row_pitch,
                              size_t buffer_slice_pitch, size_t host_row_pitch,
                              size_t host_slice_pitch, const void* ptr,
                              cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                              cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  MemObject& m = buffer_in(t.queue, buffer);
  check_region(buffer_origin, host_origin, region);
  check(ptr != nullptr, CL_INVALID_VALUE, "ptr is NULL");
  const Pitches bp = rect_pitches(region, buffer_row_pitch, buffer_slice_pitch, "buffer");
  const Pitches hp = rect_pitches(region, host_row_pitch, host_slice_pitch, "host");
  const size_t boff = rect_offset(buffer_origin, bp);
  check(range_inside(boff, rect_extent(region, bp), m.size()), CL_INVALID_VALUE,
        "the region lies outside the buffer");
  const size_t hoff = rect_offset(host_origin, hp);
  add(hoff, rect_extent(region, hp), "the host rectangle overflows");
  check_host_writes(m);
  const auto* src = static_cast<const std::byte*>(ptr) + hoff;
  CopyRectOp op{host(src), at(m, boff), make_rect(region, hp, bp)};
  submit_command(Command::make(t.queue, CL_COMMAND_WRITE_BUFFER_RECT, std::move(op)), t.waits,
                 event, blocking_write);
}

MemoryCommand copy_buffer_rect_command(CommandQueue& queue, cl_mem src_buffer, cl_mem dst_buffer,
                                       const size_t* src_origin, const size_t* dst_origin,
                                       const size_t* region, size_t src_row_pitch,
                                       size_t src_slice_pitch, size_t dst_row_pitch,
                                       size_t dst_slice_pitch) {
  MemObject& src = buffer_in(queue, src_buffer);
  MemObject& dst = buffer_in(queue, dst_buffer);
  check_region(src_origin, dst_origin, region);
  const Pitches sp = rect_pitches(region, src_row_pitch, src_slice_pitch, "source");
  const Pitches dp = rect_pitches(region, dst_row_pitch, dst_slice_pitch, "destination");
  const size_t soff = rect_offset(src_origin, sp), doff = rect_offset(dst_origin, dp);
  const size_t sext = rect_extent(region, sp), dext = rect_extent(region, dp);
  check(range_inside(soff, sext, src.size()), CL_INVALID_VALUE,
        "the source region lies outside the buffer");
  check(range_inside(doff, dext, dst.size()), CL_INVALID_VALUE,
        "the destination region lies outside the buffer");
  if (&src == &dst) {
    // The spec: CL_INVALID_VALUE if src and dst are the same buffer and the pitches differ.
    check(sp.row == dp.row && sp.slice == dp.slice, CL_INVALID_VALUE,
          "a copy within one buffer needs equal source and destination pitches");
  }
  if (&src.root() == &dst.root()) {
    // The spec: CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer or
    // sub-buffer object and the source and destination regions overlap, or if they are
    // different sub-buffers of the same associated buffer object and they overlap (Appendix D).
    const size_t sstart = src.root_offset() + soff, dstart = dst.root_offset() + doff;
    bool overlap;
    if (sp.row == dp.row && sp.slice == dp.slice)
      overlap = rect_copy_overlap(sstart, dstart, region, sp.row, sp.slice);
    else  // different pitches (sub-buffers only): compare the byte spans they touch
      overlap = sstart < dstart + dext && dstart < sstart + sext;
    check(!overlap, CL_MEM_COPY_OVERLAP, "source and destination regions overlap");
  }
  return {CL_COMMAND_COPY_BUFFER_RECT,
          CopyRectOp{at(src, soff), at(dst, doff), make_rect(region, sp, dp)}};
}

void clEnqueueCopyBufferRect(cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
                             const size_t* src_origin, const size_t* dst_origin,
                             const size_t* region, size_t src_row_pitch, size_t src_slice_pitch,
                             size_t dst_row_pitch, size_t dst_slice_pitch,
                             cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                             cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  t.submit(copy_buffer_rect_command(t.queue, src_buffer, dst_buffer, src_origin, dst_origin, region,
                                    src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch),
           event);
}

void* clEnqueueMapBuffer(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_map,
                         cl_map_flags map_flags, size_t offset, size_t size,
                         cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                         cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  MemObject& m = buffer_in(t.queue, buffer);
  check(size > 0, CL_INVALID_VALUE, "size is 0");
  check_range(m, offset, size);
  // The spec: CL_INVALID_VALUE if map_flags has unknown bits, or CL_MAP_WRITE_INVALIDATE_REGION
  // with CL_MAP_READ or CL_MAP_WRITE.
  check((map_flags & ~(CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) == 0,
        CL_INVALID_VALUE, "unknown map flags");
  check(
      !((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) && (map_flags & (CL_MAP_READ | CL_MAP_WRITE))),
      CL_INVALID_VALUE, "CL_MAP_WRITE_INVALIDATE_REGION with CL_MAP_READ or CL_MAP_WRITE");
  if (map_flags & CL_MAP_READ) check_host_reads(m);
  if (map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) check_host_writes(m);
  void* mapped = m.add_mapping(offset, size, map_flags);
  try {
    submit_command(Command::make(t.queue, CL_COMMAND_MAP_BUFFER,
                                 MapOp{Ref<MemObject>(&m), offset, size, map_flags}),
                   t.waits, event, blocking_map);
  } catch (...) {
    m.remove_mapping(mapped);
    throw;
  }
  return mapped;
}

void clEnqueueUnmapMemObject(cl_command_queue command_queue, cl_mem memobj, void* mapped_ptr,
                             cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                             cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  MemObject& m = *resolve<MemObject>(memobj);
  check(&m.context() == &t.queue.context(), CL_INVALID_CONTEXT,
        "the memory object belongs to another context");
  check_not_imported(m);
  // The spec: CL_INVALID_VALUE if mapped_ptr is not a valid pointer returned by
  // clEnqueueMapBuffer or clEnqueueMapImage for memobj.
  check(m.remove_mapping(mapped_ptr), CL_INVALID_VALUE,
        "mapped_ptr is not a mapping of this memory object");
  submit_command(
      Command::make(t.queue, CL_COMMAND_UNMAP_MEM_OBJECT, UnmapOp{Ref<MemObject>(&m), mapped_ptr}),
      t.waits, event);
}

void clEnqueueMigrateMemObjects(cl_command_queue command_queue, cl_uint num_mem_objects,
                                const cl_mem* mem_objects, cl_mem_migration_flags flags,
                                cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                                cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  check(num_mem_objects > 0 && mem_objects, CL_INVALID_VALUE, "no memory objects given");
  check((flags & ~(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)) == 0,
        CL_INVALID_VALUE, "unknown migration flags");
  MigrateOp op{{}, flags};
  for (cl_uint i = 0; i < num_mem_objects; ++i) {
    MemObject& m = *resolve<MemObject>(mem_objects[i]);
    check(&m.context() == &t.queue.context(), CL_INVALID_CONTEXT,
          "a memory object belongs to another context");
    op.mems.emplace_back(&m);
  }
  submit_command(Command::make(t.queue, CL_COMMAND_MIGRATE_MEM_OBJECTS, std::move(op)), t.waits,
                 event);
}

// ---- Image commands ----

namespace {

MemObject& image_in(CommandQueue& q, cl_mem mem) {
  MemObject& m = *resolve<MemObject>(mem);
  // The spec: CL_INVALID_MEM_OBJECT if image is not a valid image object.
  check(m.image() != nullptr, CL_INVALID_MEM_OBJECT, "the memory object is not an image");
  // The spec: CL_INVALID_CONTEXT if the context associated with command_queue and image are not
  // the same.
  check(&m.context() == &q.context(), CL_INVALID_CONTEXT, "the image belongs to another context");
  check_not_imported(m);
  // The spec: CL_INVALID_OPERATION if the device associated with command_queue does not support
  // images; CL_INVALID_IMAGE_SIZE if the image's dimensions are not supported by it.
  check(q.device().info().image_support, CL_INVALID_OPERATION,
        "the queue's device does not support images");
  check(image_fits_device(q.device().info(), *m.image()), CL_INVALID_IMAGE_SIZE,
        "the image's dimensions are not supported by the queue's device");
  return m;
}

// An origin and region of an image, checked as the spec says, and where they lie in its bytes:
// (bytes, rows, slices) with the pitches from one row and one slice of the region to the next
// (for a 1D image array the rows are its images).
struct ImageBox {
  size_t offset;                 // of the first pixel
  std::array<size_t, 3> extent;  // bytes of a row, rows, slices
  size_t row_pitch, slice_pitch;
  size_t pixels;  // in the region
};

ImageBox image_box(const ImageInfo& i, const size_t* origin, const size_t* region) {
  // The spec: CL_INVALID_VALUE if values in origin and region do not follow the rules (a 2D
  // image: origin[2] 0 and region[2] 1; a 1D image or 1D image buffer: origin[1], origin[2] 0
  // and region[1], region[2] 1; a 1D image array: origin[2] 0 and region[2] 1; region values
  // not 0), or if the region is out of bounds.
  check(origin && region, CL_INVALID_VALUE, "origin or region is NULL");
  check(region[0] && region[1] && region[2], CL_INVALID_VALUE, "a region value is 0");
  size_t limit[3] = {i.width, 1, 1};
  switch (i.type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
      limit[1] = i.array_size;
      break;
    case CL_MEM_OBJECT_IMAGE2D:
      limit[1] = i.height;
      break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
      limit[1] = i.height;
      limit[2] = i.array_size;
      break;
    case CL_MEM_OBJECT_IMAGE3D:
      limit[1] = i.height;
      limit[2] = i.depth;
      break;
    default:
      break;  // 1D, 1D buffer
  }
  if (limit[1] == 1 && i.type != CL_MEM_OBJECT_IMAGE1D_ARRAY)
    check(origin[1] == 0 && region[1] == 1, CL_INVALID_VALUE,
          "origin[1] must be 0 and region[1] 1 for a 1D image");
  if (limit[2] == 1 && i.type != CL_MEM_OBJECT_IMAGE2D_ARRAY && i.type != CL_MEM_OBJECT_IMAGE3D)
    check(origin[2] == 0 && region[2] == 1, CL_INVALID_VALUE,
          "origin[2] must be 0 and region[2] 1 for this image type");
  for (int d = 0; d < 3; ++d)
    check(range_inside(origin[d], region[d], limit[d]), CL_INVALID_VALUE,
          "the region lies outside the image");
  ImageBox b;
  b.row_pitch = i.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? i.slice_pitch : i.row_pitch;
  b.slice_pitch = i.slice_pitch;
  b.offset = origin[0] * i.element_size + origin[1] * b.row_pitch + origin[2] * b.slice_pitch;
  b.extent = {region[0] * i.element_size, region[1], region[2]};
  b.pixels = region[0] * region[1] * region[2];
  return b;
}

// Host-side pitches of clEnqueueRead/WriteImage in the box's orientation. The spec: row_pitch
// 0 is region[0] * element size, else at least that; slice_pitch 0 is row_pitch * height (of
// the region; 1 for a 1D array), else at least that. For 1D and 2D images slice_pitch is unused.
Pitches host_image_pitches(const ImageInfo& i, const size_t* region, size_t row_pitch,
                           size_t slice_pitch) {
  const size_t row_bytes = mul(region[0], i.element_size, "the region overflows");
  if (row_pitch == 0) row_pitch = row_bytes;
  check(row_pitch >= row_bytes, CL_INVALID_VALUE,
        "row_pitch is smaller than region[0] * element size");
  const bool has_slices = i.type == CL_MEM_OBJECT_IMAGE3D || i.is_array();
  const size_t rows = i.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : region[1];
  const size_t min_slice = mul(row_pitch, rows, "row_pitch * height overflows");
  if (!has_slices || slice_pitch == 0) slice_pitch = min_slice;
  check(slice_pitch >= min_slice, CL_INVALID_VALUE,
        "slice_pitch is smaller than row_pitch * height");
  // A 1D array's images are the box's rows.
  if (i.type == CL_MEM_OBJECT_IMAGE1D_ARRAY)
    return {slice_pitch, mul(slice_pitch, region[1], "slice_pitch overflows")};
  return {row_pitch, slice_pitch};
}

Rect box_rect(const ImageBox& b, Pitches src, Pitches dst) {
  Rect r;
  r.region = b.extent;
  r.src_row_pitch = src.row;
  r.src_slice_pitch = src.slice;
  r.dst_row_pitch = dst.row;
  r.dst_slice_pitch = dst.slice;
  return r;
}

Pitches of(const ImageBox& b) { return {b.row_pitch, b.slice_pitch}; }

// Bytes from the box's first byte to one past its last.
size_t box_span(const ImageBox& b) {
  return (b.extent[2] - 1) * b.slice_pitch + (b.extent[1] - 1) * b.row_pitch + b.extent[0];
}

}  // namespace

void clEnqueueReadImage(cl_command_queue command_queue, cl_mem image, cl_bool blocking_read,
                        const size_t* origin, const size_t* region, size_t row_pitch,
                        size_t slice_pitch, void* ptr, cl_uint num_events_in_wait_list,
                        const cl_event* event_wait_list, cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  MemObject& m = image_in(t.queue, image);
  const ImageInfo& i = *m.image();
  const ImageBox b = image_box(i, origin, region);
  // The spec: CL_INVALID_VALUE if ptr is a NULL value.
  check(ptr != nullptr, CL_INVALID_VALUE, "ptr is NULL");
  const Pitches hp = host_image_pitches(i, region, row_pitch, slice_pitch);
  // The spec: CL_INVALID_OPERATION if clEnqueueReadImage is called on image which has been
  // created with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS.
  check_host_reads(m);
  CopyRectOp op{at(m, b.offset), host(ptr), box_rect(b, of(b), hp)};
  submit_command(Command::make(t.queue, CL_COMMAND_READ_IMAGE, std::move(op)), t.waits, event,
                 blocking_read);
}

void clEnqueueWriteImage(cl_command_queue command_queue, cl_mem image, cl_bool blocking_write,
                         const size_t* origin, const size_t* region, size_t input_row_pitch,
                         size_t input_slice_pitch, const void* ptr, cl_uint num_events_in_wait_list,
                         const cl_event* event_wait_list, cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  MemObject& m = image_in(t.queue, image);
  const ImageInfo& i = *m.image();
  const ImageBox b = image_box(i, origin, region);
  check(ptr != nullptr, CL_INVALID_VALUE, "ptr is NULL");
  const Pitches hp = host_image_pitches(i, region, input_row_pitch, input_slice_pitch);
  // The spec: CL_INVALID_OPERATION if clEnqueueWriteImage is called on image which has been
  // created with CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS.
  check_host_writes(m);
  CopyRectOp op{host(ptr), at(m, b.offset), box_rect(b, hp, of(b))};
  submit_command(Command::make(t.queue, CL_COMMAND_WRITE_IMAGE, std::move(op)), t.waits, event,
                 blocking_write);
}

MemoryCommand fill_image_command(CommandQueue& queue, cl_mem image, const void* fill_color,
                                 const size_t* origin, const size_t* region) {
  MemObject& m = image_in(queue, image);
  const ImageInfo& i = *m.image();
  // The spec: CL_INVALID_VALUE if fill_color is NULL.
  check(fill_color != nullptr, CL_INVALID_VALUE, "fill_color is NULL");
  const ImageBox b = image_box(i, origin, region);
  // The colour becomes one pixel of the image's format, then a row of the region's width; every
  // row of the region is copied from that row (source pitches 0). The host flags of the image
  // do not apply (the spec: they are ignored by clEnqueueFillImage).
  std::array<std::byte, 16> pixel{};
  check(image_pack_color(i, fill_color, pixel.data()), CL_IMAGE_FORMAT_NOT_SUPPORTED,
        "the image's format cannot be filled");
  // A region without gaps (a 1D or 1D buffer image, whole rows of a 2D image...) is one pattern
  // fill, as clEnqueueFillBuffer's: no staging row, which for a 1D buffer image of 2^31 pixels
  // would be gigabytes built on the host.
  const size_t span = box_span(b);
  if (std::has_single_bit(i.element_size) && span == b.extent[0] * b.extent[1] * b.extent[2]) {
    FillOp fill{at(m, b.offset), span, {}, i.element_size};
    std::memcpy(fill.pattern.data(), pixel.data(), i.element_size);
    return {CL_COMMAND_FILL_IMAGE, std::move(fill)};
  }
  std::vector<std::byte> row(b.extent[0]);
  for (size_t x = 0; x < row.size(); x += i.element_size)
    std::memcpy(row.data() + x, pixel.data(), i.element_size);
  Ref<MemObject> staging(make_api_object<MemObject>(
      Ref<Context>(&m.context()), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, row.size(), row.data(),
      std::vector<cl_mem_properties>{}));
  staging->release_api();  // internal: only the command holds it
  return {CL_COMMAND_FILL_IMAGE,
          CopyRectOp{Location{staging, nullptr, 0}, at(m, b.offset), box_rect(b, {0, 0}, of(b))}};
}

void clEnqueueFillImage(cl_command_queue command_queue, cl_mem image, const void* fill_color,
                        const size_t* origin, const size_t* region, cl_uint num_events_in_wait_list,
                        const cl_event* event_wait_list, cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  t.submit(fill_image_command(t.queue, image, fill_color, origin, region), event);
}

MemoryCommand copy_image_command(CommandQueue& queue, cl_mem src_image, cl_mem dst_image,
                                 const size_t* src_origin, const size_t* dst_origin,
                                 const size_t* region) {
  MemObject& src = image_in(queue, src_image);
  MemObject& dst = image_in(queue, dst_image);
  const ImageInfo& si = *src.image();
  const ImageInfo& di = *dst.image();
  // The spec: CL_IMAGE_FORMAT_MISMATCH if src_image and dst_image do not use the same image
  // format.
  check(si.format.image_channel_order == di.format.image_channel_order &&
            si.format.image_channel_data_type == di.format.image_channel_data_type,
        CL_IMAGE_FORMAT_MISMATCH, "the source and destination images have different formats");
  const ImageBox sb = image_box(si, src_origin, region);
  const ImageBox db = image_box(di, dst_origin, region);
  // The spec: CL_MEM_COPY_OVERLAP if src_image and dst_image are the same image object and the
  // source and destination regions overlap.
  if (&src == &dst)
    check(!rect_copy_overlap(sb.offset, db.offset, sb.extent.data(), sb.row_pitch, sb.slice_pitch),
          CL_MEM_COPY_OVERLAP, "source and destination regions overlap");
  return {CL_COMMAND_COPY_IMAGE,
          CopyRectOp{at(src, sb.offset), at(dst, db.offset), box_rect(sb, of(sb), of(db))}};
}

void clEnqueueCopyImage(cl_command_queue command_queue, cl_mem src_image, cl_mem dst_image,
                        const size_t* src_origin, const size_t* dst_origin, const size_t* region,
                        cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                        cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  t.submit(copy_image_command(t.queue, src_image, dst_image, src_origin, dst_origin, region),
           event);
}

// clEnqueueCopyImageToBuffer (`to_buffer`) and clEnqueueCopyBufferToImage: a region of the
// image, packed in the buffer from `offset` on.
namespace {
MemoryCommand copy_image_buffer(MemObject& image, MemObject& buffer, const size_t* origin,
                                const size_t* region, size_t offset, bool to_buffer) {
  // The spec: CL_INVALID_MEM_OBJECT if the image is a 1D image buffer object created from the
  // buffer.
  check(!(image.type() == CL_MEM_OBJECT_IMAGE1D_BUFFER && image.associated() == &buffer),
        CL_INVALID_MEM_OBJECT, "the image is a 1D image buffer made from the buffer");
  const ImageInfo& i = *image.image();
  const ImageBox b = image_box(i, origin, region);
  // The spec: CL_INVALID_VALUE if the region from the buffer's offset on (the region's pixels
  // times the element size) lies outside the buffer.
  const size_t size = mul(b.pixels, i.element_size, "the region overflows");
  check(range_inside(offset, size, buffer.size()), CL_INVALID_VALUE,
        "the region lies outside the buffer");
  const Pitches packed{b.extent[0], b.extent[0] * b.extent[1]};
  CopyRectOp op =
      to_buffer ? CopyRectOp{at(image, b.offset), at(buffer, offset), box_rect(b, of(b), packed)}
                : CopyRectOp{at(buffer, offset), at(image, b.offset), box_rect(b, packed, of(b))};
  const cl_command_type type =
      to_buffer ? CL_COMMAND_COPY_IMAGE_TO_BUFFER : CL_COMMAND_COPY_BUFFER_TO_IMAGE;
  return {type, std::move(op)};
}
}  // namespace

MemoryCommand copy_image_to_buffer_command(CommandQueue& queue, cl_mem src_image, cl_mem dst_buffer,
                                           const size_t* src_origin, const size_t* region,
                                           size_t dst_offset) {
  MemObject& src = image_in(queue, src_image);
  MemObject& dst = buffer_in(queue, dst_buffer);
  return copy_image_buffer(src, dst, src_origin, region, dst_offset, /*to_buffer=*/true);
}

MemoryCommand copy_buffer_to_image_command(CommandQueue& queue, cl_mem src_buffer, cl_mem dst_image,
                                           size_t src_offset, const size_t* dst_origin,
                                           const size_t* region) {
  MemObject& src = buffer_in(queue, src_buffer);
  MemObject& dst = image_in(queue, dst_image);
  return copy_image_buffer(dst, src, dst_origin, region, src_offset, /*to_buffer=*/false);
}

void clEnqueueCopyImageToBuffer(cl_command_queue command_queue, cl_mem src_image, cl_mem dst_buffer,
                                const size_t* src_origin, const size_t* region, size_t dst_offset,
                                cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                                cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  t.submit(
      copy_image_to_buffer_command(t.queue, src_image, dst_buffer, src_origin, region, dst_offset),
      event);
}

void clEnqueueCopyBufferToImage(cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_image,
                                size_t src_offset, const size_t* dst_origin, const size_t* region,
                                cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                                cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  t.submit(
      copy_buffer_to_image_command(t.queue, src_buffer, dst_image, src_offset, dst_origin, region),
      event);
}

void* clEnqueueMapImage(cl_command_queue command_queue, cl_mem image, cl_bool blocking_map,
                        cl_map_flags map_flags, const size_t* origin, const size_t* region,
                        size_t* image_row_pitch, size_t* image_slice_pitch,
                        cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                        cl_event* event) {
  Target t = prepare(command_queue, num_events_in_wait_list, event_wait_list);
  MemObject& m = image_in(t.queue, image);
  const ImageInfo& i = *m.image();
  const ImageBox b = image_box(i, origin, region);
  // The spec: CL_INVALID_VALUE if values specified in map_flags are not valid.
  check((map_flags & ~(CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) == 0,
        CL_INVALID_VALUE, "unknown map flags");
  check(
      !((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) && (map_flags & (CL_MAP_READ | CL_MAP_WRITE))),
      CL_INVALID_VALUE, "CL_MAP_WRITE_INVALIDATE_REGION with CL_MAP_READ or CL_MAP_WRITE");
  // The spec: CL_INVALID_VALUE if image_row_pitch is NULL; if image is a 3D image, 1D or 2D
  // image array object and image_slice_pitch is NULL.
  check(image_row_pitch != nullptr, CL_INVALID_VALUE, "image_row_pitch is NULL");
  const bool has_slices = i.type == CL_MEM_OBJECT_IMAGE3D || i.is_array();
  check(!has_slices || image_slice_pitch != nullptr, CL_INVALID_VALUE,
        "image_slice_pitch is NULL for a 3D image or an image array");
  // The spec: CL_INVALID_OPERATION if image has been created with CL_MEM_HOST_WRITE_ONLY or
  // CL_MEM_HOST_NO_ACCESS and CL_MAP_READ is set, or with CL_MEM_HOST_READ_ONLY or
  // CL_MEM_HOST_NO_ACCESS and CL_MAP_WRITE or CL_MAP_WRITE_INVALIDATE_REGION is set.
  if (map_flags & CL_MAP_READ) check_host_reads(m);
  if (map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) check_host_writes(m);
  const size_t span = box_span(b);
  // The mapping is the image's own bytes; the rows leave gaps whose bytes an invalidating map
  // must keep, unless the region is one contiguous run.
  cl_map_flags op_flags = map_flags;
  if ((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) && span != b.pixels * i.element_size)
    op_flags = CL_MAP_WRITE;
  void* mapped = m.add_mapping(b.offset, span, map_flags);
  try {
    submit_command(Command::make(t.queue, CL_COMMAND_MAP_IMAGE,
                                 MapOp{Ref<MemObject>(&m), b.offset, span, op_flags}),
                   t.waits, event, blocking_map);
  } catch (...) {
    m.remove_mapping(mapped);
    throw;
  }
  *image_row_pitch = i.row_pitch;
  // 0 for 1D and 2D images; the pitch of slices or array images otherwise.
  if (image_slice_pitch) *image_slice_pitch = has_slices ? i.slice_pitch : 0;
  return mapped;
}

}  // namespace manifold::api::impl
