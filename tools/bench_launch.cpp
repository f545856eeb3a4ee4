// Launch overhead figures of the bench worker: a kernel's round trip, enqueue throughput and a
// recorded command buffer's replay.
#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "bench_measurements.h"
#include "bench_metrics.h"
#include "core/cl_khr_command_buffer.h"

namespace manifold_tool {
namespace {

// The kernels of one recorded command buffer: cmdbuf_replay_us is per kernel of this many.
constexpr int kRecordedKernels = 100;

// cl_khr_command_buffer at 0.9.5 or later (the revision whose entry points take properties):
// earlier ones have other signatures, which these calls must not meet.
bool has_current_command_buffer(cl_device_id device) {
  size_t size = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, nullptr, &size) != CL_SUCCESS)
    return false;
  std::vector<cl_name_version> extensions(size / sizeof(cl_name_version));
  if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, size, extensions.data(),
                      nullptr) != CL_SUCCESS)
    return false;
  for (const cl_name_version& e : extensions)
    if (std::strcmp(e.name, "cl_khr_command_buffer") == 0)
      return e.version >= CL_MAKE_VERSION(0, 9, 5);
  return false;
}

}  // namespace

Outcome measure_roundtrip(const Device& device, cl_kernel empty, int iterations) {
  size_t global = 1;
  for (int i = 0; i < 20; ++i) {
    run_ndrange(device, empty, 1, &global, nullptr);
    finish(device);
  }
  std::vector<double> times;
  times.reserve(static_cast<size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    auto start = Clock::now();
    run_ndrange(device, empty, 1, &global, nullptr);
    finish(device);
    times.push_back(seconds_between(start, Clock::now()));
  }
  return {median_of(times) * 1e6, {}};
}

Outcome measure_enqueue(const Device& device, cl_kernel empty, int kernels) {
  size_t global = 1;
  run_ndrange(device, empty, 1, &global, nullptr);
  finish(device);
  // The median of a few runs: one run on a shared host swings by a microsecond per kernel.
  std::vector<double> per_kernel;
  for (int run = 0; run < kEnqueueRuns; ++run) {
    auto start = Clock::now();
    for (int i = 0; i < kernels; ++i) run_ndrange(device, empty, 1, &global, nullptr);
    finish(device);
    per_kernel.push_back(seconds_between(start, Clock::now()) * 1e6 / kernels);
  }
  return {median_of(per_kernel), {}};
}

// Replay cost per kernel: a command buffer of kRecordedKernels empty kernels enqueued until as
// many kernels ran as the enqueue loop launches, one wait at the end; the median of a few runs.
Outcome measure_command_buffer(const Device& device, cl_kernel empty, int kernels) {
  if (!has_current_command_buffer(device.device))
    throw std::runtime_error("no cl_khr_command_buffer 0.9.5 or later");
  auto get = [&](const char* name) {
    void* f = clGetExtensionFunctionAddressForPlatform(device.platform, name);
    if (!f) throw std::runtime_error(std::string(name) + " is not reachable");
    return f;
  };
  auto create = reinterpret_cast<clCreateCommandBufferKHR_t*>(get("clCreateCommandBufferKHR"));
  auto record = reinterpret_cast<clCommandNDRangeKernelKHR_t*>(get("clCommandNDRangeKernelKHR"));
  auto finalize =
      reinterpret_cast<clFinalizeCommandBufferKHR_t*>(get("clFinalizeCommandBufferKHR"));
  auto enqueue = reinterpret_cast<clEnqueueCommandBufferKHR_t*>(get("clEnqueueCommandBufferKHR"));
  auto release = reinterpret_cast<clReleaseCommandBufferKHR_t*>(get("clReleaseCommandBufferKHR"));
  cl_command_queue queue = device.queue;
  cl_int status = CL_SUCCESS;
  cl_command_buffer_khr buffer = create(1, &queue, nullptr, &status);
  cl_check(status, "clCreateCommandBufferKHR");
  std::unique_ptr<_cl_command_buffer_khr, clReleaseCommandBufferKHR_t*> owned(buffer, release);
  size_t global = 1;
  for (int i = 0; i < kRecordedKernels; ++i)
    cl_check(record(buffer, nullptr, nullptr, empty, 1, nullptr, &global, nullptr, 0, nullptr,
                    nullptr, nullptr),
             "clCommandNDRangeKernelKHR");
  cl_check(finalize(buffer), "clFinalizeCommandBufferKHR");
  for (int i = 0; i < 3; ++i)  // warm-up: the first enqueue may build the native graph
    cl_check(enqueue(0, nullptr, buffer, 0, nullptr, nullptr), "clEnqueueCommandBufferKHR");
  finish(device);
  const int replays = std::max(1, kernels / kRecordedKernels);
  std::vector<double> per_kernel;
  for (int run = 0; run < kEnqueueRuns; ++run) {
    auto start = Clock::now();
    for (int i = 0; i < replays; ++i)
      cl_check(enqueue(0, nullptr, buffer, 0, nullptr, nullptr), "clEnqueueCommandBufferKHR");
    finish(device);
    per_kernel.push_back(seconds_between(start, Clock::now()) * 1e6 /
                         (double(replays) * kRecordedKernels));
  }
  return {median_of(per_kernel), {}};
}

}  // namespace manifold_tool
