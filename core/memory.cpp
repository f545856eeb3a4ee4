#include "core/memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace manifold {

MemObject::MemObject(Ref<Context> context, cl_mem_flags flags, size_t size, void* host_ptr,
                     std::vector<cl_mem_properties> properties)
    : context_(std::move(context)),
      flags_(flags),
      size_(size),
      properties_(std::move(properties)),
      // Bytes from the application are current in host memory only; otherwise the contents are
      // undefined until written, and any copy will do.
      residency_(size, flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)
                           ? Residency::bit(kHostPlace)
                           : Residency::kEverywhere) {
  allocate(host_ptr);
  if (flags & CL_MEM_COPY_HOST_PTR) std::memcpy(data_, host_ptr, size);
}

void MemObject::allocate(void* host_ptr) {
  if (flags_ & CL_MEM_USE_HOST_PTR) {
    host_ptr_ = host_ptr;
    data_ = static_cast<std::byte*>(host_ptr);  // zero-copy: the CPU device works in place
    return;
  }
  const size_t rounded = (size_ + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  data_ = static_cast<std::byte*>(std::aligned_alloc(kBufferAlignment, rounded));
  if (!data_) fail(CL_MEM_OBJECT_ALLOCATION_FAILURE, "cannot allocate the memory object's memory");
  owns_data_ = true;
}

MemObject::MemObject(Ref<Context> context, cl_mem_flags flags, size_t size, Import import)
    : context_(std::move(context)),
      flags_(flags),
      size_(size),
      data_(static_cast<std::byte*>(import.memory)),
      imported_(true),
      import_keeper_(std::move(import.keeper)),
      residency_(size, Residency::kEverywhere) {  // one range, current for every device
  try {
    for (Device* device : context_->executing_devices()) {
      if (device->shares_host_memory()) continue;  // uses the range as it is
      imports_.emplace_back(device, device->import_host(import.memory, size));
    }
  } catch (const Error& e) {
    release_imports();
    fail(CL_INVALID_OPERATION, std::string("a device cannot map the imported memory: ") + e.what());
  }
}

MemObject::MemObject(Ref<Context> context, cl_mem_flags flags, size_t size, Svm svm)
    : context_(std::move(context)),
      flags_(flags),
      size_(size),
      data_(static_cast<std::byte*>(svm.address)),
      imported_(svm.fine_grain),
      dma_data_(svm.dma_address),
      svm_keeper_(std::move(svm.keeper)),
      // The host may write an allocation before any command uses it (the CPU device shares its
      // pages): current in host memory, so that a device's first use copies them there.
      residency_(size, svm.fine_grain ? Residency::kEverywhere : Residency::bit(kHostPlace)) {
  if (!svm.fine_grain) return;
  try {
    for (Device* device : context_->executing_devices()) {
      if (device->shares_host_memory()) continue;
      const uint64_t address = device->import_host(svm.address, size);
      imports_.emplace_back(device, address);
      check(address == reinterpret_cast<uintptr_t>(svm.address), CL_MEM_OBJECT_ALLOCATION_FAILURE,
            "the device maps the host's pages at another address");
    }
  } catch (const Error& e) {
    release_imports();
    fail(CL_MEM_OBJECT_ALLOCATION_FAILURE,
         std::string("a device cannot use fine-grain SVM in place: ") + e.what());
  }
}

uint64_t MemObject::imported_address(const Device& device) const {
  const MemObject& r = root();
  for (const auto& [d, address] : r.imports_)
    if (d.get() == &device) return address;
  return reinterpret_cast<uintptr_t>(r.data_);  // a device that uses host memory in place
}

void MemObject::release_imports() {
  for (auto& [device, address] : imports_) device->release_import(data_);
  imports_.clear();
}

MemObject::MemObject(Ref<Context> context, cl_mem_flags flags, const ImageInfo& image,
                     void* host_ptr, size_t host_row_pitch, size_t host_slice_pitch,
                     std::vector<cl_mem_properties> properties)
    : context_(std::move(context)),
      flags_(flags),
      size_(image.size()),
      image_(std::make_unique<ImageInfo>(image)),
      properties_(std::move(properties)),
      residency_(size_, flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)
                            ? Residency::bit(kHostPlace)
                            : Residency::kEverywhere) {
  allocate(host_ptr);
  if (!(flags & CL_MEM_COPY_HOST_PTR)) return;
  // Row by row: the application's pitches may be wider than the image's.
  const size_t row_bytes = image.width * image.element_size;
  const size_t rows = image.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : image.height;
  const size_t slices = image.is_array() ? image.array_size : image.depth;
  for (size_t z = 0; z < slices; ++z)
    for (size_t y = 0; y < rows; ++y)
      std::memcpy(
          data_ + z * image.slice_pitch + y * image.row_pitch,
          static_cast<const std::byte*>(host_ptr) + z * host_slice_pitch + y * host_row_pitch,
          row_bytes);
}

