#include "backends/hip/hip_api.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "settings/settings.h"

namespace manifold::hip {
namespace detail {
Api g_api;
}
namespace {

using detail::g_api;
const Api* g_loaded = nullptr;
std::string g_why;
int g_major = 0;

// HIP's values of the constants the adapters translate (hip_runtime_api.h, driver_types.h; the
// same in HIP 5 and 6, where new attributes were appended).
constexpr CUresult kHipErrorInvalidValue = 1;
constexpr CUresult kHipErrorNotSupported = 801;
constexpr int kHipMemcpyDeviceToDevice = 3;
constexpr int kHipMemcpyDefault = 4;
constexpr int kHipFuncAttributeMaxDynamicSharedMemorySize = 8;

// CUdevice_attribute -> hipDeviceAttribute_t; -1 where HIP has none (the value reads as 0).
int hip_attribute(CUdevice_attribute which) {
  switch (which) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      return 56;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
      return 26;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
      return 27;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      return 28;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      return 29;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
      return 30;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      return 31;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      return 74;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
      return 83;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      return 87;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
      return 5;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
      return 81;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      return 63;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED:
      return 16;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
      return 3;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
      return 0;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      return 67;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
      return 68;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      return 60;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      return 59;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      return 19;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
      return 85;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
      return 69;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      return 23;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      return 61;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      return 75;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
      return 89;
    default:
      return -1;
  }
}

// HIP's structures that the graph adapters fill (hip_runtime_api.h; HIP 5 and 6 alike).
struct HipDim3 {
  unsigned x, y, z;
};
struct HipKernelNodeParams {
  HipDim3 blockDim;
  void** extra;
  void* func;
  HipDim3 gridDim;
  void** kernelParams;
  unsigned sharedMemBytes;
};
static_assert(sizeof(HipKernelNodeParams) == 64 && offsetof(HipKernelNodeParams, func) == 24 &&
              offsetof(HipKernelNodeParams, kernelParams) == 48);
struct HipMemsetParams {
  void* dst;
  unsigned elementSize;
  size_t height, pitch;
  unsigned value;
  size_t width;
};
static_assert(sizeof(HipMemsetParams) == 48 && offsetof(HipMemsetParams, value) == 32);

// HIP's own entry points behind the adapters (their shapes differ from the table's).
struct Native {
  const char* (*hipGetErrorName)(CUresult) = nullptr;
  const char* (*hipGetErrorString)(CUresult) = nullptr;
  CUresult (*hipDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*hipMemcpyAsync)(void*, const void*, size_t, int, CUstream) = nullptr;
  CUresult (*hipFuncSetAttribute)(const void*, int, int) = nullptr;
  CUresult (*hipGraphAddKernelNode)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t,
                                    const HipKernelNodeParams*) = nullptr;
  CUresult (*hipGraphExecKernelNodeSetParams)(CUgraphExec, CUgraphNode,
                                              const HipKernelNodeParams*) = nullptr;
  CUresult (*hipGraphAddMemcpyNode1D)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, void*,
                                      const void*, size_t, int) = nullptr;
  CUresult (*hipGraphAddMemsetNode)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t,
                                    const HipMemsetParams*) = nullptr;
  // hipDeviceProp_t as HIP 5 lays it out (HIP 6 keeps it as hipGetDevicePropertiesR0000).
  CUresult (*hipGetDeviceProperties)(void*, int) = nullptr;
} g_native;

// ---- Adapters: the table's CUDA shapes over HIP's calls ----

