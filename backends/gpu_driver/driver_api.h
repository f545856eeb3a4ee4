// The GPU driver API that the shared driver backend (backends/gpu_driver/) calls: CUDA's driver
// API shapes, which HIP's module API repeats almost 1:1 (hipModuleLaunchKernel ~ cuLaunchKernel,
// hipMemcpyHtoDAsync ~ cuMemcpyHtoDAsync, hipGraph* ~ cuGraph*). Each vendor fills one table of
// these functions at load time: CUDA with libcuda's entry points (backends/cuda/cuda_api.cpp),
// HIP with libamdhip64's, through small adapters where HIP's shape or constants differ
// (backends/hip/hip_api.cpp). Manifold never includes a vendor header: the types and constants
// below are its own, with cuda.h's values (the drivers keep them stable across versions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace manifold::gpu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUhostFn = void (*)(void* user_data);
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUgraphNode = struct CUgraphNode_st*;

struct CUuuid {
  char bytes[16];
};

// Only the members Manifold sets; the layout is cuda.h's CUDA_MEMCPY3D.
struct CUDA_MEMCPY3D {
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  int srcMemoryType;
  const void* srcHost;
  CUdeviceptr srcDevice;
  void* srcArray;
  void* reserved0;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  int dstMemoryType;
  void* dstHost;
  CUdeviceptr dstDevice;
  void* dstArray;
  void* reserved1;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
};

// cuda.h's CUDA_MEMSET_NODE_PARAMS (element size 1, 2 or 4 bytes).
struct CUDA_MEMSET_NODE_PARAMS {
  CUdeviceptr dst;
  size_t pitch;
  unsigned value, elementSize;
  size_t width, height;
};

// cuda.h's CUDA_KERNEL_NODE_PARAMS (the _v2 layout that cuGraphAddKernelNode_v2 and
// cuGraphExecKernelNodeSetParams_v2 take).
struct CUDA_KERNEL_NODE_PARAMS {
  CUfunction func;
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  void** kernelParams;
  void** extra;
  void* kern;  // CUkernel: unused (func is set)
  CUcontext ctx;
};

// Virtual memory management (cuMemCreate/cuMemMap): the members Manifold sets, cuda.h's layout.
using CUmemGenericAllocationHandle = unsigned long long;
struct CUmemLocation {
  int type;  // CU_MEM_LOCATION_TYPE_DEVICE
  int id;    // the device ordinal
};
struct CUmemAllocationProp {
  int type;  // CU_MEM_ALLOCATION_TYPE_PINNED
  int requestedHandleTypes;
  CUmemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType, gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
};
struct CUmemAccessDesc {
  CUmemLocation location;
  int flags;  // CU_MEM_ACCESS_FLAGS_PROT_READWRITE
};
constexpr int CU_MEM_LOCATION_TYPE_DEVICE = 1;
constexpr int CU_MEM_ALLOCATION_TYPE_PINNED = 1;
constexpr int CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3;
constexpr int CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0;

// Green contexts (CUDA 12.4 on): a context restricted to a group of the device's SMs, made from a
// split of the device's SM resource. cuda.h's CUdevResource layout (RESOURCE_ABI_VERSION 1): the
// driver keeps what identifies the resource in the padding.
using CUgreenCtx = struct CUgreenCtx_st*;
using CUdevResourceDesc = struct CUdevResourceDesc_st*;
struct CUdevSmResource {
  unsigned smCount, minSmPartitionSize, smCoscheduledAlignment;
};
struct CUdevResource {
  int type;  // CU_DEV_RESOURCE_TYPE_SM, or CU_DEV_RESOURCE_TYPE_INVALID (an empty remainder)
  unsigned char _internal_padding[92];
  union {
    CUdevSmResource sm;
    unsigned char _oversize[48];
  };
};
static_assert(sizeof(CUdevResource) == 144, "cuda.h's CUdevResource");
constexpr int CU_DEV_RESOURCE_TYPE_INVALID = 0;
constexpr int CU_DEV_RESOURCE_TYPE_SM = 1;
constexpr unsigned CU_GREEN_CTX_DEFAULT_STREAM = 0x1;  // required by cuGreenCtxCreate (CUDA 13.0)

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr CUresult CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712;
constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;

enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT = 14,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
  CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
  CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
};

enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum CUjit_option : int {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
};

constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
constexpr unsigned CU_EVENT_DEFAULT = 0x0;
constexpr unsigned CU_EVENT_BLOCKING_SYNC = 0x1;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 0x1;
constexpr unsigned CU_MEMHOSTALLOC_DEVICEMAP = 0x2;
constexpr unsigned CU_MEMHOSTREGISTER_PORTABLE = 0x1;
constexpr unsigned CU_MEMHOSTREGISTER_DEVICEMAP = 0x2;
constexpr unsigned CU_CTX_SCHED_AUTO = 0x0;
constexpr int CU_MEMORYTYPE_HOST = 1;
constexpr int CU_MEMORYTYPE_DEVICE = 2;

// The function table: X(member, symbol, return type, parameters). `symbol` is libcuda's entry
// point (the versioned one where cuda.h maps the name to one, e.g. cuMemAlloc -> cuMemAlloc_v2);
// HIP's loader names its own (backends/hip/hip_api.cpp).
#define MANIFOLD_GPU_DRIVER_FUNCTIONS(X)                                                          \
  X(cuInit, "cuInit", CUresult, (unsigned))                                                       \
  X(cuDriverGetVersion, "cuDriverGetVersion", CUresult, (int*))                                   \
  X(cuGetErrorName, "cuGetErrorName", CUresult, (CUresult, const char**))                         \
  X(cuGetErrorString, "cuGetErrorString", CUresult, (CUresult, const char**))                     \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int*))                                       \
  X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice*, int))                                       \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult, (char*, int, CUdevice))                         \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int*, CUdevice_attribute, CUdevice)) \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", CUresult, (size_t*, CUdevice))                       \
  X(cuDeviceGetUuid, "cuDeviceGetUuid_v2", CUresult, (CUuuid*, CUdevice))                         \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext*, CUdevice))       \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice))              \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                                    \
  X(cuCtxSynchronize, "cuCtxSynchronize", CUresult, ())                                           \
  X(cuMemGetInfo, "cuMemGetInfo_v2", CUresult, (size_t*, size_t*))                                \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr*, size_t))                                \
  X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                                           \
  X(cuMemHostAlloc, "cuMemHostAlloc", CUresult, (void**, size_t, unsigned))                       \
  X(cuMemFreeHost, "cuMemFreeHost", CUresult, (void*))                                            \
  X(cuMemHostRegister, "cuMemHostRegister_v2", CUresult, (void*, size_t, unsigned))               \
  X(cuMemHostUnregister, "cuMemHostUnregister", CUresult, (void*))                                \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult, (CUdeviceptr, const void*, size_t))                \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUresult,                                          \
    (CUdeviceptr, const void*, size_t, CUstream))                                                 \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult, (void*, CUdeviceptr, size_t, CUstream))  \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", CUresult,                                          \
    (CUdeviceptr, CUdeviceptr, size_t, CUstream))                                                 \
  X(cuMemcpy3DAsync, "cuMemcpy3DAsync_v2", CUresult, (const CUDA_MEMCPY3D*, CUstream))            \
  X(cuMemcpyPeerAsync, "cuMemcpyPeerAsync", CUresult,                                             \
    (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream))                           \
  X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", CUresult, (int*, CUdevice, CUdevice))         \
  X(cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess", CUresult, (CUcontext, unsigned))              \
  X(cuMemsetD8Async, "cuMemsetD8Async", CUresult, (CUdeviceptr, unsigned char, size_t, CUstream)) \
  X(cuMemsetD16Async, "cuMemsetD16Async", CUresult,                                               \
    (CUdeviceptr, unsigned short, size_t, CUstream))                                              \
  X(cuMemsetD32Async, "cuMemsetD32Async", CUresult, (CUdeviceptr, unsigned, size_t, CUstream))    \
  X(cuStreamCreate, "cuStreamCreate", CUresult, (CUstream*, unsigned))                            \
  X(cuStreamDestroy, "cuStreamDestroy_v2", CUresult, (CUstream))                                  \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream))                             \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", CUresult, (CUstream, CUevent, unsigned))              \
  X(cuEventCreate, "cuEventCreate", CUresult, (CUevent*, unsigned))                               \
  X(cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))                                     \
  X(cuEventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))                                \
  X(cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent))                                \
  X(cuEventQuery, "cuEventQuery", CUresult, (CUevent))                                            \
  X(cuEventElapsedTime, "cuEventElapsedTime", CUresult, (float*, CUevent, CUevent))               \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", CUresult,                                           \
    (CUmodule*, const void*, unsigned, CUjit_option*, void**))                                    \
  X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                                       \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction*, CUmodule, const char*))   \
  X(cuModuleGetGlobal, "cuModuleGetGlobal_v2", CUresult,                                          \
    (CUdeviceptr*, size_t*, CUmodule, const char*))                                               \
  X(cuFuncGetAttribute, "cuFuncGetAttribute", CUresult, (int*, CUfunction_attribute, CUfunction)) \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction, CUfunction_attribute, int))  \
  X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                                   \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,  \
     void**, void**))

