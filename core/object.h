// The object model shared by every OpenCL handle.
//
// Each handle the application sees points at a struct whose first member is the ICD dispatch
// table pointer (the loader jumps through it). Manifold's classes derive from those structs, so a
// handle converts to the class with static_cast, never reinterpret_cast.
//
// Two reference counts: `api_refs` is what clRetain*/clRelease* and CL_*_REFERENCE_COUNT see;
// `refs` keeps the object alive for Manifold's own holders (a queued command keeps its buffers,
// kernel and queue alive after the application has released them). All API references together
// hold one internal reference.
#pragma once

#include <CL/cl_icd.h>

#include <atomic>
#include <cstdint>
#include <utility>

#include "core/error.h"

namespace manifold {

enum class ObjectKind : uint32_t {
  Dead = 0,
  Platform = 0x4d460001,
  Device,
  Context,
  Queue,
  Memory,
  Sampler,
  Program,
  Kernel,
  Event,
  CommandBuffer,
  MutableCommand,
};

extern const cl_icd_dispatch kIcdDispatch;

struct IcdHeader {
  explicit IcdHeader(ObjectKind k) : kind(k) {}
  const cl_icd_dispatch* dispatch = &kIcdDispatch;
  ObjectKind kind;
};

}  // namespace manifold

struct _cl_platform_id : manifold::IcdHeader {
  using IcdHeader::IcdHeader;
};
struct _cl_device_id : manifold::IcdHeader {
  using IcdHeader::IcdHeader;
};
struct _cl_context : manifold::IcdHeader {
  using IcdHeader::IcdHeader;
};
struct _cl_command_queue : manifold::IcdHeader {
  using IcdHeader::IcdHeader;
};
struct _cl_mem : manifold::IcdHeader {
  using IcdHeader::IcdHeader;
};
struct _cl_sampler : manifold::IcdHeader {
  using IcdHeader::IcdHeader;
};
struct _cl_program : manifold::IcdHeader {
  using IcdHeader::IcdHeader;
};
struct _cl_kernel : manifold::IcdHeader {
  using IcdHeader::IcdHeader;
};
struct _cl_event : manifold::IcdHeader {
  using IcdHeader::IcdHeader;
};
// cl_khr_command_buffer's handles: reached through extension functions, never through the
// loader's dispatch, but with the same header so that one check validates every handle.
struct _cl_command_buffer_khr : manifold::IcdHeader {
  using IcdHeader::IcdHeader;
};
struct _cl_mutable_command_khr : manifold::IcdHeader {
  using IcdHeader::IcdHeader;
};

namespace manifold {

// Base for every handle type. `Cl` is the ICD struct, `Kind` tags it, `InvalidCode` is the
// error the spec gives for an invalid handle of this type (rusticl's idea: the handle type
// carries its own error code).
template <class Cl, ObjectKind Kind, cl_int InvalidCode>
class ApiObject : public Cl {
 public:
  using Handle = Cl*;
  static constexpr ObjectKind kKind = Kind;
  static constexpr cl_int kInvalidHandle = InvalidCode;

  ApiObject() : Cl(Kind) {}
  ApiObject(const ApiObject&) = delete;
  ApiObject& operator=(const ApiObject&) = delete;
  virtual ~ApiObject() { this->kind = ObjectKind::Dead; }

  Handle handle() { return static_cast<Handle>(this); }

  // Internal references (Ref<T>).
  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // Application references (clRetain*/clRelease*).
  void retain_api() { api_refs_.fetch_add(1, std::memory_order_relaxed); }
  void release_api() {
    if (api_refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      on_last_api_release();
      release();
    }
  }
  cl_uint api_reference_count() const { return api_refs_.load(std::memory_order_relaxed); }
  // Gives up the application reference the object was born with while no other thread can see
  // the object yet (an event the application did not ask for): plain stores, no atomic
  // read-modify-write. Another internal reference must keep it alive.
  void drop_unpublished_api_reference() {
    api_refs_.store(0, std::memory_order_relaxed);
    refs_.store(refs_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  }

  // Resolves a handle from the application, or throws the type's invalid-handle error.
  static ApiObject* checked(Handle h) {
    if (h == nullptr || h->dispatch != &kIcdDispatch || h->kind != Kind)
      fail(InvalidCode, "invalid or released handle");
    return static_cast<ApiObject*>(h);
  }

 protected:
  // Called once when the application drops its last reference (e.g. a queue flushes).
  virtual void on_last_api_release() {}

 private:
  std::atomic<uint32_t> api_refs_{1};
  std::atomic<uint32_t> refs_{1};
};

// Intrusive shared pointer over ApiObject's internal count (and any class with retain/release).
template <class T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  explicit Ref(T* p) : p_(p) {
    if (p_) p_->retain();
  }
  // Takes over a reference the caller already owns (e.g. a freshly constructed object).
  static Ref adopt(T* p) {
    Ref r;
    r.p_ = p;
    return r;
  }
  Ref(const Ref& o) : Ref(o.p_) {}
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <class U>
  Ref(const Ref<U>& o) : Ref(static_cast<T*>(o.get())) {}
  Ref& operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Ref() {
    if (p_) p_->release();
  }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const Ref& o) const { return p_ == o.p_; }
  T* detach() { return std::exchange(p_, nullptr); }

 private:
  T* p_ = nullptr;
};

// Creates an object whose initial references (one API, one internal) belong to the application.
// The handle is what the entry point returns.
template <class T, class... Args>
T* make_api_object(Args&&... args) {
  return new T(std::forward<Args>(args)...);
}

// Resolve a handle to its class, or throw the spec's invalid-handle code.
template <class T>
T* resolve(typename T::Handle h) {
  return static_cast<T*>(T::checked(h));
}
// Same, but a null handle is allowed and returns null.
template <class T>
T* resolve_optional(typename T::Handle h) {
  return h ? resolve<T>(h) : nullptr;
}

}  // namespace manifold
