// Memory-object entry points: buffers and sub-buffers. Images and pipes are optional in
// OpenCL 3.0 and no Manifold device reports them yet: those calls give the spec's codes.
#include "api/common.h"
#include "api/impl.h"
#include "core/info.h"
#include "core/memory.h"

namespace manifold::api::impl {
namespace {

constexpr cl_mem_flags kAccessFlags = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
constexpr cl_mem_flags kHostPtrFlags = CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;
constexpr cl_mem_flags kHostAccessFlags = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;

bool at_most_one(cl_mem_flags flags, cl_mem_flags group) {
  const cl_mem_flags f = flags & group;
  return (f & (f - 1)) == 0;
}

// The spec: CL_INVALID_VALUE if values specified in flags are not valid (unknown bits, or
// mutually exclusive ones together).
void check_buffer_flags(cl_mem_flags flags) {
  check((flags & ~(kAccessFlags | kHostPtrFlags | kHostAccessFlags)) == 0, CL_INVALID_VALUE, "unknown memory flags");
  check(at_most_one(flags, kAccessFlags), CL_INVALID_VALUE, "more than one of READ_WRITE, WRITE_ONLY, READ_ONLY");
  check(at_most_one(flags, kHostAccessFlags), CL_INVALID_VALUE, "more than one host access flag");
  check(!((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))),
        CL_INVALID_VALUE, "CL_MEM_USE_HOST_PTR with ALLOC_HOST_PTR or COPY_HOST_PTR");
}

cl_mem create_buffer(cl_context context, const cl_mem_properties* properties, cl_mem_flags flags, size_t size,
                     void* host_ptr) {
  Context& c = *resolve<Context>(context);
  auto props = read_properties(properties, [](cl_mem_properties, cl_mem_properties) {
    fail(CL_INVALID_PROPERTY, "no buffer properties are supported");
  });
  check_buffer_flags(flags);
  if (!(flags & kAccessFlags)) flags |= CL_MEM_READ_WRITE;
  // The spec: CL_INVALID_BUFFER_SIZE if size is 0 or greater than CL_DEVICE_MAX_MEM_ALLOC_SIZE
  // for all devices in context.
  check(size > 0, CL_INVALID_BUFFER_SIZE, "size is 0");
  bool fits = false;
  for (const auto& d : c.devices()) fits = fits || size <= d->info().max_mem_alloc_size;
  check(fits, CL_INVALID_BUFFER_SIZE, "size exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE of every device");
  // The spec: CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or
  // CL_MEM_COPY_HOST_PTR are set, or host_ptr is not NULL and they are not.
  const bool wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  check(wants_ptr == (host_ptr != nullptr), CL_INVALID_HOST_PTR,
        "host_ptr must be given exactly when USE_HOST_PTR or COPY_HOST_PTR is set");
  return make_api_object<MemObject>(Ref<Context>(&c), flags, size, host_ptr, std::move(props))->handle();
}

}  // namespace

cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host_ptr) {
  return create_buffer(context, nullptr, flags, size, host_ptr);
}

cl_mem clCreateBufferWithProperties(cl_context context, const cl_mem_properties* properties, cl_mem_flags flags,
                                    size_t size, void* host_ptr) {
  return create_buffer(context, properties, flags, size, host_ptr);
}

cl_mem clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type buffer_create_type,
                         const void* buffer_create_info) {
  MemObject& parent = *resolve<MemObject>(buffer);
  // The spec: CL_INVALID_MEM_OBJECT if buffer is a sub-buffer object.
  check(parent.parent() == nullptr, CL_INVALID_MEM_OBJECT, "buffer is itself a sub-buffer");
  check_buffer_flags(flags);
  // The spec: CL_INVALID_VALUE if flags requests host-pointer behaviour (inherited instead),
  // or an access the parent does not allow.
  check((flags & kHostPtrFlags) == 0, CL_INVALID_VALUE, "host-pointer flags are inherited, not given");
  const cl_mem_flags pf = parent.flags();
  check(!((pf & CL_MEM_WRITE_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))), CL_INVALID_VALUE,
        "the parent is write-only");
  check(!((pf & CL_MEM_READ_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))), CL_INVALID_VALUE,
        "the parent is read-only");
  check(!((pf & CL_MEM_HOST_WRITE_ONLY) && (flags & CL_MEM_HOST_READ_ONLY)), CL_INVALID_VALUE,
        "the parent is host-write-only");
  check(!((pf & CL_MEM_HOST_READ_ONLY) && (flags & CL_MEM_HOST_WRITE_ONLY)), CL_INVALID_VALUE,
        "the parent is host-read-only");
  check(!((pf & CL_MEM_HOST_NO_ACCESS) && (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY))),
        CL_INVALID_VALUE, "the parent has no host access");
  check(buffer_create_type == CL_BUFFER_CREATE_TYPE_REGION, CL_INVALID_VALUE, "unknown buffer_create_type");
  check(buffer_create_info != nullptr, CL_INVALID_VALUE, "buffer_create_info is NULL");
  const auto& region = *static_cast<const cl_buffer_region*>(buffer_create_info);
  check(region.size > 0, CL_INVALID_BUFFER_SIZE, "the region's size is 0");
  check(region.origin <= parent.size() && region.size <= parent.size() - region.origin, CL_INVALID_VALUE,
        "the region lies outside the buffer");
  // The spec: CL_MISALIGNED_SUB_BUFFER_OFFSET if there are no devices in context associated
  // with buffer for which the origin is aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN.
  bool aligned = false;
  for (const auto& d : parent.context().devices())
    aligned = aligned || region.origin % (d->info().mem_base_addr_align / 8) == 0;
  check(aligned, CL_MISALIGNED_SUB_BUFFER_OFFSET, "origin is not aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN");

  // Unspecified access and host-access flags are inherited; host-pointer flags always are.
  if (!(flags & kAccessFlags)) flags |= pf & kAccessFlags;
  if (!(flags & kHostAccessFlags)) flags |= pf & kHostAccessFlags;
  flags |= pf & kHostPtrFlags;
  return make_api_object<MemObject>(parent, flags, region.origin, region.size)->handle();
}

