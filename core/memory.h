// Memory objects. A buffer's data lives in host memory that the CPU device uses directly
// (USE_HOST_PTR is zero-copy); devices that do not share host memory get a backing of their own,
// made on first use. The buffer's Residency says which copy is current for each byte range; the
// scheduler's migration layer (scheduler/migration.h) keeps it and moves the bytes.
//
// An image is a memory object too: its pixels are stored linearly (row pitch, slice pitch) in the
// same kind of bytes, with an ImageInfo beside them, so migration, maps and rectangular copies
// serve images unchanged. An image made from a buffer (1D image buffer, 2D image from a buffer)
// or from another image shares that object's bytes, like a sub-buffer.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "compiler/image_abi.h"
#include "core/context.h"
#include "core/event.h"
#include "core/object.h"
#include "core/residency.h"

namespace manifold {

using MemDestructorCallback = void(CL_CALLBACK*)(cl_mem, void*);

// A device's own copy of a buffer (devices that do not share host memory, e.g. a GPU's memory),
// made by that device's backend on first use and freed with the buffer.
class DeviceBacking {
 public:
  explicit DeviceBacking(MemoryPlace place) : place_(place) {}
  virtual ~DeviceBacking() = default;
  MemoryPlace place() const { return place_; }
  // Copies bytes [offset, offset + size) of the backing to `host` and returns when they are
  // there. The bytes are current (the commands that wrote them have completed). Thread: any
  // (a CPU worker, a GPU queue's completion thread, the thread releasing the buffer).
  virtual void read_to_host(void* host, size_t offset, size_t size) = 0;

 private:
  MemoryPlace place_;
};

// What a device keeps for one memory object itself, not for its root's bytes (a GPU's copy of an
// image's descriptor, backends/gpu_driver): made on first use, freed with the object.
class DeviceObjectState {
 public:
  virtual ~DeviceObjectState() = default;
};

// A copy into a memory place that a submitted command makes and that may not have landed yet:
// until `done` is complete, only commands of the same in-order native queue (`queue`) may rely on
// it (scheduler/migration.cpp).
struct PendingCopy {
  size_t offset, size;
  MemoryPlace place;
  const void* queue;  // the in-order native queue that makes it; null: none orders after it
  Ref<Event> done;
};

// What describes an image beyond its bytes.
struct ImageInfo {
  cl_image_format format{};
  cl_mem_object_type type = 0;
  size_t width = 1, height = 1, depth = 1, array_size = 1;  // 1 where the type has no such extent
  // Of the stored bytes. slice_pitch: bytes from one 2D slice (3D), array layer (2D array) or
  // 1D image (1D array) to the next; for 1D and 2D images the whole image (clGetImageInfo
  // reports 0 for those).
  size_t row_pitch = 0, slice_pitch = 0;
  size_t element_size = 0;  // bytes per pixel
  cl_uint num_channels = 0;
  cl_uint num_mip_levels = 0, num_samples = 0;

