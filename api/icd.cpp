// The C boundary: one wrapper per entry point, the ICD dispatch table and extension lookup,
// all generated from entry_points.inc. Every exception stops here.
#include <CL/cl_icd.h>

#include <cstring>
#include <new>
#include <string_view>

#include "api/common.h"
#include "api/impl.h"
#include "core/error.h"
#include "core/log.h"
#include "core/object.h"

namespace manifold {
namespace {

// Runs an entry point's body; `returned_with_error` receives the handle an Error carries (see
// Error::with_handle) for entry points that return an object.
template <class F>
cl_int boundary(const char* entry_point, F&& body, void** returned_with_error = nullptr) noexcept {
  try {
    body();
    return CL_SUCCESS;
  } catch (const Error& e) {
    log_debug("%s: %s (%s)", entry_point, error_name(e.code()), e.what());
    if (returned_with_error) *returned_with_error = e.handle();
    return e.code();
  } catch (const std::bad_alloc&) {
    log_debug("%s: out of host memory", entry_point);
    return CL_OUT_OF_HOST_MEMORY;
  } catch (const std::exception& e) {
    log_debug("%s: internal error: %s", entry_point, e.what());
    return CL_OUT_OF_RESOURCES;
  } catch (...) {
    log_debug("%s: unknown internal error", entry_point);
    return CL_OUT_OF_RESOURCES;
  }
}

}  // namespace
}  // namespace manifold

#define MF_WITH_ERRCODE(...) (__VA_ARGS__, cl_int * errcode_ret)

#define MF_STATUS(name, params, args)                                          \
  extern "C" CL_API_ENTRY cl_int CL_API_CALL name params {                     \
    return manifold::boundary(#name, [&] { manifold::api::impl::name args; }); \
  }
#define MF_OBJECT(ret, name, params, args)                                     \
  extern "C" CL_API_ENTRY ret CL_API_CALL name MF_WITH_ERRCODE params {        \
    ret result{};                                                              \
    void* with_error = nullptr;                                                \
    const cl_int code = manifold::boundary(                                    \
        #name, [&] { result = manifold::api::impl::name args; }, &with_error); \
    if (errcode_ret) *errcode_ret = code;                                      \
    if (code != CL_SUCCESS) result = static_cast<ret>(with_error);             \
    return result;                                                             \
  }
#define MF_POINTER(ret, name, params, args)                                          \
  extern "C" CL_API_ENTRY ret CL_API_CALL name params {                              \
    ret result{};                                                                    \
    const cl_int code =                                                              \
        manifold::boundary(#name, [&] { result = manifold::api::impl::name args; }); \
    if (code != CL_SUCCESS) result = {};                                             \
    return result;                                                                   \
  }
#define MF_VOID(name, params, args)                                     \
  extern "C" CL_API_ENTRY void CL_API_CALL name params {                \
    manifold::boundary(#name, [&] { manifold::api::impl::name args; }); \
  }

MANIFOLD_CORE_ENTRY_POINTS
MANIFOLD_EXTENSION_ENTRY_POINTS

#undef MF_STATUS
#undef MF_OBJECT
#undef MF_POINTER
#undef MF_VOID

namespace manifold {
namespace {

// The Windows-only sharing slots can never be reached on Linux; they still get a function,
// because the loader must never find a NULL slot.
cl_int CL_API_CALL windows_only_sharing() { return CL_INVALID_OPERATION; }

cl_icd_dispatch make_dispatch() {
  cl_icd_dispatch d{};
#define MF_STATUS(name, params, args) d.name = &::name;
#define MF_OBJECT(ret, name, params, args) d.name = &::name;
#define MF_POINTER(ret, name, params, args) d.name = &::name;
#define MF_VOID(name, params, args) d.name = &::name;
  MANIFOLD_CORE_ENTRY_POINTS
#undef MF_STATUS
#undef MF_OBJECT
#undef MF_POINTER
#undef MF_VOID
#define MF_WINDOWS_SLOT(name) d.name = reinterpret_cast<void*>(&windows_only_sharing);
  MANIFOLD_WINDOWS_ONLY_SLOTS(MF_WINDOWS_SLOT)
#undef MF_WINDOWS_SLOT
  return d;
}

struct NamedFunction {
  const char* name;
  void* address;
};

// Extension functions: those of the core list whose names end in KHR/EXT, and the
// extension-only list.
constexpr bool is_extension_name(std::string_view n) {
  return n.ends_with("KHR") || n.ends_with("EXT") || n.ends_with("ARM") || n.ends_with("MFLD");
}

const NamedFunction kExtensionFunctions[] = {
#define MF_STATUS(name, params, args) {#name, reinterpret_cast<void*>(&::name)},
#define MF_OBJECT(ret, name, params, args) {#name, reinterpret_cast<void*>(&::name)},
#define MF_POINTER(ret, name, params, args) {#name, reinterpret_cast<void*>(&::name)},
#define MF_VOID(name, params, args) {#name, reinterpret_cast<void*>(&::name)},
    MANIFOLD_CORE_ENTRY_POINTS MANIFOLD_EXTENSION_ENTRY_POINTS
#undef MF_STATUS
#undef MF_OBJECT
#undef MF_POINTER
#undef MF_VOID
};

}  // namespace

const cl_icd_dispatch kIcdDispatch = make_dispatch();

namespace api {
void* extension_function(const char* name) {
  if (!name || !is_extension_name(name)) return nullptr;
  for (const NamedFunction& f : kExtensionFunctions)
    if (std::strcmp(f.name, name) == 0) return f.address;
  return nullptr;
}
}  // namespace api

}  // namespace manifold