// Functions Manifold can do without (null where the driver lacks them): CUDA graphs, which
// batch runs of launches (backends/gpu_stream/launch_batch.h), and virtual memory management
// and mapped host memory (core/device_memory.h).
#define MANIFOLD_GPU_DRIVER_OPTIONAL_FUNCTIONS(X)                                            \
  X(cuGraphCreate, "cuGraphCreate", CUresult, (CUgraph*, unsigned))                          \
  X(cuGraphAddKernelNode, "cuGraphAddKernelNode_v2", CUresult,                               \
    (CUgraphNode*, CUgraph, const CUgraphNode*, size_t, const CUDA_KERNEL_NODE_PARAMS*))     \
  X(cuGraphInstantiate, "cuGraphInstantiateWithFlags", CUresult,                             \
    (CUgraphExec*, CUgraph, unsigned long long))                                             \
  X(cuGraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams_v2", CUresult,           \
    (CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS*))                              \
  X(cuGraphLaunch, "cuGraphLaunch", CUresult, (CUgraphExec, CUstream))                       \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", CUresult, (CUgraphExec))                       \
  X(cuGraphDestroy, "cuGraphDestroy", CUresult, (CUgraph))                                   \
  X(cuGraphAddMemcpyNode, "cuGraphAddMemcpyNode", CUresult,                                  \
    (CUgraphNode*, CUgraph, const CUgraphNode*, size_t, const CUDA_MEMCPY3D*, CUcontext))    \
  X(cuGraphAddMemsetNode, "cuGraphAddMemsetNode", CUresult,                                  \
    (CUgraphNode*, CUgraph, const CUgraphNode*, size_t, const CUDA_MEMSET_NODE_PARAMS*,      \
     CUcontext))                                                                             \
  X(cuMemAddressReserve, "cuMemAddressReserve", CUresult,                                    \
    (CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long))                         \
  X(cuMemAddressFree, "cuMemAddressFree", CUresult, (CUdeviceptr, size_t))                   \
  X(cuMemCreate, "cuMemCreate", CUresult,                                                    \
    (CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long)) \
  X(cuMemRelease, "cuMemRelease", CUresult, (CUmemGenericAllocationHandle))                  \
  X(cuMemMap, "cuMemMap", CUresult,                                                          \
    (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long))         \
  X(cuMemUnmap, "cuMemUnmap", CUresult, (CUdeviceptr, size_t))                               \
  X(cuMemSetAccess, "cuMemSetAccess", CUresult,                                              \
    (CUdeviceptr, size_t, const CUmemAccessDesc*, size_t))                                   \
  X(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity", CUresult,                \
    (size_t*, const CUmemAllocationProp*, int))                                              \
  X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", CUresult,                     \
    (CUdeviceptr*, void*, unsigned))

