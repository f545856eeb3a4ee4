// Memory-object entry points: buffers, sub-buffers, imported memory, the queries every memory
// object answers (images: api/memory_images.cpp). Pipes are optional in OpenCL 3.0 and no
// Manifold device reports them: those calls give the spec's codes.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "api/common.h"
#include "api/impl.h"
#include "api/memory_flags.h"
#include "core/info.h"
#include "core/memory.h"
#include "svm/svm_space.h"

namespace manifold::api::impl {
namespace {

bool at_most_one(cl_mem_flags flags, cl_mem_flags group) {
  const cl_mem_flags f = flags & group;
  return (f & (f - 1)) == 0;
}

}  // namespace

// The spec: CL_INVALID_VALUE if values specified in flags are not valid (unknown bits, or
// mutually exclusive ones together).
void check_buffer_flags(cl_mem_flags flags) {
  check((flags & ~(kAccessFlags | kHostPtrFlags | kHostAccessFlags)) == 0, CL_INVALID_VALUE,
        "unknown memory flags");
  check(at_most_one(flags, kAccessFlags), CL_INVALID_VALUE,
        "more than one of READ_WRITE, WRITE_ONLY, READ_ONLY");
  check(at_most_one(flags, kHostAccessFlags), CL_INVALID_VALUE, "more than one host access flag");
  check(
      !((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))),
      CL_INVALID_VALUE, "CL_MEM_USE_HOST_PTR with ALLOC_HOST_PTR or COPY_HOST_PTR");
}

namespace {

cl_mem create_buffer(cl_context context, const cl_mem_properties* properties, cl_mem_flags flags,
                     size_t size, void* host_ptr) {
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
  // The 3.0 spec: if host_ptr is a pointer returned by clSVMAlloc, the buffer uses the SVM
  // memory (CL_MEM_USES_SVM_POINTER): it shares the allocation's bytes and their migration.
  if (flags & CL_MEM_USE_HOST_PTR)
    if (const SvmSpace* space = SvmSpace::get(); space && space->contains(host_ptr)) {
      size_t offset = 0;
      const Ref<MemObject> svm = space->find(host_ptr, &offset, &c);
      check(svm != nullptr, CL_INVALID_HOST_PTR,
            "host_ptr lies in the SVM range but in no allocation of this context");
      // The spec: CL_INVALID_BUFFER_SIZE if CL_MEM_USE_HOST_PTR is set, host_ptr is a pointer
      // returned by clSVMAlloc and size is greater than the size passed to clSVMAlloc.
      check(size <= svm->size() - offset, CL_INVALID_BUFFER_SIZE,
            "the buffer runs past the end of its SVM allocation");
      return make_api_object<MemObject>(Ref<Context>(&c), flags, size,
                                        MemObject::OverSvm{svm.get(), offset}, std::move(props))
          ->handle();
    }
  return make_api_object<MemObject>(Ref<Context>(&c), flags, size, host_ptr, std::move(props))
      ->handle();
}

bool has_extension(const DeviceInfo& info, const char* name) {
  for (const cl_name_version& e : info.extensions)
    if (std::strcmp(e.name, name) == 0) return true;
  return false;
}

struct DmaBufMapping {
  void* address;
  std::shared_ptr<void> keeper;  // unmaps
  cl_mem_flags flags;
};

// Maps `size` bytes of the dma_buf `fd` into the process (devices that import dma_buf work in
// the host's address space). The seed: flags attached to the dma_buf take precedence, so a
// dma_buf that cannot be mapped for writing makes a read-only buffer.
DmaBufMapping map_dma_buf(int fd, size_t size, cl_mem_flags flags) {
  // Only a dma_buf is one: its file is an anonymous inode named "dmabuf".
  char link[64] = "";
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = fd >= 0 ? readlink(path.c_str(), link, sizeof link - 1) : -1;
  check(n > 0 && std::strstr(link, "dmabuf") != nullptr, CL_INVALID_VALUE,
        "memory does not point at a dma_buf file descriptor");
  const off_t length = lseek(fd, 0, SEEK_END);
  check(length >= 0 && size <= size_t(length), CL_INVALID_VALUE, "size is larger than the dma_buf");
  void* address = MAP_FAILED;
  if (!(flags & CL_MEM_READ_ONLY))
    address = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (address == MAP_FAILED) {
    address = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    flags = (flags & ~kAccessFlags) | CL_MEM_READ_ONLY;
  }
  check(address != MAP_FAILED, CL_INVALID_OPERATION, "the dma_buf cannot be mapped");
  return {address, std::shared_ptr<void>(address, [size](void* p) { munmap(p, size); }), flags};
}

}  // namespace

