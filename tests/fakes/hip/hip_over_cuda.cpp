// HIP's runtime entry points that Manifold's HIP backend loads (backends/hip/hip_api.cpp),
// implemented over the CUDA driver API: HIP's NVIDIA platform in one small library. Test-only,
// never installed, selected with MANIFOLD_HIP_RUNTIME=<path>. Linked two ways (CMakeLists.txt):
//   libhip_over_cuda.so: over the real libcuda.so.1, so that the HIP backend's whole runtime path
//     (devices, queues, memory, launches, events, graphs) runs on an NVIDIA GPU. Its devices name
//     their architecture "sm_XY" (gcnArchName), so the backend compiles PTX for them.
//   libnull_hip.so: over the simulated CUDA driver (null_cuda.cpp), for CI and the sanitizers.
// Structures and constants are HIP's (hip_runtime_api.h, HIP 5 and 6), written out here so that
// the library needs no HIP headers; the backend's adapters translate to and from them.
// hipExtStreamCreateWithCUMask (sub-devices) is hip_cu_masks.cpp's, over green contexts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

using CUresult = int;
using Ptr = unsigned long long;

// CUDA's structures (cuda.h) as the shim fills them.
struct CudaMemcpy3D {
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  int srcMemoryType;
  const void* srcHost;
  Ptr srcDevice;
  void *srcArray, *reserved0;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  int dstMemoryType;
  void* dstHost;
  Ptr dstDevice;
  void *dstArray, *reserved1;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
};
struct CudaMemsetParams {
  Ptr dst;
  size_t pitch;
  unsigned value, elementSize;
  size_t width, height;
};
struct CudaKernelNodeParams {
  void* func;
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  void** kernelParams;
  void** extra;
  void* kern;
  void* ctx;
};

// HIP's.
struct Dim3 {
  unsigned x, y, z;
};
struct HipKernelNodeParams {
  Dim3 blockDim;
  void** extra;
  void* func;
  Dim3 gridDim;
  void** kernelParams;
  unsigned sharedMemBytes;
};
struct HipMemsetParams {
  void* dst;
  unsigned elementSize;
  size_t height, pitch;
  unsigned value;
  size_t width;
};
constexpr size_t kPropsSize = 792,
                 kArchOffset = 396;  // hipDeviceProp_t (HIP 5 layout): gcnArchName

// hipDeviceAttribute_t -> CUdevice_attribute (the inverse of the backend's table).
int cuda_attribute(int hip) {
  switch (hip) {
    case 56:
      return 1;  // max threads per block
    case 26:
      return 2;  // block dims
    case 27:
      return 3;
    case 28:
      return 4;
    case 29:
      return 5;  // grid dims
    case 30:
      return 6;
    case 31:
      return 7;
    case 74:
      return 8;  // shared memory per block
    case 83:
      return 9;  // constant memory
    case 87:
      return 10;  // warp size
    case 5:
      return 13;  // clock rate
    case 81:
      return 14;  // texture alignment
    case 63:
      return 16;  // multiprocessors
    case 16:
      return 18;  // integrated
    case 3:
      return 19;  // can map host memory
    case 0:
      return 32;  // ECC
    case 67:
      return 33;  // PCI bus
    case 68:
      return 34;  // PCI device
    case 60:
      return 36;  // memory clock
    case 59:
      return 37;  // memory bus width
    case 19:
      return 38;  // L2
    case 85:
      return 41;  // unified addressing
    case 69:
      return 50;  // PCI domain
    case 23:
      return 75;  // compute capability
    case 61:
      return 76;
    case 75:
      return 97;  // shared memory opt-in
    case 89:
      return 102;  // virtual memory management
    default:
      return -1;
  }
}

constexpr CUresult kInvalidValue = 1;
constexpr int kCuMemoryTypeDevice = 2;

}  // namespace