// Green contexts, for CUDA's sub-devices (null where the driver lacks them: no partition scheme
// then; and on HIP, whose loader fills none of them: HIP's sub-devices are CU masks).
#define MANIFOLD_GPU_DRIVER_GREEN_FUNCTIONS(X)                                                   \
  X(cuDeviceGetDevResource, "cuDeviceGetDevResource", CUresult, (CUdevice, CUdevResource*, int)) \
  X(cuDevSmResourceSplitByCount, "cuDevSmResourceSplitByCount", CUresult,                        \
    (CUdevResource*, unsigned*, const CUdevResource*, CUdevResource*, unsigned, unsigned))       \
  X(cuDevResourceGenerateDesc, "cuDevResourceGenerateDesc", CUresult,                            \
    (CUdevResourceDesc*, CUdevResource*, unsigned))                                              \
  X(cuGreenCtxCreate, "cuGreenCtxCreate", CUresult,                                              \
    (CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned))                                        \
  X(cuGreenCtxDestroy, "cuGreenCtxDestroy", CUresult, (CUgreenCtx))                              \
  X(cuCtxFromGreenCtx, "cuCtxFromGreenCtx", CUresult, (CUcontext*, CUgreenCtx))                  \
  X(cuGreenCtxStreamCreate, "cuGreenCtxStreamCreate", CUresult,                                  \
    (CUstream*, CUgreenCtx, unsigned, int))                                                      \
  X(cuGreenCtxGetDevResource, "cuGreenCtxGetDevResource", CUresult,                              \
    (CUgreenCtx, CUdevResource*, int))

// How a vendor's sub-devices get their share of a GPU (each vendor policy names one:
// driver_device.h).
//   GreenContexts (CUDA): a green context on a group of the GPU's SMs, streams made in it.
//   CuMasks (HIP): streams of the GPU's own context made with a mask of its compute units.
enum class Partitioning { GreenContexts, CuMasks };

struct Api {
#define MANIFOLD_GPU_DRIVER_MEMBER(member, symbol, ret, params) ret(*member) params = nullptr;
  MANIFOLD_GPU_DRIVER_FUNCTIONS(MANIFOLD_GPU_DRIVER_MEMBER)
  MANIFOLD_GPU_DRIVER_OPTIONAL_FUNCTIONS(MANIFOLD_GPU_DRIVER_MEMBER)
  MANIFOLD_GPU_DRIVER_GREEN_FUNCTIONS(MANIFOLD_GPU_DRIVER_MEMBER)
#undef MANIFOLD_GPU_DRIVER_MEMBER
  // HIP's streams on a set of compute units (AMD's extension; null on CUDA and where the runtime
  // lacks it): bit i of the mask's 32-bit words is CU i.
  CUresult (*hipExtStreamCreateWithCUMask)(CUstream*, uint32_t cu_mask_words,
                                           const uint32_t* cu_mask) = nullptr;
  bool has_graphs = false;  // every optional graph function is there
  bool has_vmm = false;     // every virtual memory management function is there
  // Every green-context function but cuGreenCtxGetDevResource (without it, sub-devices are not
  // partitioned again) is there.
  bool has_green_contexts = false;
  int driver_version = 0;  // e.g. 13000 for CUDA 13.0, 50221153 for HIP 5.2.21153
};

}  // namespace manifold::gpu
