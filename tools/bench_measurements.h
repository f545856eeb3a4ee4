// The benchmark families of the per-device bench worker (tools/bench_worker.cpp runs them in
// order), one file each: bench_launch.cpp, bench_compute.cpp, bench_applications.cpp (and
// bench_applications_more.cpp), bench_transfers.cpp, bench_vector.cpp.
#pragma once

#include <cstddef>

#include "bench_device.h"
#include "bench_metrics.h"

namespace manifold_tool {

// Launch overhead (bench_launch.cpp).
Outcome measure_roundtrip(const Device& device, cl_kernel empty, int iterations);
Outcome measure_enqueue(const Device& device, cl_kernel empty, int kernels);
// Replay cost per kernel: a command buffer of kRecordedKernels empty kernels enqueued until as
// many kernels ran as the enqueue loop launches, one wait at the end; the median of a few runs.
Outcome measure_command_buffer(const Device& device, cl_kernel empty, int kernels);

// Compute kernels of the worker's program (bench_compute.cpp).
Outcome measure_triad(const Device& device, cl_program program, const BenchSizes& sizes);
Outcome measure_reduce(const Device& device, cl_program program, const BenchSizes& sizes);
Outcome measure_sgemm(const Device& device, cl_program program, const char* kernel_name,
                      const BenchSizes& sizes);
Outcome measure_nbody(const Device& device, cl_program program, const BenchSizes& sizes);

// Shapes of real applications (bench_applications.cpp).
Outcome measure_lbm(const Device& device, bool quick);
Outcome measure_stencil(const Device& device, bool quick);
// More of them (bench_applications_more.cpp).
Outcome measure_histogram(const Device& device, bool quick);
Outcome measure_spmv(const Device& device, bool quick);
Outcome measure_conv2d(const Device& device, bool quick);
Outcome measure_fft(const Device& device, bool quick);

// Host<->device transfers (bench_transfers.cpp).
struct TransferResults {
  Outcome host_to_device, device_to_host;
};

// Host<->device copies from `host` (pageable or pinned memory), checked byte for byte.
TransferResults measure_transfers(const Device& device, unsigned char* source,
                                  unsigned char* target, size_t bytes, int repeats);

// A mapped CL_MEM_ALLOC_HOST_PTR buffer: the portable way to get pinned host memory.
struct PinnedHost {
  Buffer buffer;
  void* pointer = nullptr;
  const Device* device = nullptr;
  PinnedHost(const Device& owner, size_t bytes) : device(&owner) {
    buffer = make_buffer(owner, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes);
    cl_int status = CL_SUCCESS;
    pointer = clEnqueueMapBuffer(owner.queue, buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes,
                                 0, nullptr, nullptr, &status);
    cl_check(status, "clEnqueueMapBuffer");
  }
  PinnedHost(const PinnedHost&) = delete;
  PinnedHost& operator=(const PinnedHost&) = delete;
  ~PinnedHost() {
    if (pointer) {
      clEnqueueUnmapMemObject(device->queue, buffer, pointer, 0, nullptr, nullptr);
      clFinish(device->queue);
    }
  }
};

// Every vector-typed figure, from one program (bench_vector.cpp).
void measure_vector_kernels(const Device& device, const BenchSizes& sizes);

}  // namespace manifold_tool