// The CUDA driver's entry points (libcuda.so.1, or the simulated driver linked in).
extern "C" {
CUresult cuInit(unsigned);
CUresult cuGetErrorName(CUresult, const char**);
CUresult cuGetErrorString(CUresult, const char**);
CUresult cuDeviceGetCount(int*);
CUresult cuDeviceGet(int*, int);
CUresult cuDeviceGetName(char*, int, int);
CUresult cuDeviceGetAttribute(int*, int, int);
CUresult cuDeviceTotalMem_v2(size_t*, int);
CUresult cuDeviceGetUuid_v2(void*, int);
CUresult cuDevicePrimaryCtxRetain(void**, int);
CUresult cuDevicePrimaryCtxRelease_v2(int);
CUresult cuCtxSetCurrent(void*);
CUresult cuCtxGetCurrent(void**);
CUresult cuCtxSynchronize();
CUresult cuMemGetInfo_v2(size_t*, size_t*);
CUresult cuMemAlloc_v2(Ptr*, size_t);
CUresult cuMemFree_v2(Ptr);
CUresult cuMemHostAlloc(void**, size_t, unsigned);
CUresult cuMemFreeHost(void*);
CUresult cuMemHostRegister_v2(void*, size_t, unsigned);
CUresult cuMemHostUnregister(void*);
CUresult cuMemHostGetDevicePointer_v2(Ptr*, void*, unsigned);
CUresult cuMemcpyHtoD_v2(Ptr, const void*, size_t);
CUresult cuMemcpyHtoDAsync_v2(Ptr, const void*, size_t, void*);
CUresult cuMemcpyDtoHAsync_v2(void*, Ptr, size_t, void*);
CUresult cuMemcpyDtoDAsync_v2(Ptr, Ptr, size_t, void*);
CUresult cuMemcpyAsync(Ptr, Ptr, size_t, void*);
CUresult cuDeviceCanAccessPeer(int*, int, int);
CUresult cuCtxEnablePeerAccess(void*, unsigned);
CUresult cuMemsetD8Async(Ptr, unsigned char, size_t, void*);
CUresult cuMemsetD16Async(Ptr, unsigned short, size_t, void*);
CUresult cuMemsetD32Async(Ptr, unsigned, size_t, void*);
CUresult cuStreamCreate(void**, unsigned);
CUresult cuStreamDestroy_v2(void*);
CUresult cuStreamSynchronize(void*);
CUresult cuStreamWaitEvent(void*, void*, unsigned);
CUresult cuEventCreate(void**, unsigned);
CUresult cuEventDestroy_v2(void*);
CUresult cuEventRecord(void*, void*);
CUresult cuEventSynchronize(void*);
CUresult cuEventQuery(void*);
CUresult cuEventElapsedTime(float*, void*, void*);
CUresult cuModuleLoadDataEx(void**, const void*, unsigned, int*, void**);
CUresult cuModuleUnload(void*);
CUresult cuModuleGetFunction(void**, void*, const char*);
CUresult cuModuleGetGlobal_v2(Ptr*, size_t*, void*, const char*);
CUresult cuFuncGetAttribute(int*, int, void*);
CUresult cuFuncSetAttribute(void*, int, int);
CUresult cuLaunchKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        void*, void**, void**);
CUresult cuMemAddressReserve(Ptr*, size_t, size_t, Ptr, unsigned long long);
CUresult cuMemAddressFree(Ptr, size_t);
CUresult cuMemCreate(unsigned long long*, size_t, const void*, unsigned long long);
CUresult cuMemRelease(unsigned long long);
CUresult cuMemMap(Ptr, size_t, size_t, unsigned long long, unsigned long long);
CUresult cuMemUnmap(Ptr, size_t);
CUresult cuMemSetAccess(Ptr, size_t, const void*, size_t);
CUresult cuMemGetAllocationGranularity(size_t*, const void*, int);
CUresult cuGraphCreate(void**, unsigned);
CUresult cuGraphAddKernelNode_v2(void**, void*, void* const*, size_t, const CudaKernelNodeParams*);
CUresult cuGraphAddMemcpyNode(void**, void*, void* const*, size_t, const CudaMemcpy3D*, void*);
CUresult cuGraphAddMemsetNode(void**, void*, void* const*, size_t, const CudaMemsetParams*, void*);
CUresult cuGraphInstantiateWithFlags(void**, void*, unsigned long long);
CUresult cuGraphExecKernelNodeSetParams_v2(void*, void*, const CudaKernelNodeParams*);
CUresult cuGraphLaunch(void*, void*);
CUresult cuGraphExecDestroy(void*);
CUresult cuGraphDestroy(void*);
}

