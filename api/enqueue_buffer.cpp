// Enqueued buffer commands: read, write, copy, fill (and their rect forms), map, unmap, migrate.
#include <algorithm>
#include <cstring>

#include "api/enqueue_checks.h"

namespace manifold::api::impl {
namespace {

void check_range(const MemObject& m, size_t offset, size_t size) {
  check(range_inside(offset, size, m.size()), CL_INVALID_VALUE,
        "the region lies outside the buffer");
}

bool ranges_overlap(size_t a, size_t b, size_t size) { return a < b + size && b < a + size; }

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

Rect make_rect(const size_t* region, Pitches src, Pitches dst) {
  Rect r;
  r.region = {region[0], region[1], region[2]};
  r.src_row_pitch = src.row;
  r.src_slice_pitch = src.slice;
  r.dst_row_pitch = dst.row;
  r.dst_slice_pitch = dst.slice;
  return r;
}

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

}  // namespace manifold::api::impl
