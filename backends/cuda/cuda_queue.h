// The CUDA flavour of the shared GPU stream queues and staged transfers
// (backends/gpu_stream/stream_queue.h, staging.h).
#pragma once

#include "backends/cuda/cuda_device.h"
#include "backends/gpu_stream/staging.h"
#include "backends/gpu_stream/stream_queue.h"

namespace manifold::cuda {

struct CudaStreamApi {
  using Device = CudaDevice;
  using Stream = CUstream;
  using Event = CUevent;
  using DevicePtr = CUdeviceptr;

  static void make_current(Device& d) { d.make_current(); }
  static Stream create_stream(Device&) {
    CUstream s = nullptr;
    // Non-blocking: never implicitly ordered after the legacy default stream.
    if (CUresult r = api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS)
      fail(CL_OUT_OF_RESOURCES, "cuStreamCreate: " + error_text(r));
    return s;
  }
  static void destroy_stream(Device&, Stream s) { api().cuStreamDestroy(s); }
  static Event create_event(Device&, bool timing, bool blocking_sync) {
    CUevent e = nullptr;
    unsigned flags = timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
    // Blocking sync: the waiter thread sleeps in the driver until the GPU interrupts.
    if (blocking_sync) flags |= CU_EVENT_BLOCKING_SYNC;
    if (CUresult r = api().cuEventCreate(&e, flags); r != CUDA_SUCCESS)
      fail(CL_OUT_OF_RESOURCES, "cuEventCreate: " + error_text(r));
    return e;
  }
  static void destroy_event(Device&, Event e) { api().cuEventDestroy(e); }
  static void record(Event e, Stream s) { api().cuEventRecord(e, s); }
  static void stream_wait(Stream s, Event e) { api().cuStreamWaitEvent(s, e, 0); }
  static bool event_done(Event e) { return api().cuEventQuery(e) == CUDA_SUCCESS; }
  static cl_int status_of(CUresult r) {
    return r == CUDA_SUCCESS ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
  }
  static cl_int synchronize_event(Event e) { return status_of(api().cuEventSynchronize(e)); }
  static cl_int synchronize_stream(Stream s) { return status_of(api().cuStreamSynchronize(s)); }
  static double elapsed_ns(Event from, Event to) {
    float ms = 0;
    if (api().cuEventElapsedTime(&ms, from, to) != CUDA_SUCCESS) return 0;
    return double(ms) * 1e6;
  }
  static cl_int execute(Device& d, Command& command, Stream s) { return d.execute(command, s); }

  // staging.h
  static void* alloc_pinned(Device&, size_t size) {
    void* p = nullptr;
    return api().cuMemHostAlloc(&p, size, CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS ? p : nullptr;
  }
  static void free_pinned(Device&, void* p) { api().cuMemFreeHost(p); }
  static bool register_host(Device& d, void* p, size_t size) {
    d.make_current();
    return api().cuMemHostRegister(p, size, CU_MEMHOSTREGISTER_PORTABLE) == CUDA_SUCCESS;
  }
  static void unregister_host(Device&, void* p) { api().cuMemHostUnregister(p); }
  static cl_int copy_to_device_async(DevicePtr dst, const void* src, size_t size, Stream s) {
    return status_of(api().cuMemcpyHtoDAsync(dst, src, size, s));
  }
  static cl_int copy_to_host_async(void* dst, DevicePtr src, size_t size, Stream s) {
    return status_of(api().cuMemcpyDtoHAsync(dst, src, size, s));
  }
};

}  // namespace manifold::cuda
