// Image entry points: creation (from memory, buffers and other images), the supported formats
// and the image queries.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "api/common.h"
#include "api/impl.h"
#include "api/memory_flags.h"
#include "core/info.h"
#include "core/memory.h"

namespace manifold::api::impl {
namespace {

bool supports_images(const DeviceInfo& i) { return i.image_support; }

// Every format the image builtins read and write (compiler/builtins/image.cl, on every device
// with images), for every image type and access. The spec's minimum lists (full profile) are all
// included.
const std::vector<cl_image_format>& builtin_image_formats() {
  static const std::vector<cl_image_format> formats = [] {
    std::vector<cl_image_format> f;
    const cl_channel_type all_types[] = {CL_UNORM_INT8,     CL_UNORM_INT16,   CL_SNORM_INT8,
                                         CL_SNORM_INT16,    CL_SIGNED_INT8,   CL_SIGNED_INT16,
                                         CL_SIGNED_INT32,   CL_UNSIGNED_INT8, CL_UNSIGNED_INT16,
                                         CL_UNSIGNED_INT32, CL_HALF_FLOAT,    CL_FLOAT};
    for (cl_channel_order o : {CL_R, CL_A, CL_RG, CL_RA, CL_RGBA})
      for (cl_channel_type t : all_types) f.push_back({o, t});
    for (cl_channel_order o : {CL_INTENSITY, CL_LUMINANCE})
      for (cl_channel_type t :
           {CL_UNORM_INT8, CL_UNORM_INT16, CL_SNORM_INT8, CL_SNORM_INT16, CL_HALF_FLOAT, CL_FLOAT})
        f.push_back({o, t});
    for (cl_channel_order o : {CL_BGRA, CL_ARGB})
      for (cl_channel_type t : {CL_UNORM_INT8, CL_SNORM_INT8, CL_SIGNED_INT8, CL_UNSIGNED_INT8})
        f.push_back({o, t});
    for (cl_channel_order o : {CL_RGB, CL_RGBx})
      for (cl_channel_type t : {CL_UNORM_SHORT_565, CL_UNORM_SHORT_555, CL_UNORM_INT_101010})
        f.push_back({o, t});
    return f;
  }();
  return formats;
}

bool is_image_type(cl_mem_object_type t) {
  switch (t) {
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    case CL_MEM_OBJECT_IMAGE2D:
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
    case CL_MEM_OBJECT_IMAGE3D:
      return true;
    default:
      return false;
  }
}

// The formats of the image-capable devices in the context (they all read and write the same
// formats, through the same builtins).
const std::vector<cl_image_format>& context_image_formats(const Context& c) {
  static const std::vector<cl_image_format> none;
  return c.any_device(supports_images) ? builtin_image_formats() : none;
}

bool format_supported(const Context& c, const cl_image_format& f) {
  for (const cl_image_format& g : context_image_formats(c))
    if (g.image_channel_order == f.image_channel_order &&
        g.image_channel_data_type == f.image_channel_data_type)
      return true;
  return false;
}

// a * b, or CL_INVALID_IMAGE_SIZE when the image's bytes would not fit in size_t.
size_t image_mul(size_t a, size_t b) {
  size_t r;
  check(!__builtin_mul_overflow(a, b, &r), CL_INVALID_IMAGE_SIZE, "the image's size overflows");
  return r;
}

// Channel orders a 2D image made from another 2D image may have (the spec's table), besides the
// source's own.
bool compatible_view(cl_channel_order view, cl_channel_order source) {
  const std::pair<cl_channel_order, cl_channel_order> pairs[] = {
      {CL_sBGRA, CL_BGRA}, {CL_BGRA, CL_sBGRA}, {CL_sRGBA, CL_RGBA},
      {CL_RGBA, CL_sRGBA}, {CL_sRGB, CL_RGB},   {CL_RGB, CL_sRGB},
      {CL_sRGBx, CL_RGBx}, {CL_RGBx, CL_sRGBx}, {CL_DEPTH, CL_R}};
  if (view == source) return true;
  for (auto [v, s] : pairs)
    if (v == view && s == source) return true;
  return false;
}

cl_mem create_image(cl_context context, const cl_mem_properties* properties, cl_mem_flags flags,
                    const cl_image_format* format, const cl_image_desc* desc, void* host_ptr) {
  Context& c = *resolve<Context>(context);
  auto props = read_properties(properties, [](cl_mem_properties, cl_mem_properties) {
    fail(CL_INVALID_PROPERTY, "no image properties are supported");
  });
  // The spec: CL_INVALID_VALUE if values specified in flags are not valid.
  check_buffer_flags(flags);
  // The spec: CL_INVALID_IMAGE_FORMAT_DESCRIPTOR if values specified in image_format are not
  // valid or if image_format is NULL.
  check(format != nullptr, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "image_format is NULL");
  ImageInfo image;
  image.format = *format;
  image.element_size = image_element_size(*format, &image.num_channels);
  check(image.element_size != 0, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
        "the channel order and data type do not make a valid image format");
  // The spec: CL_INVALID_IMAGE_DESCRIPTOR if values specified in image_desc are not valid or if
  // image_desc is NULL.
  check(desc != nullptr, CL_INVALID_IMAGE_DESCRIPTOR, "image_desc is NULL");
  const cl_mem_object_type type = desc->image_type;
  check(is_image_type(type), CL_INVALID_IMAGE_DESCRIPTOR, "image_type is not an image type");
  image.type = type;
  // The spec: num_mip_levels and num_samples must be 0.
  check(desc->num_mip_levels == 0 && desc->num_samples == 0, CL_INVALID_IMAGE_DESCRIPTOR,
        "num_mip_levels and num_samples must be 0");
  const bool has_height = type == CL_MEM_OBJECT_IMAGE2D || type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                          type == CL_MEM_OBJECT_IMAGE3D;
  check(desc->image_width >= 1, CL_INVALID_IMAGE_DESCRIPTOR, "image_width is 0");
  check(!has_height || desc->image_height >= 1, CL_INVALID_IMAGE_DESCRIPTOR, "image_height is 0");
  check(type != CL_MEM_OBJECT_IMAGE3D || desc->image_depth >= 1, CL_INVALID_IMAGE_DESCRIPTOR,
        "image_depth is 0");
  check(!image.is_array() || desc->image_array_size >= 1, CL_INVALID_IMAGE_DESCRIPTOR,
        "image_array_size is 0");
  image.width = desc->image_width;
  if (has_height) image.height = desc->image_height;
  if (type == CL_MEM_OBJECT_IMAGE3D) image.depth = desc->image_depth;
  if (image.is_array()) image.array_size = desc->image_array_size;

  // The spec: mem_object can be a buffer if image_type is CL_MEM_OBJECT_IMAGE1D_BUFFER or
  // CL_MEM_OBJECT_IMAGE2D, an image if image_type is CL_MEM_OBJECT_IMAGE2D; otherwise NULL.
  MemObject* source = nullptr;
  if (desc->mem_object) {
    try {
      source = resolve<MemObject>(desc->mem_object);
    } catch (const Error&) {
      fail(CL_INVALID_IMAGE_DESCRIPTOR, "mem_object is not a valid memory object");
    }
    check(&source->context() == &c, CL_INVALID_IMAGE_DESCRIPTOR,
          "mem_object belongs to another context");
    const bool ok =
        (type == CL_MEM_OBJECT_IMAGE1D_BUFFER && source->type() == CL_MEM_OBJECT_BUFFER) ||
        (type == CL_MEM_OBJECT_IMAGE2D &&
         (source->type() == CL_MEM_OBJECT_BUFFER || source->type() == CL_MEM_OBJECT_IMAGE2D));
    check(ok, CL_INVALID_IMAGE_DESCRIPTOR, "mem_object is not allowed for this image type");
  }
  check(type != CL_MEM_OBJECT_IMAGE1D_BUFFER || source, CL_INVALID_IMAGE_DESCRIPTOR,
        "a 1D image buffer needs a buffer in mem_object");

  // The spec: CL_INVALID_OPERATION if there are no devices in context that support images.
  check(c.any_device(supports_images), CL_INVALID_OPERATION,
        "no device in the context supports images");
  // The spec: CL_INVALID_IMAGE_SIZE if image dimensions specified in image_desc exceed the
  // maximum image dimensions described in the Device Queries table for all devices in context.
  bool fit = false;
  for (const auto& d : c.devices()) fit = fit || image_fits_device(d->info(), image);
  check(fit, CL_INVALID_IMAGE_SIZE, "the image exceeds the image size limits of every device");

  if (source) {
    // The spec: CL_INVALID_VALUE if an image is being created from another memory object and
    // flags ask an access mem_object does not allow, or a host-pointer flag.
    check((flags & kHostPtrFlags) == 0, CL_INVALID_VALUE,
          "host-pointer flags are inherited from mem_object, not given");
    const cl_mem_flags sf = source->flags();
    check(!((sf & CL_MEM_WRITE_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))),
          CL_INVALID_VALUE, "mem_object is write-only");
    check(!((sf & CL_MEM_READ_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))),
          CL_INVALID_VALUE, "mem_object is read-only");
    check(!((sf & CL_MEM_HOST_WRITE_ONLY) && (flags & CL_MEM_HOST_READ_ONLY)), CL_INVALID_VALUE,
          "mem_object is host-write-only");
    check(!((sf & CL_MEM_HOST_READ_ONLY) && (flags & CL_MEM_HOST_WRITE_ONLY)), CL_INVALID_VALUE,
          "mem_object is host-read-only");
    check(!((sf & CL_MEM_HOST_NO_ACCESS) &&
            (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY))),
          CL_INVALID_VALUE, "mem_object has no host access");
  }
  // The spec: CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or
  // CL_MEM_COPY_HOST_PTR are set in flags or if host_ptr is not NULL but they are not set.
  const bool wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  check(wants_ptr == (host_ptr != nullptr), CL_INVALID_HOST_PTR,
        "host_ptr must be given exactly when USE_HOST_PTR or COPY_HOST_PTR is set");

  // Pitches. The spec: image_row_pitch must be 0 if host_ptr is NULL, and can be either 0 or
  // >= image_width * size of element if host_ptr is not NULL; if not 0, a multiple of the
  // element size. image_slice_pitch likewise (>= row pitch * height for a 2D array or 3D image,
  // >= row pitch for a 1D array), a multiple of the row pitch. (An image made from a buffer
  // gives its row pitch like a host_ptr.)
  const size_t min_row = image_mul(image.width, image.element_size);
  const bool pitches_given = host_ptr != nullptr || source != nullptr;
  check(pitches_given || desc->image_row_pitch == 0, CL_INVALID_IMAGE_DESCRIPTOR,
        "image_row_pitch must be 0 when host_ptr is NULL");
  size_t row_pitch = desc->image_row_pitch ? desc->image_row_pitch : min_row;
  check(row_pitch >= min_row, CL_INVALID_IMAGE_DESCRIPTOR,
        "image_row_pitch is smaller than image_width * element size");
  check(row_pitch % image.element_size == 0, CL_INVALID_IMAGE_DESCRIPTOR,
        "image_row_pitch is not a multiple of the element size");
  const bool has_slices = type == CL_MEM_OBJECT_IMAGE3D || image.is_array();
  size_t slice_pitch =
      type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? row_pitch : image_mul(row_pitch, image.height);
  if (has_slices) {
    check(host_ptr != nullptr || desc->image_slice_pitch == 0, CL_INVALID_IMAGE_DESCRIPTOR,
          "image_slice_pitch must be 0 when host_ptr is NULL");
    if (desc->image_slice_pitch) {
      check(desc->image_slice_pitch >= slice_pitch, CL_INVALID_IMAGE_DESCRIPTOR,
            "image_slice_pitch is too small for the rows of a slice");
      check(desc->image_slice_pitch % row_pitch == 0, CL_INVALID_IMAGE_DESCRIPTOR,
            "image_slice_pitch is not a multiple of image_row_pitch");
      slice_pitch = desc->image_slice_pitch;
    }
  }
  image_mul(slice_pitch, type == CL_MEM_OBJECT_IMAGE3D ? image.depth : image.array_size);

  if (!(flags & kAccessFlags)) flags |= source ? source->flags() & kAccessFlags : CL_MEM_READ_WRITE;

  if (source) {
    if (!(flags & kHostAccessFlags)) flags |= source->flags() & kHostAccessFlags;
    flags |= source->flags() & kHostPtrFlags;
    if (source->type() == CL_MEM_OBJECT_BUFFER) {
      // The spec: the row pitch of a 2D image made from a buffer is a multiple of
      // CL_DEVICE_IMAGE_PITCH_ALIGNMENT, and the buffer's address of
      // CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT (both in pixels), of the devices that support
      // images: else CL_INVALID_IMAGE_FORMAT_DESCRIPTOR.
      if (type == CL_MEM_OBJECT_IMAGE2D) {
        for (const auto& d : c.devices()) {
          if (!d->info().image_support) continue;
          const size_t pitch_align = std::max<size_t>(d->info().image_pitch_alignment, 1);
          const size_t base_align = std::max<size_t>(d->info().image_base_address_alignment, 1);
          check(row_pitch % (pitch_align * image.element_size) == 0,
                CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
                "the row pitch is not a multiple of CL_DEVICE_IMAGE_PITCH_ALIGNMENT");
          check(reinterpret_cast<uintptr_t>(source->host_data()) %
                        (base_align * image.element_size) ==
                    0,
                CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
                "the buffer is not aligned to CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT");
        }
      }
      image.row_pitch = row_pitch;
      image.slice_pitch = slice_pitch;
      // The spec: image_width * element size (1D image buffer), image_row_pitch * image_height
      // (2D) must be <= the size of the buffer.
      check(image.size() <= source->size(), CL_INVALID_IMAGE_SIZE,
            "the image is larger than the buffer in mem_object");
    } else {
      // The spec: a 2D image made from a 2D image: every value of image_desc matches
      // mem_object's (else CL_INVALID_IMAGE_DESCRIPTOR); the channel data type matches and the
      // channel order is one the table allows, with as many channels (else
      // CL_INVALID_IMAGE_FORMAT_DESCRIPTOR).
      const ImageInfo& si = *source->image();
      check(desc->image_width == si.width && desc->image_height == si.height &&
                (desc->image_row_pitch == 0 || desc->image_row_pitch == si.row_pitch),
            CL_INVALID_IMAGE_DESCRIPTOR, "image_desc does not match mem_object's");
      check(format->image_channel_data_type == si.format.image_channel_data_type &&
                compatible_view(format->image_channel_order, si.format.image_channel_order) &&
                image.num_channels == si.num_channels,
            CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
            "the format is not a view of mem_object's format the spec allows");
      image.row_pitch = si.row_pitch;
      image.slice_pitch = si.slice_pitch;
    }
    // The spec: CL_IMAGE_FORMAT_NOT_SUPPORTED if the image_format is not supported.
    check(format_supported(c, *format), CL_IMAGE_FORMAT_NOT_SUPPORTED,
          "the image format is not supported");
    return make_api_object<MemObject>(*source, flags, image, std::move(props))->handle();
  }
  check(format_supported(c, *format), CL_IMAGE_FORMAT_NOT_SUPPORTED,
        "the image format is not supported");
  // USE_HOST_PTR: the image's bytes are the application's, with its pitches. Otherwise the
  // image is stored with the smallest pitches (COPY_HOST_PTR copies row by row).
  image.row_pitch = (flags & CL_MEM_USE_HOST_PTR) ? row_pitch : min_row;
  image.slice_pitch =
      type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? image.row_pitch : image.row_pitch * image.height;
  if ((flags & CL_MEM_USE_HOST_PTR) && has_slices) image.slice_pitch = slice_pitch;
  return make_api_object<MemObject>(Ref<Context>(&c), flags, image, host_ptr, row_pitch,
                                    slice_pitch, std::move(props))
      ->handle();
}

}  // namespace

