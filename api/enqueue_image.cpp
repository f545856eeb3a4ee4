// Enqueued image commands: read, write, fill, copy (to and from buffers too), map. They are the
// rectangular operations on the image's bytes.
#include <algorithm>
#include <bit>
#include <cstring>

#include "api/enqueue_checks.h"

namespace manifold::api::impl {

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
