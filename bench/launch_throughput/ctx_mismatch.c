// Build: gcc -O1 -I/usr/local/cuda/include ctx_mismatch.c -L/usr/local/cuda/lib64/stubs -lcuda
// What the CUDA driver does when the thread's current context is not the one a stream,
// function and event belong to.
#include <cuda.h>
#include <stdio.h>
static const char* ptx =
".version 7.8\n.target sm_90\n.address_size 64\n"
".visible .entry empty(.param .u64 p) { ret; }\n";
static void show(const char* what, CUresult r) {
  const char* name = 0; cuGetErrorName(r, &name); printf("%-40s %d %s\n", what, (int)r, name ? name : "?");
}
int main(void) {
  cuInit(0);
  CUdevice dev; cuDeviceGet(&dev, 0);
  CUcontext a, b; cuDevicePrimaryCtxRetain(&a, dev); cuCtxSetCurrent(a);
  CUmodule m; show("load module", cuModuleLoadData(&m, ptx));
  CUfunction f; show("get function", cuModuleGetFunction(&f, m, "empty"));
  CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUevent e; cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
  CUdeviceptr p; cuMemAlloc(&p, 4096);
  static char host[4096];
  void* params[] = {&p};
  show("launch, right context", cuLaunchKernel(f, 1,1,1, 1,1,1, 0, s, params, 0));
  CUctxCreateParams cp = {0};
  show("create second context", cuCtxCreate(&b, &cp, 0, dev));
  cuCtxSetCurrent(b);
  show("launch, other context", cuLaunchKernel(f, 1,1,1, 1,1,1, 0, s, params, 0));
  show("memset async, other context", cuMemsetD8Async(p, 0, 4096, s));
  show("memcpy HtoD async, other context", cuMemcpyHtoDAsync(p, host, 4096, s));
  show("event record, other context", cuEventRecord(e, s));
  show("event query, other context", cuEventQuery(e));
  show("stream sync, other context", cuStreamSynchronize(s));
  cuCtxSetCurrent(NULL);
  show("launch, no context", cuLaunchKernel(f, 1,1,1, 1,1,1, 0, s, params, 0));
  show("memset async, no context", cuMemsetD8Async(p, 0, 4096, s));
  show("event record, no context", cuEventRecord(e, s));
  cuCtxSetCurrent(a);
  show("stream sync, right context", cuStreamSynchronize(s));
  return 0;
}