MemObject::MemObject(MemObject& source, cl_mem_flags flags, const ImageInfo& image,
                     std::vector<cl_mem_properties> properties)
    : context_(&source.context()),
      flags_(flags),
      size_(image.size()),
      host_ptr_(source.host_ptr()),
      parent_(const_cast<MemObject*>(&source.root())),
      associated_(&source),
      origin_(source.root_offset()),
      image_(std::make_unique<ImageInfo>(image)),
      properties_(std::move(properties)),
      data_(source.host_data()),
      residency_(0, Residency::kEverywhere) {}  // unused: the root's residency applies

MemObject::MemObject(MemObject& parent, cl_mem_flags flags, size_t origin, size_t size)
    : context_(&parent.context()),
      flags_(flags),
      size_(size),
      parent_(const_cast<MemObject*>(&parent.root())),  // a buffer over SVM has a root too
      associated_(&parent),
      sub_buffer_(true),
      origin_(parent.root_offset() + origin),
      data_(parent.host_data() + origin),
      residency_(0, Residency::kEverywhere) {  // unused: a sub-buffer's residency is its root's
  if (parent.flags() & CL_MEM_USE_HOST_PTR)
    host_ptr_ = static_cast<std::byte*>(parent.host_ptr()) + origin;
}

MemObject::MemObject(Ref<Context> context, cl_mem_flags flags, size_t size, OverSvm over,
                     std::vector<cl_mem_properties> properties)
    : context_(std::move(context)),
      flags_(flags),
      size_(size),
      host_ptr_(over.allocation->host_data() + over.offset),
      parent_(over.allocation),
      origin_(over.offset),
      properties_(std::move(properties)),
      data_(over.allocation->host_data() + over.offset),
      residency_(0, Residency::kEverywhere) {}  // unused: the allocation's residency applies

MemObject::~MemObject() {
  // Nothing is written to a USE_HOST_PTR region here: the spec makes its contents current only
  // through a map (or a read into it), and applications free that memory before releasing the
  // buffer (the Khronos CTS does): a write-back at release corrupted their heap.
  // The spec: destructor callbacks run in the reverse order of registration, before the
  // memory is freed, once no command uses the object any more.
  for (auto it = destructor_callbacks_.rbegin(); it != destructor_callbacks_.rend(); ++it)
    it->first(handle(), it->second);
  device_states_.clear();
  backings_.clear();  // first: a backing may have page-locked the host memory
  release_imports();
  if (owns_data_) std::free(data_);
}

size_t ImageInfo::size() const {
  switch (type) {
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
      return row_pitch;
    case CL_MEM_OBJECT_IMAGE2D:
      return row_pitch * height;
    case CL_MEM_OBJECT_IMAGE3D:
      return slice_pitch * depth;
    default:  // arrays
      return slice_pitch * array_size;
  }
}

bool image_fits_device(const DeviceInfo& d, const ImageInfo& i) {
  if (!d.image_support) return false;
  switch (i.type) {
    case CL_MEM_OBJECT_IMAGE1D:
      return i.width <= d.image2d_max_width;
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
      return i.width <= d.image_max_buffer_size;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
      return i.width <= d.image2d_max_width && i.array_size <= d.image_max_array_size;
    case CL_MEM_OBJECT_IMAGE2D:
      return i.width <= d.image2d_max_width && i.height <= d.image2d_max_height;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
      return i.width <= d.image2d_max_width && i.height <= d.image2d_max_height &&
             i.array_size <= d.image_max_array_size;
    case CL_MEM_OBJECT_IMAGE3D:
      return i.width <= d.image3d_max_width && i.height <= d.image3d_max_height &&
             i.depth <= d.image3d_max_depth;
    default:
      return false;
  }
}

