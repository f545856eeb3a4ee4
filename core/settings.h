// Every MANIFOLD_* environment variable the runtime reads (README, "Environment variables"), read
// once, at the first call, into typed values: nothing else in core/, scheduler/ or backends/
// calls getenv. (The compiler library reads its own few debugging knobs.)
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

namespace manifold {

// GPU transfers from and to pageable host memory (backends/gpu_stream/staging.h).
struct StagingSettings {
  enum class Mode { Chunks, Register, Off };
  Mode mode = Mode::Chunks;              // MANIFOLD_GPU_STAGING=chunks|register|off
  size_t slots = 4;                      // MANIFOLD_GPU_STAGING_SLOTS (2..16)
  size_t chunk_bytes = size_t{8} << 20;  // MANIFOLD_GPU_STAGING_CHUNK_MB (1..256)
  unsigned threads = 0;                  // MANIFOLD_GPU_STAGING_THREADS; 0: min(8, cores / 2)
};

struct Settings {
  bool debug = false;            // MANIFOLD_DEBUG
  bool trace_migration = false;  // MANIFOLD_TRACE_MIGRATION
  int emulated_gpus = 0;         // MANIFOLD_EMULATED_GPUS (0..8)
  // MANIFOLD_DISABLE_<BACKEND> (CPU, CUDA, HIP, LEVEL_ZERO, EMULATED_GPU): the names of those
  // set to anything but 0; their drivers are not probed.
  std::set<std::string> disabled_backends;
  // MANIFOLD_DEVICES: a comma-separated list of the devices to show (core/platform.cpp:
  // device_selected); empty: every device.
  std::string devices;
  std::string cuda_driver = "libcuda.so.1";  // MANIFOLD_CUDA_DRIVER
  // MANIFOLD_HIP_RUNTIME: a HIP runtime library to load instead of libamdhip64.so.6/.5 (the
  // simulated one of the tests, HIP over CUDA on the GPU machines); empty: the installed one.
  std::string hip_runtime;
  // GPU stream queues (backends/gpu_stream/stream_queue.h).
  bool gpu_completion_eager = false;    // MANIFOLD_GPU_COMPLETION=eager|lazy
  uint64_t gpu_completion_batch = 256;  // MANIFOLD_GPU_COMPLETION_BATCH
  size_t gpu_launch_batch = 32;         // MANIFOLD_GPU_LAUNCH_BATCH (0 or 1: off; at most 1024)
  std::chrono::microseconds gpu_launch_batch_deadline{200};  // MANIFOLD_GPU_LAUNCH_BATCH_US
  StagingSettings staging;
  size_t svm_range_bytes = size_t{64} << 30;  // MANIFOLD_SVM_RANGE_GB (1..4096)
};

// The environment as it is now (tests that change it between cases).
Settings settings_from_environment();
// The process's settings, read at the first call. Thread-safe. Inline: the launch path asks
// for a few values per launch, and an inlined guard check costs next to nothing.
inline const Settings& settings() {
  static const Settings s = settings_from_environment();
  return s;
}

}  // namespace manifold
