// The fixed metric set of `manifold bench`. Every producer (the per-device worker, the host
// reference, the native CUDA peer in bench/cuda_native/) prints lines
//   metric<TAB>value<TAB>unit[<TAB>note]
// with these names; bench/README.md documents the protocol for external peers.
#pragma once

#include <cstddef>
#include <string_view>

namespace manifold_tool {

struct MetricInfo {
  const char* name;
  const char* unit;
  bool higher_is_better;
  const char* what;
};

inline constexpr MetricInfo kMetrics[] = {
    {"roundtrip_us", "us", false, "empty kernel (1 work-item): enqueue + clFinish, median"},
    {"enqueue_us", "us/kernel", false, "enqueue throughput: many empty kernels, one clFinish"},
    {"cmdbuf_replay_us", "us/kernel", false,
     "replays of a 100-empty-kernel cl_khr_command_buffer (CUDA: graph), one clFinish"},
    {"triad_gbs", "GB/s", true, "a = b + s*c on float4, 3 x 64 MiB"},
    {"reduce_gbs", "GB/s", true, "local-memory tree reduction, 256 work-items/group, barriers"},
    {"sgemm_naive_gflops", "GFLOP/s", true, "naive sgemm, one work-item per element, 16x16 groups"},
    {"sgemm_tiled_gflops", "GFLOP/s", true, "sgemm with 16x16 local-memory tiles"},
    {"nbody_gflops", "GFLOP/s", true, "all-pairs n-body step, 20 flops per interaction"},
    {"h2d_pageable_gbs", "GB/s", true, "64 MiB clEnqueueWriteBuffer from malloc'd memory"},
    {"d2h_pageable_gbs", "GB/s", true, "64 MiB clEnqueueReadBuffer into malloc'd memory"},
    {"h2d_pinned_gbs", "GB/s", true, "64 MiB write from a mapped CL_MEM_ALLOC_HOST_PTR buffer"},
    {"d2h_pinned_gbs", "GB/s", true, "64 MiB read into a mapped CL_MEM_ALLOC_HOST_PTR buffer"},
    {"build_cold_ms", "ms", false,
     "small program, source to first result, caches off, fresh process"},
    {"build_cached_ms", "ms", false, "the same in a later process with the program cache on"},
};
inline constexpr size_t kMetricCount = sizeof(kMetrics) / sizeof(kMetrics[0]);

inline const MetricInfo* find_metric(std::string_view name) {
  for (const auto& metric : kMetrics)
    if (name == metric.name) return &metric;
  return nullptr;
}

// Problem sizes: --quick shrinks the slow ones (sgemm, n-body) and repeats less.
// Runs of the enqueue-throughput loop whose median is reported (bench/cuda_native does the same).
inline constexpr int kEnqueueRuns = 5;

struct BenchSizes {
  int roundtrip_iterations;
  int enqueue_kernels;
  size_t stream_bytes;  // triad (per array), reduction input, transfers
  int stream_repeats;
  int sgemm_n;
  int sgemm_repeats;
  int nbody_bodies;
  int nbody_repeats;
  int build_samples;
};

inline BenchSizes bench_sizes(bool quick) {
  if (quick) return {300, 5000, size_t{64} << 20, 4, 512, 2, 4096, 2, 1};
  return {2000, 20000, size_t{64} << 20, 10, 1024, 3, 8192, 3, 3};
}

}  // namespace manifold_tool