// cl_arm_import_memory (revision 6): the application's memory as a buffer every device of the
// context uses in place, never through a copy.
cl_mem clImportMemoryARM(cl_context context, cl_mem_flags flags,
                         const cl_import_properties_arm* properties, void* memory, size_t size) {
  // The spec: CL_INVALID_CONTEXT on invalid context.
  Context& c = *resolve<Context>(context);
  // The spec: CL_INVALID_PROPERTY when invalid properties are passed. CL_IMPORT_TYPE_ARM is the
  // one property: HOST (the default) every device here imports; DMA_BUF the devices that
  // report cl_arm_import_memory_dma_buf (those working in the host's address space map it);
  // PROTECTED memory no device of Manifold can honour.
  cl_import_properties_arm type = CL_IMPORT_TYPE_HOST_ARM;
  read_properties(properties, [&](cl_import_properties_arm name, cl_import_properties_arm value) {
    check(name == CL_IMPORT_TYPE_ARM, CL_INVALID_PROPERTY, "unknown import property");
    check(value == CL_IMPORT_TYPE_HOST_ARM || value == CL_IMPORT_TYPE_DMA_BUF_ARM,
          CL_INVALID_PROPERTY,
          value == CL_IMPORT_TYPE_PROTECTED_ARM ? "no device of Manifold imports protected memory"
                                                : "unknown CL_IMPORT_TYPE_ARM");
    type = value;
  });
  if (type == CL_IMPORT_TYPE_DMA_BUF_ARM)
    for (const Ref<Device>& d : c.devices())
      check(has_extension(d->info(), "cl_arm_import_memory_dma_buf"), CL_INVALID_PROPERTY,
            "a device of the context cannot import dma_buf memory");
  // The spec: CL_INVALID_VALUE on invalid flag input. Valid: the access flags and the host
  // access flags (hints); CL_MEM_USE_HOST_PTR has no effect and is ignored.
  check((flags & ~(kAccessFlags | kHostAccessFlags | CL_MEM_USE_HOST_PTR)) == 0, CL_INVALID_VALUE,
        "flags other than the access, host access and USE_HOST_PTR flags");
  check(at_most_one(flags, kAccessFlags), CL_INVALID_VALUE,
        "more than one of READ_WRITE, WRITE_ONLY, READ_ONLY");
  check(at_most_one(flags, kHostAccessFlags), CL_INVALID_VALUE, "more than one host access flag");
  flags &= ~cl_mem_flags{CL_MEM_USE_HOST_PTR};
  if (!(flags & kAccessFlags)) flags |= CL_MEM_READ_WRITE;
  check(memory != nullptr, CL_INVALID_VALUE, "memory is NULL");
  check(size != 0 && size != CL_IMPORT_MEMORY_WHOLE_ALLOCATION_ARM, CL_INVALID_VALUE,
        "size must be the imported range's length");
  if (type == CL_IMPORT_TYPE_DMA_BUF_ARM) {
    DmaBufMapping mapping = map_dma_buf(*static_cast<const int*>(memory), size, flags);
    return make_api_object<MemObject>(Ref<Context>(&c), mapping.flags, size,
                                      MemObject::Import{mapping.address, mapping.keeper})
        ->handle();
  }
  // The spec: CL_INVALID_OPERATION when host virtual pages in the range are not mapped in the
  // process (pages not yet backed by physical memory are fine): msync fails with ENOMEM then.
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<uintptr_t>(memory) / page * page;
  const uintptr_t end = reinterpret_cast<uintptr_t>(memory) + size;
  check(end > first && msync(reinterpret_cast<void*>(first), end - first, MS_ASYNC) == 0,
        CL_INVALID_OPERATION, "the range is not mapped in the process");
  return make_api_object<MemObject>(Ref<Context>(&c), flags, size, MemObject::Import{memory})
      ->handle();
}

cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host_ptr) {
  return create_buffer(context, nullptr, flags, size, host_ptr);
}

cl_mem clCreateBufferWithProperties(cl_context context, const cl_mem_properties* properties,
                                    cl_mem_flags flags, size_t size, void* host_ptr) {
  return create_buffer(context, properties, flags, size, host_ptr);
}

