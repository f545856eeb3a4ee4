// The driver backend's traits for the shared GPU stream queues, launch batches and staged
// transfers (backends/gpu_stream/): every call goes through the vendor V's table (driver_device.h).
#pragma once

#include <span>
#include <vector>

#include "backends/gpu_driver/driver_device.h"
#include "backends/gpu_stream/launch_batch.h"
#include "backends/gpu_stream/staging.h"
#include "backends/gpu_stream/stream_queue.h"
#include "core/log.h"

namespace manifold::gpu {

template <class V>
struct DriverStreamApi {
  using Device = DriverDevice<V>;
  using Stream = CUstream;
  using Event = CUevent;
  using DevicePtr = CUdeviceptr;

  static const Api& api() { return V::api(); }
  static void make_current(Device& d) { d.make_current(); }
  static Stream create_stream(Device& d) { return d.create_stream(); }
  static void destroy_stream(Device&, Stream s) { api().cuStreamDestroy(s); }
  static Event create_event(Device&, bool timing, bool blocking_sync) {
    CUevent e = nullptr;
    unsigned flags = timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
    // Blocking sync: the waiter thread sleeps in the driver until the GPU interrupts.
    if (blocking_sync) flags |= CU_EVENT_BLOCKING_SYNC;
    if (CUresult r = api().cuEventCreate(&e, flags); r != CUDA_SUCCESS)
      fail(CL_OUT_OF_RESOURCES, "cuEventCreate: " + V::error_text(r));
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
  // Puts a job's migrations and operation into `s` through the device operations
  // (driver_ops_impl.h); CL_SUCCESS or the job's error.
  static cl_int execute(Device& d, Job& job, Stream s);

  // launch_batch.h: a chain of kernel nodes in one executable graph.
  struct Chain {
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    std::vector<CUgraphNode> nodes;
    CUcontext ctx = nullptr;  // the kernel nodes' (a sub-device's green context runs them)
  };
  static bool has_graphs(Device&) { return api().has_graphs; }
  // For a launch that waits in a batch: fills `record`; CL_SUCCESS, kNotBatchable (not a
  // plain launch: execute() it), or the launch's error (driver_ops_impl.h).
  static int prepare_launch(Device& d, Job& job, LaunchRecord& record);
  static cl_int launch(Device&, const LaunchRecord& record, Stream s) {
    return status_of(launch_record<V>(record, s));
  }
  // The node parameters of `record`; `pointers` receives its parameter pointers (the driver
  // copies the values during the call that takes them).
  static CUDA_KERNEL_NODE_PARAMS node_params(const LaunchRecord& record,
                                             std::vector<void*>& pointers, CUcontext ctx) {
    pointers.resize(record.offsets.size());
    record.param_pointers(pointers.data());
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = static_cast<CUfunction>(record.function);
    p.gridDimX = record.grid[0], p.gridDimY = record.grid[1], p.gridDimZ = record.grid[2];
    p.blockDimX = record.block[0], p.blockDimY = record.block[1], p.blockDimZ = record.block[2];
    p.sharedMemBytes = record.shared;
    p.kernelParams = pointers.data();
    // A graph's kernel runs on the SMs of the node's context, whatever stream launches it.
    p.ctx = ctx;
    return p;
  }
  static cl_int make_chain(Device& d, std::span<const LaunchRecord> records, Chain& chain) {
    const Api& a = api();
    d.make_current();
    chain.ctx = d.context();
    std::vector<void*> pointers;
    CUresult r = a.cuGraphCreate(&chain.graph, 0);
    chain.nodes.assign(records.size(), nullptr);
    for (size_t i = 0; r == CUDA_SUCCESS && i < records.size(); ++i) {
      const CUDA_KERNEL_NODE_PARAMS p = node_params(records[i], pointers, chain.ctx);
      r = a.cuGraphAddKernelNode(&chain.nodes[i], chain.graph, i ? &chain.nodes[i - 1] : nullptr,
                                 i ? 1 : 0, &p);
    }
    if (r == CUDA_SUCCESS) r = a.cuGraphInstantiate(&chain.exec, chain.graph, 0);
    if (r != CUDA_SUCCESS) {
      log_debug("%s: no graph for a batch of launches: %s", V::kName, V::error_text(r).c_str());
      destroy_chain(d, chain);
    }
    return status_of(r);
  }
  static cl_int set_chain_node(Chain& chain, size_t index, const LaunchRecord& record) {
    // Per thread: the stream queues of several threads update their chains at once.
    std::vector<void*>& pointers = thread_param_pointers();
    const CUDA_KERNEL_NODE_PARAMS p = node_params(record, pointers, chain.ctx);
    return status_of(api().cuGraphExecKernelNodeSetParams(chain.exec, chain.nodes[index], &p));
  }
  static cl_int launch_chain(Chain& chain, Stream s) {
    return status_of(api().cuGraphLaunch(chain.exec, s));
  }
  static void destroy_chain(Device&, Chain& chain) {
    if (chain.exec) api().cuGraphExecDestroy(chain.exec);
    if (chain.graph) api().cuGraphDestroy(chain.graph);
    chain = Chain{};
  }

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

}  // namespace manifold::gpu