CUresult get_error_name(CUresult r, const char** out) {
  *out = g_native.hipGetErrorName(r);
  return 0;
}
CUresult get_error_string(CUresult r, const char** out) {
  *out = g_native.hipGetErrorString(r);
  return 0;
}
CUresult device_attribute(int* value, CUdevice_attribute which, CUdevice device) {
  const int hip = hip_attribute(which);
  *value = 0;
  if (hip < 0) return 0;
  const CUresult r = g_native.hipDeviceGetAttribute(value, hip, device);
  if (r != 0) *value = 0;  // an attribute this runtime does not know reads as absent
  return 0;
}
CUresult memcpy_peer(CUdeviceptr dst, CUcontext, CUdeviceptr src, CUcontext, size_t size,
                     CUstream stream) {
  // Unified addressing: the runtime finds both devices from the pointers.
  return g_native.hipMemcpyAsync(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(src), size,
                                 kHipMemcpyDefault, stream);
}
// Rectangular copies row by row (hipMemcpyAsync finds each side's kind from its address):
// HIP_MEMCPY3D's member types and memory-type values changed between HIP 5 and 6.
CUresult memcpy_3d(const CUDA_MEMCPY3D* c, CUstream stream) {
  const auto* src = c->srcMemoryType == CU_MEMORYTYPE_HOST
                        ? static_cast<const std::byte*>(c->srcHost)
                        : reinterpret_cast<const std::byte*>(c->srcDevice);
  auto* dst = c->dstMemoryType == CU_MEMORYTYPE_HOST ? static_cast<std::byte*>(c->dstHost)
                                                     : reinterpret_cast<std::byte*>(c->dstDevice);
  src += c->srcXInBytes + (c->srcZ * c->srcHeight + c->srcY) * c->srcPitch;
  dst += c->dstXInBytes + (c->dstZ * c->dstHeight + c->dstY) * c->dstPitch;
  for (size_t z = 0; z < c->Depth; ++z)
    for (size_t y = 0; y < c->Height; ++y)
      if (CUresult r = g_native.hipMemcpyAsync(dst + (z * c->dstHeight + y) * c->dstPitch,
                                               src + (z * c->srcHeight + y) * c->srcPitch,
                                               c->WidthInBytes, kHipMemcpyDefault, stream))
        return r;
  return 0;
}
CUresult func_set_attribute(CUfunction f, CUfunction_attribute which, int value) {
  if (which != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || !g_native.hipFuncSetAttribute)
    return kHipErrorNotSupported;
  return g_native.hipFuncSetAttribute(f, kHipFuncAttributeMaxDynamicSharedMemorySize, value);
}
HipKernelNodeParams kernel_node(const CUDA_KERNEL_NODE_PARAMS& p) {
  HipKernelNodeParams h{};
  h.blockDim = {p.blockDimX, p.blockDimY, p.blockDimZ};
  h.gridDim = {p.gridDimX, p.gridDimY, p.gridDimZ};
  h.func = p.func;
  h.kernelParams = p.kernelParams;
  h.extra = p.extra;
  h.sharedMemBytes = p.sharedMemBytes;
  return h;
}
CUresult graph_add_kernel_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                               size_t count, const CUDA_KERNEL_NODE_PARAMS* p) {
  const HipKernelNodeParams h = kernel_node(*p);
  return g_native.hipGraphAddKernelNode(node, graph, deps, count, &h);
}
CUresult graph_exec_kernel_node_set_params(CUgraphExec exec, CUgraphNode node,
                                           const CUDA_KERNEL_NODE_PARAMS* p) {
  const HipKernelNodeParams h = kernel_node(*p);
  return g_native.hipGraphExecKernelNodeSetParams(exec, node, &h);
}
// Device-to-device copies of one run of bytes (what command buffers record for plain copies);
// rectangles are not graph nodes on HIP (the command buffer then runs its operations one by one).
CUresult graph_add_memcpy_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                               size_t count, const CUDA_MEMCPY3D* c, CUcontext) {
  if (c->srcMemoryType != CU_MEMORYTYPE_DEVICE || c->dstMemoryType != CU_MEMORYTYPE_DEVICE ||
      c->Height != 1 || c->Depth != 1 || c->srcXInBytes || c->dstXInBytes || c->srcY || c->dstY ||
      c->srcZ || c->dstZ)
    return kHipErrorNotSupported;
  return g_native.hipGraphAddMemcpyNode1D(
      node, graph, deps, count, reinterpret_cast<void*>(c->dstDevice),
      reinterpret_cast<const void*>(c->srcDevice), c->WidthInBytes, kHipMemcpyDeviceToDevice);
}
CUresult graph_add_memset_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                               size_t count, const CUDA_MEMSET_NODE_PARAMS* p, CUcontext) {
  HipMemsetParams h{};
  h.dst = reinterpret_cast<void*>(p->dst);
  h.elementSize = p->elementSize;
  h.height = p->height;
  h.pitch = p->pitch;
  h.value = p->value;
  h.width = p->width;
  return g_native.hipGraphAddMemsetNode(node, graph, deps, count, &h);
}

