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
  if (flags & CL_MEM_USE_HOST_PTR) {
    host_ptr_ = host_ptr;
    data_ = static_cast<std::byte*>(host_ptr);  // zero-copy: the CPU device works in place
    return;
  }
  const size_t rounded = (size + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  data_ = static_cast<std::byte*>(std::aligned_alloc(kBufferAlignment, rounded));
  if (!data_) fail(CL_MEM_OBJECT_ALLOCATION_FAILURE, "cannot allocate the buffer's memory");
  owns_data_ = true;
  if (flags & CL_MEM_COPY_HOST_PTR) std::memcpy(data_, host_ptr, size);
}

MemObject::MemObject(MemObject& parent, cl_mem_flags flags, size_t origin, size_t size)
    : context_(&parent.context()),
      flags_(flags),
      size_(size),
      parent_(&parent),
      origin_(origin),
      data_(parent.host_data() + origin),
      residency_(0, Residency::kEverywhere) {  // unused: a sub-buffer's residency is its root's
  if (parent.flags() & CL_MEM_USE_HOST_PTR) host_ptr_ = static_cast<std::byte*>(parent.host_ptr()) + origin;
}

MemObject::~MemObject() {
  // USE_HOST_PTR: the application's memory holds the final contents before the callbacks tell
  // it that the buffer is gone.
  if (!parent_ && (flags_ & CL_MEM_USE_HOST_PTR)) write_back_to_host();
  // The spec: destructor callbacks run in the reverse order of registration, before the
  // memory is freed, once no command uses the object any more.
  for (auto it = destructor_callbacks_.rbegin(); it != destructor_callbacks_.rend(); ++it)
    it->first(handle(), it->second);
  backings_.clear();  // first: a backing may have page-locked the host memory
  if (owns_data_) std::free(data_);
}

void MemObject::write_back_to_host() {
  std::lock_guard lock(residency_mutex_);
  residency_.for_each_missing(0, size_, kHostPlace, [&](size_t offset, size_t size, Residency::Places at) {
    for (auto& b : backings_)
      if (at & Residency::bit(b->place())) {
        try {
          b->read_to_host(data_ + offset, offset, size);
        } catch (const std::exception&) {
          // Nothing to report it to: the buffer is being destroyed. The host keeps older bytes.
        }
        return;
      }
  });
  residency_.add(0, size_, kHostPlace);
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
  auto it = std::find_if(mappings_.rbegin(), mappings_.rend(), [ptr](const Mapping& m) { return m.ptr == ptr; });
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