cl_mem clCreateImage(cl_context context, cl_mem_flags flags, const cl_image_format* image_format,
                     const cl_image_desc* image_desc, void* host_ptr) {
  return create_image(context, nullptr, flags, image_format, image_desc, host_ptr);
}

cl_mem clCreateImageWithProperties(cl_context context, const cl_mem_properties* properties,
                                   cl_mem_flags flags, const cl_image_format* image_format,
                                   const cl_image_desc* image_desc, void* host_ptr) {
  return create_image(context, properties, flags, image_format, image_desc, host_ptr);
}

namespace {
// clCreateImage2D/3D (OpenCL 1.1): pitches that break the rules are CL_INVALID_IMAGE_SIZE there,
// where clCreateImage says CL_INVALID_IMAGE_DESCRIPTOR.
cl_mem create_image_1x(cl_context context, cl_mem_flags flags, const cl_image_format* format,
                       const cl_image_desc& desc, void* host_ptr) {
  try {
    return create_image(context, nullptr, flags, format, &desc, host_ptr);
  } catch (const Error& e) {
    if (e.code() == CL_INVALID_IMAGE_DESCRIPTOR) fail(CL_INVALID_IMAGE_SIZE, e.what());
    throw;
  }
}
}  // namespace

cl_mem clCreateImage2D(cl_context context, cl_mem_flags flags, const cl_image_format* image_format,
                       size_t image_width, size_t image_height, size_t image_row_pitch,
                       void* host_ptr) {
  // OpenCL 1.1: CL_INVALID_IMAGE_SIZE if image_width or image_height are 0 (clCreateImage says
  // CL_INVALID_IMAGE_DESCRIPTOR for the same).
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = image_width;
  desc.image_height = image_height;
  desc.image_row_pitch = image_row_pitch;
  resolve<Context>(context);
  check(image_width && image_height, CL_INVALID_IMAGE_SIZE, "image_width or image_height is 0");
  return create_image_1x(context, flags, image_format, desc, host_ptr);
}