cl_mem clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                         cl_buffer_create_type buffer_create_type, const void* buffer_create_info) {
  MemObject& parent = *resolve<MemObject>(buffer);
  // The spec: CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object or is a sub-buffer
  // object.
  check(parent.type() == CL_MEM_OBJECT_BUFFER, CL_INVALID_MEM_OBJECT, "buffer is not a buffer");
  check(parent.parent() == nullptr, CL_INVALID_MEM_OBJECT, "buffer is itself a sub-buffer");
  check_buffer_flags(flags);
  // The spec: CL_INVALID_VALUE if flags requests host-pointer behaviour (inherited instead),
  // or an access the parent does not allow.
  check((flags & kHostPtrFlags) == 0, CL_INVALID_VALUE,
        "host-pointer flags are inherited, not given");
  const cl_mem_flags pf = parent.flags();
  check(!((pf & CL_MEM_WRITE_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))),
        CL_INVALID_VALUE, "the parent is write-only");
  check(!((pf & CL_MEM_READ_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))),
        CL_INVALID_VALUE, "the parent is read-only");
  check(!((pf & CL_MEM_HOST_WRITE_ONLY) && (flags & CL_MEM_HOST_READ_ONLY)), CL_INVALID_VALUE,
        "the parent is host-write-only");
  check(!((pf & CL_MEM_HOST_READ_ONLY) && (flags & CL_MEM_HOST_WRITE_ONLY)), CL_INVALID_VALUE,
        "the parent is host-read-only");
  check(
      !((pf & CL_MEM_HOST_NO_ACCESS) && (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY))),
      CL_INVALID_VALUE, "the parent has no host access");
  check(buffer_create_type == CL_BUFFER_CREATE_TYPE_REGION, CL_INVALID_VALUE,
        "unknown buffer_create_type");
  check(buffer_create_info != nullptr, CL_INVALID_VALUE, "buffer_create_info is NULL");
  const auto& region = *static_cast<const cl_buffer_region*>(buffer_create_info);
  check(region.size > 0, CL_INVALID_BUFFER_SIZE, "the region's size is 0");
  check(region.origin <= parent.size() && region.size <= parent.size() - region.origin,
        CL_INVALID_VALUE, "the region lies outside the buffer");
  // The spec: CL_MISALIGNED_SUB_BUFFER_OFFSET if there are no devices in context associated
  // with buffer for which the origin is aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN.
  bool aligned = false;
  for (const auto& d : parent.context().devices())
    aligned = aligned || region.origin % (d->info().mem_base_addr_align / 8) == 0;
  check(aligned, CL_MISALIGNED_SUB_BUFFER_OFFSET,
        "origin is not aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN");

  // Unspecified access and host-access flags are inherited; host-pointer flags always are.
  if (!(flags & kAccessFlags)) flags |= pf & kAccessFlags;
  if (!(flags & kHostAccessFlags)) flags |= pf & kHostAccessFlags;
  flags |= pf & kHostPtrFlags;
  return make_api_object<MemObject>(parent, flags, region.origin, region.size)->handle();
}

void clRetainMemObject(cl_mem memobj) { resolve<MemObject>(memobj)->retain_api(); }
void clReleaseMemObject(cl_mem memobj) { resolve<MemObject>(memobj)->release_api(); }

void clGetMemObjectInfo(cl_mem memobj, cl_mem_info param_name, size_t param_value_size,
                        void* param_value, size_t* param_value_size_ret) {
  MemObject& m = *resolve<MemObject>(memobj);
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_MEM_TYPE:
      return out.value(m.type());
    case CL_MEM_FLAGS:
      return out.value(m.flags());
    case CL_MEM_SIZE:
      return out.value(m.size());
    case CL_MEM_HOST_PTR:
      return out.value(m.host_ptr());
    case CL_MEM_MAP_COUNT:
      return out.value(m.map_count());
    case CL_MEM_REFERENCE_COUNT:
      return out.value(m.api_reference_count());
    case CL_MEM_CONTEXT:
      return out.value(m.context().handle());
    case CL_MEM_ASSOCIATED_MEMOBJECT:
      return out.value(m.associated() ? m.associated()->handle() : cl_mem{});
    case CL_MEM_OFFSET:
      return out.value(m.origin());
    case CL_MEM_USES_SVM_POINTER:
      return out.value<cl_bool>(m.svm() ? CL_TRUE : CL_FALSE);
    case CL_MEM_PROPERTIES:
      return out.array(m.properties());
    default:
      unknown_param("memory object");
  }
}

void clSetMemObjectDestructorCallback(cl_mem memobj, void(CL_CALLBACK* pfn_notify)(cl_mem, void*),
                                      void* user_data) {
  MemObject& m = *resolve<MemObject>(memobj);
  check(pfn_notify, CL_INVALID_VALUE, "pfn_notify is NULL");
  m.add_destructor_callback(pfn_notify, user_data);
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