namespace {
CudaKernelNodeParams cuda_kernel_node(const HipKernelNodeParams& h) {
  CudaKernelNodeParams p{};
  p.func = h.func;
  p.gridDimX = h.gridDim.x, p.gridDimY = h.gridDim.y, p.gridDimZ = h.gridDim.z;
  p.blockDimX = h.blockDim.x, p.blockDimY = h.blockDim.y, p.blockDimZ = h.blockDim.z;
  p.sharedMemBytes = h.sharedMemBytes;
  p.kernelParams = h.kernelParams;
  p.extra = h.extra;
  return p;
}
void* current_context() {
  void* ctx = nullptr;
  cuCtxGetCurrent(&ctx);
  return ctx;
}
}  // namespace

#define HIP extern "C" __attribute__((visibility("default")))

HIP CUresult hipInit(unsigned flags) { return cuInit(flags); }
// HIP's version encoding (major * 10000000 + minor * 100000): the API this shim follows, 6.0
// (whose virtual memory management structures are CUDA's).
HIP CUresult hipDriverGetVersion(int* version) {
  *version = 60000000;
  return 0;
}
HIP const char* hipGetErrorName(CUresult r) {
  const char* s = "hipErrorUnknown";
  cuGetErrorName(r, &s);
  return s;
}
HIP const char* hipGetErrorString(CUresult r) {
  const char* s = "unknown error";
  cuGetErrorString(r, &s);
  return s;
}
HIP CUresult hipGetDeviceCount(int* n) { return cuDeviceGetCount(n); }
HIP CUresult hipDeviceGet(int* d, int ordinal) { return cuDeviceGet(d, ordinal); }
HIP CUresult hipDeviceGetName(char* name, int n, int d) { return cuDeviceGetName(name, n, d); }
HIP CUresult hipDeviceGetAttribute(int* value, int which, int d) {
  const int cuda = cuda_attribute(which);
  if (cuda < 0) return kInvalidValue;
  return cuDeviceGetAttribute(value, cuda, d);
}
HIP CUresult hipDeviceTotalMem(size_t* bytes, int d) { return cuDeviceTotalMem_v2(bytes, d); }
HIP CUresult hipDeviceGetUuid(void* uuid, int d) { return cuDeviceGetUuid_v2(uuid, d); }
// HIP 6 keeps HIP 5's hipDeviceProp_t layout under this name (the backend asks for it first).
HIP CUresult hipGetDevicePropertiesR0000(void* props, int d) {
  std::memset(props, 0, kPropsSize);
  auto* bytes = static_cast<char*>(props);
  if (CUresult r = cuDeviceGetName(bytes, 255, d)) return r;
  int major = 0, minor = 0;
  cuDeviceGetAttribute(&major, 75, d);
  cuDeviceGetAttribute(&minor, 76, d);
  char* arch = bytes + kArchOffset;
#ifdef NULL_HIP_SIMULATED
  // The simulated runtime can pose as an AMD GPU (the HIP backend's gfx path: AMDGPU targets,
  // AMD's device facts, code objects) with NULL_HIP_ARCH=gfx90a:sramecc+:xnack- and the like.
  if (const char* posed = std::getenv("NULL_HIP_ARCH")) {
    std::strncpy(arch, posed, 255);
    return 0;
  }
#endif
  const int sm = major * 10 + minor;
  arch[0] = 's', arch[1] = 'm', arch[2] = '_';
  int at = 3;
  if (sm >= 100) arch[at++] = char('0' + sm / 100);
  arch[at++] = char('0' + sm / 10 % 10);
  arch[at++] = char('0' + sm % 10);
  return 0;
}
HIP CUresult hipDevicePrimaryCtxRetain(void** ctx, int d) {
  return cuDevicePrimaryCtxRetain(ctx, d);
}
HIP CUresult hipDevicePrimaryCtxRelease(int d) { return cuDevicePrimaryCtxRelease_v2(d); }
HIP CUresult hipCtxSetCurrent(void* ctx) { return cuCtxSetCurrent(ctx); }
HIP CUresult hipCtxSynchronize() { return cuCtxSynchronize(); }
HIP CUresult hipMemGetInfo(size_t* free_bytes, size_t* total) {
  return cuMemGetInfo_v2(free_bytes, total);
}
HIP CUresult hipMalloc(void** p, size_t n) { return cuMemAlloc_v2(reinterpret_cast<Ptr*>(p), n); }
HIP CUresult hipFree(void* p) { return cuMemFree_v2(reinterpret_cast<Ptr>(p)); }
HIP CUresult hipHostMalloc(void** p, size_t n, unsigned flags) {
  return cuMemHostAlloc(p, n, flags);
}
HIP CUresult hipHostFree(void* p) { return cuMemFreeHost(p); }
HIP CUresult hipHostRegister(void* p, size_t n, unsigned flags) {
  return cuMemHostRegister_v2(p, n, flags);
}
HIP CUresult hipHostUnregister(void* p) { return cuMemHostUnregister(p); }
HIP CUresult hipHostGetDevicePointer(void** d, void* host, unsigned flags) {
  return cuMemHostGetDevicePointer_v2(reinterpret_cast<Ptr*>(d), host, flags);
}
HIP CUresult hipMemcpyHtoD(Ptr d, const void* s, size_t n) { return cuMemcpyHtoD_v2(d, s, n); }
HIP CUresult hipMemcpyHtoDAsync(Ptr d, const void* s, size_t n, void* stream) {
  return cuMemcpyHtoDAsync_v2(d, s, n, stream);
}
HIP CUresult hipMemcpyDtoHAsync(void* d, Ptr s, size_t n, void* stream) {
  return cuMemcpyDtoHAsync_v2(d, s, n, stream);
}
HIP CUresult hipMemcpyDtoDAsync(Ptr d, Ptr s, size_t n, void* stream) {
  return cuMemcpyDtoDAsync_v2(d, s, n, stream);
}
// Every kind through unified addressing (hipMemcpyDefault, what the backend passes).
HIP CUresult hipMemcpyAsync(void* d, const void* s, size_t n, int, void* stream) {
  return cuMemcpyAsync(reinterpret_cast<Ptr>(d), reinterpret_cast<Ptr>(s), n, stream);
}
HIP CUresult hipDeviceCanAccessPeer(int* can, int d, int peer) {
  return cuDeviceCanAccessPeer(can, d, peer);
}
HIP CUresult hipCtxEnablePeerAccess(void* peer, unsigned flags) {
  return cuCtxEnablePeerAccess(peer, flags);
}
HIP CUresult hipMemsetD8Async(Ptr d, unsigned char v, size_t n, void* s) {
  return cuMemsetD8Async(d, v, n, s);
}
HIP CUresult hipMemsetD16Async(Ptr d, unsigned short v, size_t n, void* s) {
  return cuMemsetD16Async(d, v, n, s);
}
HIP CUresult hipMemsetD32Async(Ptr d, int v, size_t n, void* s) {
  return cuMemsetD32Async(d, unsigned(v), n, s);
}
HIP CUresult hipStreamCreateWithFlags(void** s, unsigned flags) { return cuStreamCreate(s, flags); }
HIP CUresult hipStreamDestroy(void* s) { return cuStreamDestroy_v2(s); }
HIP CUresult hipStreamSynchronize(void* s) { return cuStreamSynchronize(s); }
HIP CUresult hipStreamWaitEvent(void* s, void* e, unsigned flags) {
  return cuStreamWaitEvent(s, e, flags);
}
HIP CUresult hipEventCreateWithFlags(void** e, unsigned flags) { return cuEventCreate(e, flags); }
HIP CUresult hipEventDestroy(void* e) { return cuEventDestroy_v2(e); }
HIP CUresult hipEventRecord(void* e, void* s) { return cuEventRecord(e, s); }
HIP CUresult hipEventSynchronize(void* e) { return cuEventSynchronize(e); }
HIP CUresult hipEventQuery(void* e) { return cuEventQuery(e); }
HIP CUresult hipEventElapsedTime(float* ms, void* from, void* to) {
  return cuEventElapsedTime(ms, from, to);
}
HIP CUresult hipModuleLoadDataEx(void** m, const void* image, unsigned n, int* options,
                                 void** values) {
  return cuModuleLoadDataEx(m, image, n, options, values);
}
HIP CUresult hipModuleUnload(void* m) { return cuModuleUnload(m); }
HIP CUresult hipModuleGetFunction(void** f, void* m, const char* name) {
  return cuModuleGetFunction(f, m, name);
}
HIP CUresult hipModuleGetGlobal(Ptr* p, size_t* n, void* m, const char* name) {
  return cuModuleGetGlobal_v2(p, n, m, name);
}
HIP CUresult hipFuncGetAttribute(int* v, int which, void* f) {
  return cuFuncGetAttribute(v, which, f);
}
// hipFuncAttributeMaxDynamicSharedMemorySize (8) is
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
HIP CUresult hipFuncSetAttribute(const void* f, int which, int value) {
  return which == 8 ? cuFuncSetAttribute(const_cast<void*>(f), 8, value) : kInvalidValue;
}
HIP CUresult hipModuleLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                   unsigned by, unsigned bz, unsigned shared, void* stream,
                                   void** params, void** extra) {
  return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}
