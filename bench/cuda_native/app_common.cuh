// What the native CUDA twins of the application-shaped kernels (app_kernels.cu,
// app_kernels_more.cu) share: error checks, host-clock timing and the protocol lines.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

// The median of `repeats` timed runs after a warm-up, each ended by a device synchronization
// (host clock, as the OpenCL worker times a run ended by clFinish).
template <class F>
double median_time(int repeats, F&& run) {
  run();
  cudaDeviceSynchronize();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    cudaDeviceSynchronize();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void emit(const char* metric, double value, const char* unit) {
  std::printf("%s\t%.4g\t%s\n", metric, value, unit);
  std::fflush(stdout);
}
void emit_failure(const char* metric, const char* unit, const char* why) {
  std::printf("%s\tFAIL\t%s\t%s\n", metric, unit, why);
  std::fflush(stdout);
}

}  // namespace