void clRetainMemObject(cl_mem memobj) { resolve<MemObject>(memobj)->retain_api(); }
void clReleaseMemObject(cl_mem memobj) { resolve<MemObject>(memobj)->release_api(); }

void clGetMemObjectInfo(cl_mem memobj, cl_mem_info param_name, size_t param_value_size, void* param_value,
                        size_t* param_value_size_ret) {
  MemObject& m = *resolve<MemObject>(memobj);
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_MEM_TYPE: return out.value(m.type());
    case CL_MEM_FLAGS: return out.value(m.flags());
    case CL_MEM_SIZE: return out.value(m.size());
    case CL_MEM_HOST_PTR: return out.value(m.host_ptr());
    case CL_MEM_MAP_COUNT: return out.value(m.map_count());
    case CL_MEM_REFERENCE_COUNT: return out.value(m.api_reference_count());
    case CL_MEM_CONTEXT: return out.value(m.context().handle());
    case CL_MEM_ASSOCIATED_MEMOBJECT: return out.value(m.parent() ? m.parent()->handle() : cl_mem{});
    case CL_MEM_OFFSET: return out.value(m.origin());
    case CL_MEM_USES_SVM_POINTER: return out.value<cl_bool>(CL_FALSE);
    case CL_MEM_PROPERTIES: return out.array(m.properties());
    default: unknown_param("memory object");
  }
}

void clSetMemObjectDestructorCallback(cl_mem memobj, void(CL_CALLBACK* pfn_notify)(cl_mem, void*),
                                      void* user_data) {
  MemObject& m = *resolve<MemObject>(memobj);
  check(pfn_notify, CL_INVALID_VALUE, "pfn_notify is NULL");
  m.add_destructor_callback(pfn_notify, user_data);
}

// ---- Images: no device supports them (CL_DEVICE_IMAGE_SUPPORT is CL_FALSE) ----

namespace {
[[noreturn]] void no_images(cl_context context) {
  resolve<Context>(context);
  // The spec: CL_INVALID_OPERATION if there are no devices in context that support images.
  fail(CL_INVALID_OPERATION, "no device in the context supports images");
}
}  // namespace

cl_mem clCreateImage(cl_context context, cl_mem_flags, const cl_image_format*, const cl_image_desc*, void*) {
  no_images(context);
}
cl_mem clCreateImageWithProperties(cl_context context, const cl_mem_properties*, cl_mem_flags,
                                   const cl_image_format*, const cl_image_desc*, void*) {
  no_images(context);
}
cl_mem clCreateImage2D(cl_context context, cl_mem_flags, const cl_image_format*, size_t, size_t, size_t, void*) {
  no_images(context);
}
cl_mem clCreateImage3D(cl_context context, cl_mem_flags, const cl_image_format*, size_t, size_t, size_t, size_t,
                       size_t, void*) {
  no_images(context);
}

void clGetSupportedImageFormats(cl_context context, cl_mem_flags flags, cl_mem_object_type image_type,
                                cl_uint num_entries, cl_image_format* image_formats, cl_uint* num_image_formats) {
  resolve<Context>(context);
  check((flags & ~(kAccessFlags | kHostPtrFlags | kHostAccessFlags | CL_MEM_KERNEL_READ_AND_WRITE)) == 0,
        CL_INVALID_VALUE, "unknown memory flags");
  switch (image_type) {
    case CL_MEM_OBJECT_IMAGE1D: case CL_MEM_OBJECT_IMAGE1D_BUFFER: case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    case CL_MEM_OBJECT_IMAGE2D: case CL_MEM_OBJECT_IMAGE2D_ARRAY: case CL_MEM_OBJECT_IMAGE3D:
      break;
    default:
      fail(CL_INVALID_VALUE, "image_type is not an image type");
  }
  check(!(num_entries == 0 && image_formats), CL_INVALID_VALUE, "num_entries is 0 but image_formats is not NULL");
  if (num_image_formats) *num_image_formats = 0;  // no device supports images
}

void clGetImageInfo(cl_mem image, cl_image_info, size_t, void*, size_t*) {
  resolve<MemObject>(image);
  fail(CL_INVALID_MEM_OBJECT, "the memory object is not an image");
}

// ---- Pipes: no device supports them (CL_DEVICE_PIPE_SUPPORT is CL_FALSE) ----

cl_mem clCreatePipe(cl_context context, cl_mem_flags, cl_uint, cl_uint, const cl_pipe_properties*) {
  resolve<Context>(context);
  // The spec (3.0): CL_INVALID_OPERATION if no devices in context support pipes.
  fail(CL_INVALID_OPERATION, "no device in the context supports pipes");
}

void clGetPipeInfo(cl_mem pipe, cl_pipe_info, size_t, void*, size_t*) {
  resolve<MemObject>(pipe);
  fail(CL_INVALID_MEM_OBJECT, "the memory object is not a pipe");
}

}  // namespace manifold::api::impl