HIP CUresult hipGraphCreate(void** g, unsigned flags) { return cuGraphCreate(g, flags); }
HIP CUresult hipGraphAddKernelNode(void** node, void* g, void* const* deps, size_t n,
                                   const HipKernelNodeParams* h) {
  const CudaKernelNodeParams p = cuda_kernel_node(*h);
  return cuGraphAddKernelNode_v2(node, g, deps, n, &p);
}
HIP CUresult hipGraphExecKernelNodeSetParams(void* exec, void* node, const HipKernelNodeParams* h) {
  const CudaKernelNodeParams p = cuda_kernel_node(*h);
  return cuGraphExecKernelNodeSetParams_v2(exec, node, &p);
}
HIP CUresult hipGraphAddMemcpyNode1D(void** node, void* g, void* const* deps, size_t n, void* dst,
                                     const void* src, size_t count, int kind) {
  if (kind != 3) return kInvalidValue;  // device to device only (all the backend records)
  CudaMemcpy3D m{};
  m.srcMemoryType = m.dstMemoryType = kCuMemoryTypeDevice;
  m.srcDevice = reinterpret_cast<Ptr>(src);
  m.dstDevice = reinterpret_cast<Ptr>(dst);
  m.srcPitch = m.dstPitch = m.WidthInBytes = count;
  m.srcHeight = m.dstHeight = m.Height = m.Depth = 1;
  return cuGraphAddMemcpyNode(node, g, deps, n, &m, current_context());
}
HIP CUresult hipGraphAddMemsetNode(void** node, void* g, void* const* deps, size_t n,
                                   const HipMemsetParams* h) {
  CudaMemsetParams p{};
  p.dst = reinterpret_cast<Ptr>(h->dst);
  p.pitch = h->pitch;
  p.value = h->value;
  p.elementSize = h->elementSize;
  p.width = h->width;
  p.height = h->height;
  return cuGraphAddMemsetNode(node, g, deps, n, &p, current_context());
}
HIP CUresult hipGraphInstantiateWithFlags(void** exec, void* g, unsigned long long flags) {
  return cuGraphInstantiateWithFlags(exec, g, flags);
}
HIP CUresult hipGraphLaunch(void* exec, void* s) { return cuGraphLaunch(exec, s); }
HIP CUresult hipGraphExecDestroy(void* exec) { return cuGraphExecDestroy(exec); }
HIP CUresult hipGraphDestroy(void* g) { return cuGraphDestroy(g); }

