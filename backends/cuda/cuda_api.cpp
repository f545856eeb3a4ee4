#include "backends/cuda/cuda_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "core/log.h"
#include "settings/settings.h"

namespace manifold::cuda {
namespace detail {
Api g_api;
}
namespace {

using detail::g_api;
const Api* g_loaded = nullptr;
std::string g_why;

void load_once() {
  // RTLD_LOCAL: the driver's symbols must not satisfy anybody else's lookups.
  // MANIFOLD_CUDA_DRIVER: another driver library (the simulated one of the tests, a driver
  // installed outside the loader's path).
  const std::string& path = settings().cuda_driver;
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* error = dlerror();
    g_why = path + " not found (" + (error ? error : "no reason given") + ")";
    return;
  }
  Api a;
  bool complete = true;
  auto resolve = [&](auto& member, const char* symbol) {
    member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(dlsym(library, symbol));
    if (!member && complete) {
      complete = false;
      g_why = std::string("libcuda.so.1 lacks ") + symbol + " (driver too old)";
    }
  };
#define MANIFOLD_CUDA_RESOLVE(member, symbol, ret, params) resolve(a.member, symbol);
  MANIFOLD_GPU_DRIVER_FUNCTIONS(MANIFOLD_CUDA_RESOLVE)
#undef MANIFOLD_CUDA_RESOLVE
#define MANIFOLD_CUDA_RESOLVE_OPTIONAL(member, symbol, ret, params) \
  a.member = reinterpret_cast<decltype(a.member)>(dlsym(library, symbol));
  MANIFOLD_GPU_DRIVER_OPTIONAL_FUNCTIONS(MANIFOLD_CUDA_RESOLVE_OPTIONAL)
  MANIFOLD_GPU_DRIVER_GREEN_FUNCTIONS(MANIFOLD_CUDA_RESOLVE_OPTIONAL)
#undef MANIFOLD_CUDA_RESOLVE_OPTIONAL
  a.has_graphs = a.cuGraphCreate && a.cuGraphAddKernelNode && a.cuGraphInstantiate &&
                 a.cuGraphExecKernelNodeSetParams && a.cuGraphLaunch && a.cuGraphExecDestroy &&
                 a.cuGraphDestroy;
  a.has_vmm = a.cuMemAddressReserve && a.cuMemAddressFree && a.cuMemCreate && a.cuMemRelease &&
              a.cuMemMap && a.cuMemUnmap && a.cuMemSetAccess && a.cuMemGetAllocationGranularity;
  a.has_green_contexts = a.cuDeviceGetDevResource && a.cuDevSmResourceSplitByCount &&
                         a.cuDevResourceGenerateDesc && a.cuGreenCtxCreate && a.cuGreenCtxDestroy &&
                         a.cuCtxFromGreenCtx && a.cuGreenCtxStreamCreate;
  // CUDA 12.8 added a _v2 with the same signature; prefer it where present.
  if (void* v2 = dlsym(library, "cuEventElapsedTime_v2"))
    a.cuEventElapsedTime = reinterpret_cast<decltype(a.cuEventElapsedTime)>(v2);
  if (!complete) return;  // the library stays loaded: unloading a driver is never worth it
  if (CUresult r = a.cuInit(0); r != CUDA_SUCCESS) {
    const char* name = nullptr;
    a.cuGetErrorName(r, &name);
    g_why = std::string("cuInit failed: ") + (name ? name : std::to_string(r)) +
            " (no usable NVIDIA GPU or driver)";
    return;
  }
  a.cuDriverGetVersion(&a.driver_version);
  g_api = a;
  g_loaded = &g_api;
}

}  // namespace

const Api* load_api(std::string* why) {
  static std::once_flag once;
  std::call_once(once, load_once);
  if (!g_loaded && why) *why = g_why;
  return g_loaded;
}

std::string error_text(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (g_loaded) {
    g_api.cuGetErrorName(result, &name);
    g_api.cuGetErrorString(result, &text);
  }
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text) out += std::string(" (") + text + ")";
  return out;
}

}  // namespace manifold::cuda