  // Bytes the image spans.
  size_t size() const;
  bool is_array() const {
    return type == CL_MEM_OBJECT_IMAGE1D_ARRAY || type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
  }
};

// Bytes per pixel and channels of a format; 0 when the format is not valid (the spec's rules:
// packed types only with their channel orders, etc.).
size_t image_element_size(const cl_image_format& format, cl_uint* num_channels = nullptr);
// One pixel of `image`'s format from a fill colour (clEnqueueFillImage: float4 for normalized and
// floating-point types, int4 / uint4 for unnormalized signed / unsigned integers), converted as
// write_image* does. False when the format has no such conversion (core/image.cpp).
bool image_pack_color(const ImageInfo& image, const void* color, std::byte* pixel);
// What a kernel receives for `image` (compiler/image_abi.h) whose pixel (0, 0, 0) a device
// addresses at `data` (core/image.cpp).
ManifoldImage image_descriptor(const ImageInfo& image, uint64_t data);
// Whether a device supports images of these dimensions (CL_DEVICE_IMAGE*_MAX_*).
bool image_fits_device(const DeviceInfo& device, const ImageInfo& image);

class MemObject : public ApiObject<_cl_mem, ObjectKind::Memory, CL_INVALID_MEM_OBJECT> {
 public:
  // A buffer. Throws CL_MEM_OBJECT_ALLOCATION_FAILURE when the memory cannot be had.
  MemObject(Ref<Context> context, cl_mem_flags flags, size_t size, void* host_ptr,
            std::vector<cl_mem_properties> properties);
  // Memory the application imported (cl_arm_import_memory): its bytes at `memory` are used in
  // place by every device of the context, never copied. Each device that does not share host
  // memory maps the range now (Device::import_host); throws CL_INVALID_OPERATION where one
  // cannot.
  struct Import {
    void* memory;
    std::shared_ptr<void> keeper = {};  // holds the memory while the object lives (dma_buf maps)
  };
  MemObject(Ref<Context> context, cl_mem_flags flags, size_t size, Import import);
  // Shared virtual memory (svm/): bytes at `address` that every device of the context addresses
  // there too. Coarse grain: devices with memory of their own have their copy at that address
  // (svm/ maps it), kept current by migration as for buffers. Fine grain: every device uses the
  // host's pages in place (Device::import_host must give back the same address), as imported
  // memory. `dma_address` is the same host pages where GPU drivers copy them (at `address` a
  // driver sees its device's memory). `keeper` gives the range back when the object goes.
  struct Svm {
    void* address;
    std::byte* dma_address;
    bool fine_grain;
    std::shared_ptr<void> keeper;
  };
  MemObject(Ref<Context> context, cl_mem_flags flags, size_t size, Svm svm);
  // A sub-buffer of `parent` (flags already resolved against the parent's).
  MemObject(MemObject& parent, cl_mem_flags flags, size_t origin, size_t size);
  // A buffer made with CL_MEM_USE_HOST_PTR on memory of an SVM allocation: the allocation's
  // bytes at `offset` (CL_MEM_USES_SVM_POINTER), kept current with it.
  struct OverSvm {
    MemObject* allocation;
    size_t offset;
  };
  MemObject(Ref<Context> context, cl_mem_flags flags, size_t size, OverSvm over,
            std::vector<cl_mem_properties> properties);
  // An image with its own bytes (or the application's, USE_HOST_PTR, whose pitches `image`
  // holds). COPY_HOST_PTR copies from host_ptr laid out with host_row_pitch/host_slice_pitch.
  MemObject(Ref<Context> context, cl_mem_flags flags, const ImageInfo& image, void* host_ptr,
            size_t host_row_pitch, size_t host_slice_pitch,
            std::vector<cl_mem_properties> properties);
  // An image sharing the bytes of `source` (a buffer, sub-buffer or image); flags resolved.
  MemObject(MemObject& source, cl_mem_flags flags, const ImageInfo& image,
            std::vector<cl_mem_properties> properties);
  ~MemObject() override;

  Context& context() const { return *context_; }
  cl_mem_object_type type() const { return image_ ? image_->type : CL_MEM_OBJECT_BUFFER; }
  // The image description; null for buffers.
  const ImageInfo* image() const { return image_.get(); }
  cl_mem_flags flags() const { return flags_; }
  size_t size() const { return size_; }
  void* host_ptr() const { return host_ptr_; }
  // The buffer a sub-buffer was made from; null for buffers and images.
  MemObject* parent() const { return sub_buffer_ ? associated_.get() : nullptr; }
  // CL_MEM_OFFSET: a sub-buffer's origin in its buffer; 0 otherwise.
  size_t origin() const { return sub_buffer_ ? origin_ : 0; }
  // CL_MEM_ASSOCIATED_MEMOBJECT: a sub-buffer's buffer, or the mem_object an image was made from.
  MemObject* associated() const { return associated_.get(); }
  const std::vector<cl_mem_properties>& properties() const { return properties_; }

  // The bytes of this object in host memory (for a sub-buffer: the parent's plus origin; for an
  // image made from a buffer: the buffer's).
  std::byte* host_data() const { return data_; }

  // Whether the bytes are imported memory (of the root buffer): used in place by every device,
  // not migrated, not read, written, copied, filled or mapped through the queue.
  bool imported() const { return root().imported_; }
  // The address `device` (a root device of the context) uses for the imported bytes of the root.
  uint64_t imported_address(const Device& device) const;
  // Whether the bytes are an SVM allocation (of the root): at host_data() on every device.
  bool svm() const { return root().svm_keeper_ != nullptr; }
  // The host bytes as GPU drivers must address them in their copies (host_data() but for SVM).
  std::byte* dma_host_data() const {
    const MemObject& r = root();
    return r.dma_data_ ? r.dma_data_ + (data_ - r.data_) : data_;
  }

  // The root buffer and the offset of this object in it (for overlap checks). An image made from
  // another object lies in that object's root.
  const MemObject& root() const { return parent_ ? *parent_ : *this; }
  size_t root_offset() const { return origin_; }

  // Mapping bookkeeping, done when the map/unmap is enqueued so misuse is caught at once.
  void* add_mapping(size_t offset, size_t size, cl_map_flags flags);
  bool remove_mapping(void* ptr);  // false: ptr is not a mapping of this object
  cl_uint map_count() const;

  void add_destructor_callback(MemDestructorCallback fn, void* user_data);