cl_mem clCreateImage3D(cl_context context, cl_mem_flags flags, const cl_image_format* image_format,
                       size_t image_width, size_t image_height, size_t image_depth,
                       size_t image_row_pitch, size_t image_slice_pitch, void* host_ptr) {
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE3D;
  desc.image_width = image_width;
  desc.image_height = image_height;
  desc.image_depth = image_depth;
  desc.image_row_pitch = image_row_pitch;
  desc.image_slice_pitch = image_slice_pitch;
  resolve<Context>(context);
  // OpenCL 1.1: CL_INVALID_IMAGE_SIZE if image_width, image_height are 0 or image_depth <= 1.
  check(image_width && image_height && image_depth > 1, CL_INVALID_IMAGE_SIZE,
        "image_width or image_height is 0, or image_depth <= 1");
  return create_image_1x(context, flags, image_format, desc, host_ptr);
}

void clGetSupportedImageFormats(cl_context context, cl_mem_flags flags,
                                cl_mem_object_type image_type, cl_uint num_entries,
                                cl_image_format* image_formats, cl_uint* num_image_formats) {
  Context& c = *resolve<Context>(context);
  // The spec: CL_INVALID_VALUE if flags or image_type are not valid, or if num_entries is 0 and
  // image_formats is not NULL.
  check((flags &
         ~(kAccessFlags | kHostPtrFlags | kHostAccessFlags | CL_MEM_KERNEL_READ_AND_WRITE)) == 0,
        CL_INVALID_VALUE, "unknown memory flags");
  check(is_image_type(image_type), CL_INVALID_VALUE, "image_type is not an image type");
  check(!(num_entries == 0 && image_formats), CL_INVALID_VALUE,
        "num_entries is 0 but image_formats is not NULL");
  // The union over the context's devices; every format reads and writes with every access.
  const auto& formats = context_image_formats(c);
  if (image_formats)
    for (size_t i = 0; i < formats.size() && i < num_entries; ++i) image_formats[i] = formats[i];
  if (num_image_formats) *num_image_formats = static_cast<cl_uint>(formats.size());
}

