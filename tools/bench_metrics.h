// The fixed metric set of `manifold bench`. Every producer (the per-device worker, the host
// reference, the native CUDA peer in bench/cuda_native/) prints lines
//   metric<TAB>value<TAB>unit[<TAB>note]
// with these names; bench/README.md documents the protocol for external peers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "settings/settings.h"

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
    // Shapes of real applications' kernels (tools/bench_app_kernels.h).
    {"lbm_d3q19_mlups", "MLUPs/s", true,
     "D3Q19 lattice Boltzmann, esoteric pull, FP32, 256^3 cells (CPU: 128^3), groups of 64"},
    {"stencil7_gbs", "GB/s", true, "3D 7-point stencil, 256^3 floats, 64x4x1 groups"},
    {"histogram_local_gbs", "GB/s", true,
     "256-bin histogram of 64M uints (CPU: 4M), local atomic_inc, then global atomic_add"},
    {"spmv_csr_gflops", "GFLOP/s", true,
     "CSR SpMV, one row per work-item, 4M rows (CPU: 256K), 16-32 random non-zeros per row"},
    {"conv2d_float4_gpixels", "Gpixel/s", true,
     "5x5 convolution of a 4096^2 float4 image (CPU: 1024^2), filter in constant memory"},
    {"fft_radix4_gflops", "GFLOP/s", true,
     "radix-4 Stockham FFT of 2^24 float2 (CPU: 2^20), sincos twiddles, 5 N log2 N flops"},
    {"h2d_pageable_gbs", "GB/s", true, "64 MiB clEnqueueWriteBuffer from malloc'd memory"},
    {"d2h_pageable_gbs", "GB/s", true, "64 MiB clEnqueueReadBuffer into malloc'd memory"},
    {"h2d_pinned_gbs", "GB/s", true, "64 MiB write from a mapped CL_MEM_ALLOC_HOST_PTR buffer"},
    {"d2h_pinned_gbs", "GB/s", true, "64 MiB read into a mapped CL_MEM_ALLOC_HOST_PTR buffer"},
    // Kernels written with OpenCL's vector types, as GPU-tuned and PoCL-tuned code is.
    {"read_float_gbs", "GB/s", true, "streaming read, float loads, 16 per work-item"},
    {"read_float2_gbs", "GB/s", true, "streaming read, float2 loads"},
    {"read_float4_gbs", "GB/s", true, "streaming read, float4 loads"},
    {"read_float8_gbs", "GB/s", true, "streaming read, float8 loads"},
    {"read_float16_gbs", "GB/s", true, "streaming read, float16 loads"},
    {"mad_float_gflops", "GFLOP/s", true, "8 chains of x = x*a + b, float"},
    {"mad_float2_gflops", "GFLOP/s", true, "the same on float2"},
    {"mad_float4_gflops", "GFLOP/s", true, "the same on float4"},
    {"mad_float8_gflops", "GFLOP/s", true, "the same on float8"},
    {"mad_float16_gflops", "GFLOP/s", true, "the same on float16"},
    {"mad_uint_gops", "GOP/s", true, "8 chains of x = x*a + b, uint (wrapping)"},
    {"mad_uint2_gops", "GOP/s", true, "the same on uint2"},
    {"mad_uint4_gops", "GOP/s", true, "the same on uint4"},
    {"mad_uint8_gops", "GOP/s", true, "the same on uint8"},
    {"mad_uint16_gops", "GOP/s", true, "the same on uint16"},
    {"mad_double_gflops", "GFLOP/s", true, "8 chains of x = x*a + b, double"},
    {"mad_double2_gflops", "GFLOP/s", true, "the same on double2"},
    {"mad_double4_gflops", "GFLOP/s", true, "the same on double4"},
    {"mad_double8_gflops", "GFLOP/s", true, "the same on double8"},
    {"mad_double16_gflops", "GFLOP/s", true, "the same on double16"},
    {"hash_uint_mlanes", "M lanes/s", true, "64 MD5-style steps (add, bitselect, rotate), uint"},
    {"hash_uint4_mlanes", "M lanes/s", true, "the same on uint4, one lane per element"},
    {"hash_uint8_mlanes", "M lanes/s", true, "the same on uint8"},
    {"hash_uint16_mlanes", "M lanes/s", true, "the same on uint16"},
    {"loop_uint16_local1_melems", "M elem-iter/s", true,
     "uint16 add/xor loop, work-groups of one work-item"},
    {"groups_of_one_finish_ms", "ms", false,
     "2048 work-groups of one item (integer loop, 2M steps each), host waits in clFinish"},
    {"groups_of_one_poll_ms", "ms", false,
     "the same, host polls the event status with 1 ms sleeps"},
    {"build_cold_ms", "ms", false,
     "small program, source to first result, caches off, fresh process"},
    {"build_cached_ms", "ms", false, "the same in a later process with the program cache on"},
    {"build_il_cold_ms", "ms", false,
     "the same kernel as SPIR-V (clCreateProgramWithIL), caches off, fresh process"},
    {"build_il_cached_ms", "ms", false, "the same in a later process with the program cache on"},
};
inline constexpr size_t kMetricCount = sizeof(kMetrics) / sizeof(kMetrics[0]);

inline const MetricInfo* find_metric(std::string_view name) {
  for (const auto& metric : kMetrics)
    if (name == metric.name) return &metric;
  return nullptr;
}

// MANIFOLD_BENCH_ONLY=metric,metric,...: measure only those (quick experiments, e.g.
// scripts/gpu-perf-check.sh); unset: all.
inline bool metric_selected(std::string_view metric) {
  const std::string& only = manifold::tool_settings().bench_only;
  if (only.empty()) return true;
  return ("," + only + ",").find("," + std::string(metric) + ",") != std::string::npos;
}

// The median of a set of timings (the mean of the middle two for an even count).
inline double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// A checked result: within `relative` of the expected value (absolute below 1).
inline bool close_enough(double expected, double got, double relative) {
  return std::fabs(expected - got) <= relative * std::max(1.0, std::fabs(expected));
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
  int vector_repeats;  // the vector-typed kernels (slow on some platforms)
};

inline BenchSizes bench_sizes(bool quick) {
  if (quick) return {300, 5000, size_t{64} << 20, 4, 512, 2, 4096, 2, 3, 2};
  return {2000, 20000, size_t{64} << 20, 10, 1024, 3, 8192, 3, 3, 5};
}

}  // namespace manifold_tool