size_t image_element_size(const cl_image_format& format, cl_uint* num_channels) {
  cl_uint channels = 0;
  switch (format.image_channel_order) {
    case CL_R:
    case CL_A:
    case CL_INTENSITY:
    case CL_LUMINANCE:
    case CL_DEPTH:
      channels = 1;
      break;
    case CL_RG:
    case CL_RA:
    case CL_Rx:
      channels = 2;
      break;
    case CL_RGB:
    case CL_RGx:
    case CL_sRGB:
      channels = 3;
      break;
    case CL_RGBA:
    case CL_BGRA:
    case CL_ARGB:
    case CL_ABGR:
    case CL_RGBx:
    case CL_sRGBA:
    case CL_sBGRA:
    case CL_sRGBx:
      channels = 4;
      break;
    default:
      return 0;
  }
  if (num_channels) *num_channels = channels;
  const cl_channel_order order = format.image_channel_order;
  const cl_channel_type type = format.image_channel_data_type;
  const bool rgb_packed = order == CL_RGB || order == CL_RGBx;
  // The spec's restrictions per order: CL_INTENSITY and CL_LUMINANCE only with normalized or
  // floating-point types; CL_ARGB, CL_BGRA, CL_ABGR only with 8-bit types; CL_DEPTH only
  // UNORM_INT16 or FLOAT; the sRGB orders only UNORM_INT8.
  const bool normalized_or_float = type == CL_UNORM_INT8 || type == CL_UNORM_INT16 ||
                                   type == CL_SNORM_INT8 || type == CL_SNORM_INT16 ||
                                   type == CL_HALF_FLOAT || type == CL_FLOAT;
  const bool eight_bit = type == CL_UNORM_INT8 || type == CL_SNORM_INT8 || type == CL_SIGNED_INT8 ||
                         type == CL_UNSIGNED_INT8;
  if ((order == CL_INTENSITY || order == CL_LUMINANCE) && !normalized_or_float) return 0;
  if ((order == CL_ARGB || order == CL_BGRA || order == CL_ABGR) && !eight_bit) return 0;
  if (order == CL_DEPTH && type != CL_UNORM_INT16 && type != CL_FLOAT) return 0;
  if ((order == CL_sRGB || order == CL_sRGBA || order == CL_sBGRA || order == CL_sRGBx) &&
      type != CL_UNORM_INT8)
    return 0;
  // The spec: the number of bits per element must be a power of two (CL_RGx or CL_sRGB of
  // 8-bit channels is not a format).
  const auto power_of_two = [](size_t n) { return n != 0 && (n & (n - 1)) == 0 ? n : 0; };
  switch (type) {
    // The spec: the packed types need their channel orders; nothing else may use CL_RGB/RGBx.
    case CL_UNORM_SHORT_565:
    case CL_UNORM_SHORT_555:
      return rgb_packed ? 2 : 0;
    case CL_UNORM_INT_101010:
      return rgb_packed ? 4 : 0;
    case CL_UNORM_INT_101010_2:
      return order == CL_RGBA ? 4 : 0;
    case CL_SNORM_INT8:
    case CL_UNORM_INT8:
    case CL_SIGNED_INT8:
    case CL_UNSIGNED_INT8:
      return rgb_packed ? 0 : power_of_two(channels);
    case CL_SNORM_INT16:
    case CL_UNORM_INT16:
    case CL_SIGNED_INT16:
    case CL_UNSIGNED_INT16:
    case CL_HALF_FLOAT:
      return rgb_packed ? 0 : power_of_two(2 * channels);
    case CL_SIGNED_INT32:
    case CL_UNSIGNED_INT32:
    case CL_FLOAT:
      return rgb_packed ? 0 : power_of_two(4 * channels);
    default:
      return 0;
  }
}

void* MemObject::add_mapping(size_t offset, size_t size, cl_map_flags flags) {
  void* ptr = data_ + offset;
  std::lock_guard lock(mutex_);
  mappings_.push_back({ptr, offset, size, flags});
  return ptr;
}

bool MemObject::remove_mapping(void* ptr) {
  std::lock_guard lock(mutex_);
  // Most recent mapping first: the same pointer may be mapped several times.
  auto it = std::find_if(mappings_.rbegin(), mappings_.rend(),
                         [ptr](const Mapping& m) { return m.ptr == ptr; });
  if (it == mappings_.rend()) return false;
  mappings_.erase(std::next(it).base());
  return true;
}

cl_uint MemObject::map_count() const {
  std::lock_guard lock(mutex_);
  return static_cast<cl_uint>(mappings_.size());
}

void MemObject::add_destructor_callback(MemDestructorCallback fn, void* user_data) {
  std::lock_guard lock(mutex_);
  destructor_callbacks_.emplace_back(fn, user_data);
}

}  // namespace manifold
