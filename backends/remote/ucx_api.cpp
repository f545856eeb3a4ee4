#include "backends/remote/ucx_api.h"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

namespace manifold::remote::ucx {

std::string Api::status_string(ucs_status_t status) const {
  const char* text = ucs_status_string ? ucs_status_string(status) : nullptr;
  return text ? text : "UCX status " + std::to_string(static_cast<int>(status));
}

namespace {

struct Loaded {
  std::unique_ptr<Api> api;
  std::string why;
};

Loaded load_uncached(const std::string& path) {
  Loaded out;
  // RTLD_LOCAL: UCX's symbols must not satisfy anybody else's lookups.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* error = dlerror();
    out.why = path + " not found (" + (error ? error : "no reason given") + ")";
    return out;
  }
  auto api = std::make_unique<Api>();
  auto resolve = [&](auto& member, const char* symbol) {
    member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(dlsym(library, symbol));
    if (!member && out.why.empty()) out.why = path + " lacks " + symbol + " (UCX too old?)";
  };
#define MANIFOLD_UCP_RESOLVE(name, ret, params) resolve(api->name, #name);
  MANIFOLD_UCP_FUNCTIONS(MANIFOLD_UCP_RESOLVE)
#undef MANIFOLD_UCP_RESOLVE
  if (!out.why.empty()) return out;
  // libucp depends on libucs, so a lookup through libucp's handle usually finds it; the explicit
  // load covers a libucp built with its dependencies resolved some other way.
  using StatusString = const char* (*)(ucs_status_t);
  api->ucs_status_string = reinterpret_cast<StatusString>(dlsym(library, "ucs_status_string"));
  if (!api->ucs_status_string) {
    if (void* ucs = dlopen("libucs.so.0", RTLD_NOW | RTLD_LOCAL))
      api->ucs_status_string = reinterpret_cast<StatusString>(dlsym(ucs, "ucs_status_string"));
  }
  out.api = std::move(api);
  return out;
}

}  // namespace

const Api* load(const std::string& ucp_library, std::string* error) {
  // Never destroyed: transports of the platform's devices run until the process ends, past
  // static destructors.
  static auto* mutex = new std::mutex;
  static auto* loaded = new std::map<std::string, Loaded>;
  std::lock_guard lock(*mutex);
  auto it = loaded->find(ucp_library);
  if (it == loaded->end()) it = loaded->emplace(ucp_library, load_uncached(ucp_library)).first;
  if (!it->second.api && error) *error = it->second.why;
  return it->second.api.get();
}

}  // namespace manifold::remote::ucx
