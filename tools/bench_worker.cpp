// The per-device side of `manifold bench`: run in a child process (one per device, so a crash or a
// hang in one OpenCL implementation cannot take the others down), it measures one device and
// prints protocol lines (bench_metrics.h) on stdout:
//   info<TAB>running<TAB>METRIC      before each measurement (the parent's progress line)
//   METRIC<TAB>VALUE<TAB>UNIT        a checked result
//   METRIC<TAB>FAIL<TAB>UNIT<TAB>why  a wrong result;  ERROR instead of FAIL: an OpenCL error
// The measurements live in one file per family (bench_measurements.h); this file runs them.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_measurements.h"
#include "bench_metrics.h"
#include "bench_spirv.h"
#include "cl_support.h"
#include "commands.h"

namespace manifold_tool {
namespace {

const char* kBenchSource = R"CLC(
kernel void empty(global float* unused) {}

kernel void triad(global float4* a, global const float4* b, global const float4* c, float s) {
  size_t i = get_global_id(0);
  a[i] = b[i] + s * c[i];
}

kernel void reduce(global const float* in, global float* partial, local float* scratch) {
  size_t lid = get_local_id(0);
  scratch[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
    if (lid < stride) scratch[lid] += scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = scratch[0];
}

kernel void sgemm_naive(int n, global const float* a, global const float* b, global float* c) {
  int col = get_global_id(0), row = get_global_id(1);
  float sum = 0.0f;
  for (int k = 0; k < n; ++k) sum += a[row * n + k] * b[k * n + col];
  c[row * n + col] = sum;
}

#define TILE 16
kernel void sgemm_tiled(int n, global const float* a, global const float* b, global float* c) {
  local float a_tile[TILE][TILE];
  local float b_tile[TILE][TILE];
  int lx = get_local_id(0), ly = get_local_id(1);
  int col = get_global_id(0), row = get_global_id(1);
  float sum = 0.0f;
  for (int t = 0; t < n; t += TILE) {
    a_tile[ly][lx] = a[row * n + t + lx];
    b_tile[ly][lx] = b[(t + ly) * n + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) sum += a_tile[ly][k] * b_tile[k][lx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  c[row * n + col] = sum;
}

kernel void nbody(int n, float softening, global const float4* pos, global float4* accel) {
  int i = get_global_id(0);
  float3 p = pos[i].xyz;
  float3 acc = (float3)(0.0f);
  for (int j = 0; j < n; ++j) {
    float4 q = pos[j];
    float3 d = q.xyz - p;
    float inv = rsqrt(dot(d, d) + softening);
    acc += d * (q.w * inv * inv * inv);
  }
  accel[i] = (float4)(acc, 0.0f);
}
)CLC";

// The small program whose build time is measured (a nonce comment makes a cold build's source
// unique, so no cache of any kind can answer it).
std::string build_test_source(const std::string& nonce) {
  return "// " + nonce +
         "\n"
         "kernel void saxpy(global float* y, global const float* x, float a) {\n"
         "  size_t i = get_global_id(0);\n"
         "  y[i] = a * x[i] + y[i];\n"
         "}\n";
}
void emit_all_kernel_metrics_as(const std::string& value, const std::string& note) {
  for (const auto& metric : kMetrics)
    if (std::strncmp(metric.name, "build_", 6) != 0) emit(metric.name, value, note);
}

}  // namespace

// manifold _bench-device PLATFORM_NAME DEVICE_INDEX [--quick] [--member=K]
int run_bench_device_worker(const std::vector<std::string>& args) {
  if (args.size() < 2) return 2;
  bool quick = std::find(args.begin(), args.end(), "--quick") != args.end();
  int member = -1;
  for (const std::string& a : args)
    if (a.rfind("--member=", 0) == 0) member = std::atoi(a.c_str() + 9);
  BenchSizes sizes = bench_sizes(quick);
  Device device;
  try {
    device = open_device(args[0], std::stoi(args[1]), member);
  } catch (const std::exception& error) {
    emit_all_kernel_metrics_as("ERROR", error.what());
    return 0;
  }
  emit_info("device", device_string(device.device, CL_DEVICE_NAME));
  emit_info("driver", device_string(device.device, CL_DRIVER_VERSION));
  emit_info("version", device_string(device.device, CL_DEVICE_VERSION));

  Program program;
  try {
    program = build_program(device, kBenchSource);
  } catch (const std::exception& error) {
    emit_all_kernel_metrics_as("ERROR",
                               std::string("building the benchmark program: ") + error.what());
    return 0;
  }

  Kernel empty;
  Buffer unused;
  measure("roundtrip_us", [&] {
    empty = make_kernel(program, "empty");
    unused = make_buffer(device, CL_MEM_READ_WRITE, 64);
    set_arg(empty, 0, unused.get());
    return measure_roundtrip(device, empty, sizes.roundtrip_iterations);
  });
  measure("enqueue_us", [&] {
    if (!empty) throw std::runtime_error("no empty kernel");
    return measure_enqueue(device, empty, sizes.enqueue_kernels);
  });
  measure("cmdbuf_replay_us", [&] {
    if (!empty) throw std::runtime_error("no empty kernel");
    return measure_command_buffer(device, empty, sizes.enqueue_kernels);
  });
  measure("triad_gbs", [&] { return measure_triad(device, program, sizes); });
  measure("reduce_gbs", [&] { return measure_reduce(device, program, sizes); });
  measure("sgemm_naive_gflops",
          [&] { return measure_sgemm(device, program, "sgemm_naive", sizes); });
  measure("sgemm_tiled_gflops",
          [&] { return measure_sgemm(device, program, "sgemm_tiled", sizes); });
  measure("nbody_gflops", [&] { return measure_nbody(device, program, sizes); });
  measure("lbm_d3q19_mlups", [&] { return measure_lbm(device, quick); });
  measure("stencil7_gbs", [&] { return measure_stencil(device, quick); });
  measure("histogram_local_gbs", [&] { return measure_histogram(device, quick); });
  measure("spmv_csr_gflops", [&] { return measure_spmv(device, quick); });
  measure("conv2d_float4_gpixels", [&] { return measure_conv2d(device, quick); });
  measure("fft_radix4_gflops", [&] { return measure_fft(device, quick); });

  measure_vector_kernels(device, sizes);

  // Pageable: plain heap memory.
  TransferResults pageable;
  measure("h2d_pageable_gbs", [&] {
    std::vector<unsigned char> source(sizes.stream_bytes), target(sizes.stream_bytes);
    pageable = measure_transfers(device, source.data(), target.data(), sizes.stream_bytes,
                                 sizes.stream_repeats);
    return pageable.host_to_device;
  });
  measure("d2h_pageable_gbs", [&] {
    if (pageable.device_to_host.value == 0 && pageable.device_to_host.failure.empty())
      throw std::runtime_error("the host-to-device measurement did not complete");
    return pageable.device_to_host;
  });
  TransferResults pinned;
  measure("h2d_pinned_gbs", [&] {
    PinnedHost source(device, sizes.stream_bytes), target(device, sizes.stream_bytes);
    pinned = measure_transfers(device, static_cast<unsigned char*>(source.pointer),
                               static_cast<unsigned char*>(target.pointer), sizes.stream_bytes,
                               sizes.stream_repeats);
    return pinned.host_to_device;
  });
  measure("d2h_pinned_gbs", [&] {
    if (pinned.device_to_host.value == 0 && pinned.device_to_host.failure.empty())
      throw std::runtime_error("the host-to-device measurement did not complete");
    return pinned.device_to_host;
  });
  return 0;
}

// manifold _bench-build PLATFORM_NAME DEVICE_INDEX NONCE [il]
// One build of the small program, from source (or with `il` from SPIR-V) to the first checked
// result, in this fresh process.
int run_bench_build_worker(const std::vector<std::string>& args) {
  if (args.size() < 3) return 2;
  const bool from_il = args.size() > 3 && args[3] == "il";
  try {
    Device device = open_device(args[0], std::stoi(args[1]));
    if (from_il && !has_spirv(device)) {
      std::printf("build_ms\tSKIP\tms\tthe device takes no SPIR-V\n");
      return 0;
    }
    const std::vector<uint32_t> il =
        from_il ? saxpy_spirv_module(args[2]) : std::vector<uint32_t>{};
    const size_t count = 1024;
    std::vector<float> x(count), y(count);
    for (size_t i = 0; i < count; ++i) {
      x[i] = static_cast<float>(i);
      y[i] = 1.0f;
    }
    Buffer x_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                  count * sizeof(float), x.data());
    Buffer y_buffer = make_buffer(device, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                  count * sizeof(float), y.data());
    finish(device);

    auto start = Clock::now();
    Program program =
        from_il ? build_il_program(device, il) : build_program(device, build_test_source(args[2]));
    Kernel kernel = make_kernel(program, "saxpy");
    set_arg(kernel, 0, y_buffer.get());
    set_arg(kernel, 1, x_buffer.get());
    set_arg(kernel, 2, 2.0f);
    run_ndrange(device, kernel, 1, &count, nullptr);
    finish(device);
    double milliseconds = seconds_between(start, Clock::now()) * 1e3;

    read_buffer(device, y_buffer, count * sizeof(float), y.data());
    for (size_t i = 0; i < count; ++i)
      if (y[i] != 2.0f * x[i] + 1.0f) {
        std::printf("build_ms\tFAIL\tms\t%s\n", mismatch("y", i, 2.0 * x[i] + 1.0, y[i]).c_str());
        return 0;
      }
    std::printf("build_ms\t%.6g\tms\n", milliseconds);
  } catch (const std::exception& error) {
    std::printf("build_ms\tERROR\tms\t%s\n", error.what());
  }
  return 0;
}

}  // namespace manifold_tool