// The library to load: MANIFOLD_HIP_RUNTIME, else the installed ROCm runtime (6, then 5).
// Without the AMD GPU kernel driver (/dev/kfd) ROCm has no device to show: the 14 MB runtime is
// not even loaded, which keeps the platform's start-up fast on every machine without an AMD GPU.
// Null with *why when there is none.
void* open_library(std::string* path, std::string* why) {
  const auto open = [&](const std::string& name) {
    *path = name;
    void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* error = dlerror();
      *why = name + " not found (" + (error ? error : "no reason given") + ")";
    }
    return library;
  };
  if (!settings().hip_runtime.empty()) return open(settings().hip_runtime);
  if (access("/dev/kfd", F_OK) != 0) {
    *why = "no /dev/kfd (no AMD GPU kernel driver): the HIP runtime is not loaded";
    return nullptr;
  }
  void* library = open("libamdhip64.so.6");
  return library ? library : open("libamdhip64.so.5");
}

void load_once() {
  std::string path;
  void* library = open_library(&path, &g_why);
  if (!library) return;
  bool complete = true;
  auto symbol = [&](const char* name) {
    void* s = dlsym(library, name);
    if (!s && complete) {
      complete = false;
      g_why = path + " lacks " + name + " (HIP too old)";
    }
    return s;
  };
  auto resolve = [&](auto& member, const char* name) {
    member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(symbol(name));
  };
  auto adapt = [&](auto& member, auto* adapter, auto& native, const char* name) {
    resolve(native, name);
    member = adapter;
  };
  Api a;
  Native& n = g_native;
  resolve(a.cuInit, "hipInit");
  resolve(a.cuDriverGetVersion, "hipDriverGetVersion");
  adapt(a.cuGetErrorName, &get_error_name, n.hipGetErrorName, "hipGetErrorName");
  adapt(a.cuGetErrorString, &get_error_string, n.hipGetErrorString, "hipGetErrorString");
  resolve(a.cuDeviceGetCount, "hipGetDeviceCount");
  resolve(a.cuDeviceGet, "hipDeviceGet");
  resolve(a.cuDeviceGetName, "hipDeviceGetName");
  adapt(a.cuDeviceGetAttribute, &device_attribute, n.hipDeviceGetAttribute,
        "hipDeviceGetAttribute");
  resolve(a.cuDeviceTotalMem, "hipDeviceTotalMem");
  resolve(a.cuDeviceGetUuid, "hipDeviceGetUuid");
  resolve(a.cuDevicePrimaryCtxRetain, "hipDevicePrimaryCtxRetain");
  resolve(a.cuDevicePrimaryCtxRelease, "hipDevicePrimaryCtxRelease");
  resolve(a.cuCtxSetCurrent, "hipCtxSetCurrent");
  resolve(a.cuCtxSynchronize, "hipCtxSynchronize");
  resolve(a.cuMemGetInfo, "hipMemGetInfo");
  resolve(a.cuMemAlloc, "hipMalloc");
  resolve(a.cuMemFree, "hipFree");
  resolve(a.cuMemHostAlloc, "hipHostMalloc");
  resolve(a.cuMemFreeHost, "hipHostFree");
  resolve(a.cuMemHostRegister, "hipHostRegister");
  resolve(a.cuMemHostUnregister, "hipHostUnregister");
  resolve(a.cuMemcpyHtoD, "hipMemcpyHtoD");
  resolve(a.cuMemcpyHtoDAsync, "hipMemcpyHtoDAsync");
  resolve(a.cuMemcpyDtoHAsync, "hipMemcpyDtoHAsync");
  resolve(a.cuMemcpyDtoDAsync, "hipMemcpyDtoDAsync");
  adapt(a.cuMemcpy3DAsync, &memcpy_3d, n.hipMemcpyAsync, "hipMemcpyAsync");
  a.cuMemcpyPeerAsync = &memcpy_peer;
  resolve(a.cuDeviceCanAccessPeer, "hipDeviceCanAccessPeer");
  resolve(a.cuCtxEnablePeerAccess, "hipCtxEnablePeerAccess");
  resolve(a.cuMemsetD8Async, "hipMemsetD8Async");
  resolve(a.cuMemsetD16Async, "hipMemsetD16Async");
  resolve(a.cuMemsetD32Async, "hipMemsetD32Async");
  resolve(a.cuStreamCreate, "hipStreamCreateWithFlags");
  resolve(a.cuStreamDestroy, "hipStreamDestroy");
  resolve(a.cuStreamSynchronize, "hipStreamSynchronize");
  resolve(a.cuStreamWaitEvent, "hipStreamWaitEvent");
  resolve(a.cuEventCreate, "hipEventCreateWithFlags");
  resolve(a.cuEventDestroy, "hipEventDestroy");
  resolve(a.cuEventRecord, "hipEventRecord");
  resolve(a.cuEventSynchronize, "hipEventSynchronize");
  resolve(a.cuEventQuery, "hipEventQuery");
  resolve(a.cuEventElapsedTime, "hipEventElapsedTime");
  resolve(a.cuModuleLoadDataEx, "hipModuleLoadDataEx");
  resolve(a.cuModuleUnload, "hipModuleUnload");
  resolve(a.cuModuleGetFunction, "hipModuleGetFunction");
  resolve(a.cuModuleGetGlobal, "hipModuleGetGlobal");
  resolve(a.cuFuncGetAttribute, "hipFuncGetAttribute");
  resolve(a.cuLaunchKernel, "hipModuleLaunchKernel");
  if (!complete) return;  // the library stays loaded: unloading a runtime is never worth it
  // Optional: dynamic shared memory beyond the default (needed where HIP runs over CUDA), graphs
  // (launch batches, command buffers), mapped host memory (cl_arm_import_memory), properties.
  a.cuFuncSetAttribute = &func_set_attribute;
  auto optional = [&](auto& member, const char* name) {
    member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(dlsym(library, name));
  };
  optional(n.hipFuncSetAttribute, "hipFuncSetAttribute");
  optional(a.cuGraphCreate, "hipGraphCreate");
  optional(n.hipGraphAddKernelNode, "hipGraphAddKernelNode");
  optional(a.cuGraphInstantiate, "hipGraphInstantiateWithFlags");
  optional(n.hipGraphExecKernelNodeSetParams, "hipGraphExecKernelNodeSetParams");
  optional(a.cuGraphLaunch, "hipGraphLaunch");
  optional(a.cuGraphExecDestroy, "hipGraphExecDestroy");
  optional(a.cuGraphDestroy, "hipGraphDestroy");
  optional(n.hipGraphAddMemcpyNode1D, "hipGraphAddMemcpyNode1D");
  optional(n.hipGraphAddMemsetNode, "hipGraphAddMemsetNode");
  if (n.hipGraphAddKernelNode) a.cuGraphAddKernelNode = &graph_add_kernel_node;
  if (n.hipGraphExecKernelNodeSetParams)
    a.cuGraphExecKernelNodeSetParams = &graph_exec_kernel_node_set_params;
  if (n.hipGraphAddMemcpyNode1D) a.cuGraphAddMemcpyNode = &graph_add_memcpy_node;
  if (n.hipGraphAddMemsetNode) a.cuGraphAddMemsetNode = &graph_add_memset_node;
  a.has_graphs = a.cuGraphCreate && a.cuGraphAddKernelNode && a.cuGraphInstantiate &&
                 a.cuGraphExecKernelNodeSetParams && a.cuGraphLaunch && a.cuGraphExecDestroy &&
                 a.cuGraphDestroy;
  optional(a.cuMemHostGetDevicePointer, "hipHostGetDevicePointer");
  // Sub-devices (CU masks); whether the runtime honours them the device finds out by making one.
  optional(a.hipExtStreamCreateWithCUMask, "hipExtStreamCreateWithCUMask");
  // HIP 6 names HIP 5's layout hipGetDevicePropertiesR0000 (its plain name may take the new one).
  optional(n.hipGetDeviceProperties, "hipGetDevicePropertiesR0000");
  const bool versioned_properties = n.hipGetDeviceProperties != nullptr;
  if (!versioned_properties) optional(n.hipGetDeviceProperties, "hipGetDeviceProperties");
  if (CUresult r = a.cuInit(0); r != 0) {
    const char* name = n.hipGetErrorName(r);
    g_why =
        std::string("hipInit failed: ") + (name ? name : std::to_string(r)) + " (no usable GPU)";
    return;
  }
  a.cuDriverGetVersion(&a.driver_version);
  g_major = a.driver_version / 10000000;
  // A HIP 6 without the versioned name: the plain one's layout is unknown here.
  if (g_major >= 6 && !versioned_properties) n.hipGetDeviceProperties = nullptr;
  // Virtual memory management (SVM): HIP 6's structures are CUDA's (hipMemAllocationProp,
  // hipMemAccessDesc, the same constants); HIP 5's hipMemAllocationProp had another layout, so
  // HIP 5 devices report no SVM.
  if (g_major >= 6) {
    optional(a.cuMemAddressReserve, "hipMemAddressReserve");
    optional(a.cuMemAddressFree, "hipMemAddressFree");
    optional(a.cuMemCreate, "hipMemCreate");
    optional(a.cuMemRelease, "hipMemRelease");
    optional(a.cuMemMap, "hipMemMap");
    optional(a.cuMemUnmap, "hipMemUnmap");
    optional(a.cuMemSetAccess, "hipMemSetAccess");
    optional(a.cuMemGetAllocationGranularity, "hipMemGetAllocationGranularity");
  }
  a.has_vmm = a.cuMemAddressReserve && a.cuMemAddressFree && a.cuMemCreate && a.cuMemRelease &&
              a.cuMemMap && a.cuMemUnmap && a.cuMemSetAccess && a.cuMemGetAllocationGranularity;
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

int major_version() { return g_major; }

std::string error_text(CUresult result) {
  const char* name = g_loaded ? g_native.hipGetErrorName(result) : nullptr;
  const char* text = g_loaded ? g_native.hipGetErrorString(result) : nullptr;
  std::string out = name ? name : "HIP error " + std::to_string(result);
  if (text) out += std::string(" (") + text + ")";
  return out;
}

std::string arch_name(CUdevice device) {
  if (!g_native.hipGetDeviceProperties) return {};
  // hipDeviceProp_t (HIP 5 layout, 792 bytes) in a buffer to spare; gcnArchName[256] at 396.
  constexpr size_t kArchOffset = 396, kArchSize = 256;
  alignas(16) char props[4096] = {};
  if (g_native.hipGetDeviceProperties(props, device) != 0) return {};
  return std::string(props + kArchOffset, strnlen(props + kArchOffset, kArchSize));
}

}  // namespace manifold::hip