// Virtual memory management: HIP 6's structures (hipMemAllocationProp, hipMemAccessDesc) are
// CUDA's, so they pass through; handles are pointers in HIP, integers in CUDA.
HIP CUresult hipMemAddressReserve(void** p, size_t n, size_t alignment, void* at,
                                  unsigned long long flags) {
  return cuMemAddressReserve(reinterpret_cast<Ptr*>(p), n, alignment, reinterpret_cast<Ptr>(at),
                             flags);
}
HIP CUresult hipMemAddressFree(void* p, size_t n) {
  return cuMemAddressFree(reinterpret_cast<Ptr>(p), n);
}
HIP CUresult hipMemCreate(void** handle, size_t n, const void* prop, unsigned long long flags) {
  return cuMemCreate(reinterpret_cast<unsigned long long*>(handle), n, prop, flags);
}
HIP CUresult hipMemRelease(void* handle) {
  return cuMemRelease(reinterpret_cast<unsigned long long>(handle));
}
HIP CUresult hipMemMap(void* p, size_t n, size_t offset, void* handle, unsigned long long flags) {
  return cuMemMap(reinterpret_cast<Ptr>(p), n, offset, reinterpret_cast<unsigned long long>(handle),
                  flags);
}
HIP CUresult hipMemUnmap(void* p, size_t n) { return cuMemUnmap(reinterpret_cast<Ptr>(p), n); }
HIP CUresult hipMemSetAccess(void* p, size_t n, const void* desc, size_t count) {
  return cuMemSetAccess(reinterpret_cast<Ptr>(p), n, desc, count);
}
HIP CUresult hipMemGetAllocationGranularity(size_t* granularity, const void* prop, int option) {
  return cuMemGetAllocationGranularity(granularity, prop, option);
}