  // The backing of the root buffer at memory place `place`, made by `make()` (returning
  // std::unique_ptr<DeviceBacking>, or throwing) the first time. Thread-safe. Sub-buffers share
  // their root's backing at their origin.
  template <class Make>
  DeviceBacking& backing(MemoryPlace place, Make&& make) {
    MemObject& r = parent_ ? *parent_ : *this;
    // Without the lock: the backing used last (backings live as long as the object).
    if (DeviceBacking* b = r.recent_backing_.load(std::memory_order_acquire);
        b && b->place() == place)
      return *b;
    std::lock_guard lock(r.backing_mutex_);
    DeviceBacking* b = r.find_backing_locked(place);
    if (!b) {
      r.backings_.push_back(make());
      b = r.backings_.back().get();
    }
    r.recent_backing_.store(b, std::memory_order_release);
    return *b;
  }
  // This object's own state on `device` (a key: the device's address), made by `make()`
  // (returning std::unique_ptr<DeviceObjectState>, or throwing) the first time. Thread-safe.
  template <class Make>
  DeviceObjectState& device_state(const void* device, Make&& make) {
    std::lock_guard lock(device_states_mutex_);
    for (auto& [key, state] : device_states_)
      if (key == device) return *state;
    std::unique_ptr<DeviceObjectState> made = make();
    device_states_.emplace_back(device, std::move(made));
    return *device_states_.back().second;
  }
  DeviceBacking* find_backing(MemoryPlace place) {
    MemObject& r = parent_ ? *parent_ : *this;
    std::lock_guard lock(r.backing_mutex_);
    return r.find_backing_locked(place);
  }

  // Where every byte of the root buffer is current, with no copy on its way (0: not so, or not
  // known): written by the migration planner, under residency_mutex(), after each change of the
  // residency, so that it can see a buffer already in place without the lock.
  std::atomic<Residency::Places>& settled_places() {
    return (parent_ ? *parent_ : *this).settled_places_;
  }
  // The root buffer's residency, guarded by residency_mutex() (scheduler/migration.cpp).
  Residency& residency() { return (parent_ ? *parent_ : *this).residency_; }
  std::mutex& residency_mutex() { return (parent_ ? *parent_ : *this).residency_mutex_; }
  std::vector<PendingCopy>& pending_copies() {
    return (parent_ ? *parent_ : *this).pending_copies_;
  }
  // Held by host-side copies into the root buffer's memory (CPU workers): two queues may copy the
  // same bytes into the same place at once (scheduler/migration.cpp), which must not race.
  std::mutex& copy_mutex() { return (parent_ ? *parent_ : *this).copy_mutex_; }

 private:
  struct Mapping {
    void* ptr;
    size_t offset, size;
    cl_map_flags flags;
  };

  Ref<Context> context_;
  cl_mem_flags flags_;
  size_t size_;
  void* host_ptr_ = nullptr;
  Ref<MemObject> parent_;  // the root whose bytes this object shares (sub-buffers, images)
  Ref<MemObject> associated_;
  bool sub_buffer_ = false;
  size_t origin_ = 0;
  std::unique_ptr<const ImageInfo> image_;
  std::vector<cl_mem_properties> properties_;
  std::byte* data_ = nullptr;
  bool owns_data_ = false;
  bool imported_ = false;
  std::byte* dma_data_ = nullptr;        // SVM: the root's bytes at the drivers' address
  std::shared_ptr<void> svm_keeper_;     // SVM: holds the address range while the object lives
  std::shared_ptr<void> import_keeper_;  // imports Manifold mapped itself (dma_buf)
  // Imported memory as each device that needed to map it sees it (Device::import_host).
  std::vector<std::pair<Ref<Device>, uint64_t>> imports_;

  mutable std::mutex mutex_;
  std::vector<Mapping> mappings_;
  std::vector<std::pair<MemDestructorCallback, void*>> destructor_callbacks_;
  DeviceBacking* find_backing_locked(MemoryPlace place) {
    for (auto& b : backings_)
      if (b->place() == place) return b.get();
    return nullptr;
  }
  // Own memory for the bytes, or the application's (USE_HOST_PTR); COPY_HOST_PTR is the caller's.
  void allocate(void* host_ptr);
  void release_imports();

  std::mutex backing_mutex_;
  std::vector<std::unique_ptr<DeviceBacking>> backings_;
  std::mutex device_states_mutex_;
  std::vector<std::pair<const void*, std::unique_ptr<DeviceObjectState>>> device_states_;
  std::atomic<DeviceBacking*> recent_backing_{nullptr};
  std::atomic<Residency::Places> settled_places_{0};
  std::mutex residency_mutex_;
  Residency residency_;
  std::vector<PendingCopy> pending_copies_;
  std::mutex copy_mutex_;
};

// Default alignment of buffer storage: CL_DEVICE_MEM_BASE_ADDR_ALIGN of the CPU device, and
// a cache line multiple so that vector loads are aligned.
constexpr size_t kBufferAlignment = 128;

}  // namespace manifold