void clGetImageInfo(cl_mem image, cl_image_info param_name, size_t param_value_size,
                    void* param_value, size_t* param_value_size_ret) {
  MemObject& m = *resolve<MemObject>(image);
  // The spec: CL_INVALID_MEM_OBJECT if image is a not a valid image object.
  check(m.image() != nullptr, CL_INVALID_MEM_OBJECT, "the memory object is not an image");
  const ImageInfo& i = *m.image();
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  const cl_mem_object_type t = i.type;
  const bool one_d = t == CL_MEM_OBJECT_IMAGE1D || t == CL_MEM_OBJECT_IMAGE1D_BUFFER;
  switch (param_name) {
    case CL_IMAGE_FORMAT:
      return out.value(i.format);
    case CL_IMAGE_ELEMENT_SIZE:
      return out.value(i.element_size);
    case CL_IMAGE_ROW_PITCH:
      return out.value(i.row_pitch);
    // 0 for a 1D image, 1D image buffer and 2D image.
    case CL_IMAGE_SLICE_PITCH:
      return out.value<size_t>(one_d || t == CL_MEM_OBJECT_IMAGE2D ? 0 : i.slice_pitch);
    case CL_IMAGE_WIDTH:
      return out.value(i.width);
    // 0 for 1D images, 1D image buffers and 1D arrays.
    case CL_IMAGE_HEIGHT:
      return out.value<size_t>(one_d || t == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 0 : i.height);
    // 0 unless 3D.
    case CL_IMAGE_DEPTH:
      return out.value<size_t>(t == CL_MEM_OBJECT_IMAGE3D ? i.depth : 0);
    case CL_IMAGE_ARRAY_SIZE:
      return out.value<size_t>(i.is_array() ? i.array_size : 0);
    // The buffer of a 1D image buffer (deprecated query: mem_object for a 2D image from a buffer).
    case CL_IMAGE_BUFFER:
      return out.value(m.associated() && m.associated()->type() == CL_MEM_OBJECT_BUFFER
                           ? m.associated()->handle()
                           : cl_mem{});
    case CL_IMAGE_NUM_MIP_LEVELS:
      return out.value(i.num_mip_levels);
    case CL_IMAGE_NUM_SAMPLES:
      return out.value(i.num_samples);
    default:
      unknown_param("image");
  }
}
}  // namespace manifold::api::impl
