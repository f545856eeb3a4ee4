// The per-device side of `manifold bench`: run in a child process (one per device, so a crash or a
// hang in one OpenCL implementation cannot take the others down), it measures one device and
// prints protocol lines (bench_metrics.h) on stdout:
//   info<TAB>running<TAB>METRIC      before each measurement (the parent's progress line)
//   METRIC<TAB>VALUE<TAB>UNIT        a checked result
//   METRIC<TAB>FAIL<TAB>UNIT<TAB>why  a wrong result;  ERROR instead of FAIL: an OpenCL error
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench_app_kernels.h"
#include "bench_kernel_shapes.h"
#include "bench_metrics.h"
#include "bench_spirv.h"
#include "cl_support.h"
#include "commands.h"
#include "core/cl_khr_command_buffer.h"
#include "settings/settings.h"

namespace manifold_tool {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

// Owning handles for OpenCL objects.
template <typename T, cl_int (*Release)(T)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T handle) : handle_(handle) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    reset();
    handle_ = std::exchange(other.handle_, nullptr);
    return *this;
  }
  ~Handle() { reset(); }
  void reset() {
    if (handle_) Release(handle_);
    handle_ = nullptr;
  }
  T get() const { return handle_; }
  operator T() const { return handle_; }

 private:
  T handle_ = nullptr;
};
using Context = Handle<cl_context, clReleaseContext>;
using Queue = Handle<cl_command_queue, clReleaseCommandQueue>;
using Buffer = Handle<cl_mem, clReleaseMemObject>;
using Program = Handle<cl_program, clReleaseProgram>;
using Kernel = Handle<cl_kernel, clReleaseKernel>;

// A benchmark's answer: a number, or why there is none.
struct Outcome {
  double value = 0;
  std::string failure;  // non-empty: the result was wrong
};

void emit(const char* metric, const std::string& value, const std::string& note = {}) {
  const MetricInfo* info = find_metric(metric);
  std::printf("%s\t%s\t%s%s%s\n", metric, value.c_str(), info ? info->unit : "-",
              note.empty() ? "" : "\t", note.c_str());
  std::fflush(stdout);
}

void emit_info(const char* key, const std::string& value) {
  std::printf("info\t%s\t%s\n", key, value.c_str());
  std::fflush(stdout);
}

// MANIFOLD_BENCH_ONLY=metric,metric,...: measure only those (quick experiments, e.g.
// scripts/gpu-perf-check.sh); unset: all.
bool selected(const char* metric) {
  const std::string only = manifold::tool_settings().bench_only;
  if (only.empty()) return true;
  const std::string list = "," + only + ",";
  return list.find(std::string(",") + metric + ",") != std::string::npos;
}

// Runs one measurement and prints its line, whatever happens inside.
void measure(const char* metric, const std::function<Outcome()>& body) {
  if (!selected(metric)) return;
  emit_info("running", metric);
  try {
    Outcome outcome = body();
    if (!outcome.failure.empty()) {
      emit(metric, "FAIL", outcome.failure);
    } else {
      char text[64];
      std::snprintf(text, sizeof text, "%.6g", outcome.value);
      emit(metric, text);
    }
  } catch (const ClError& error) {
    emit(metric, "ERROR", error.what());
  } catch (const std::exception& error) {
    emit(metric, "ERROR", error.what());
  }
}

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

struct Device {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  Context context;
  Queue queue;
};

// Finds the device the parent named (platform name + index) and opens a context and queue.
Device open_device(const std::string& platform_name, int device_index) {
  Device result;
  cl_uint count = 0;
  cl_check(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  cl_check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  for (cl_platform_id platform : platforms)
    if (platform_string(platform, CL_PLATFORM_NAME) == platform_name) result.platform = platform;
  if (!result.platform) throw std::runtime_error("platform '" + platform_name + "' not found");
  cl_uint device_count = 0;
  cl_check(clGetDeviceIDs(result.platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count),
           "clGetDeviceIDs");
  if (device_index < 0 || static_cast<cl_uint>(device_index) >= device_count)
    throw std::runtime_error("device index out of range");
  std::vector<cl_device_id> ids(device_count);
  cl_check(clGetDeviceIDs(result.platform, CL_DEVICE_TYPE_ALL, device_count, ids.data(), nullptr),
           "clGetDeviceIDs");
  result.device = ids[static_cast<size_t>(device_index)];
  cl_int status = CL_SUCCESS;
  cl_context_properties properties[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(result.platform), 0};
  result.context =
      Context(clCreateContext(properties, 1, &result.device, nullptr, nullptr, &status));
  cl_check(status, "clCreateContext");
  result.queue = Queue(clCreateCommandQueue(result.context, result.device, 0, &status));
  cl_check(status, "clCreateCommandQueue");
  return result;
}

Buffer make_buffer(const Device& device, cl_mem_flags flags, size_t bytes, void* host = nullptr) {
  cl_int status = CL_SUCCESS;
  Buffer buffer(clCreateBuffer(device.context, flags, bytes, host, &status));
  cl_check(status, "clCreateBuffer");
  return buffer;
}

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  if (size) clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  return log;
}

// Builds `program` for the device; a failure prints the build log and throws.
Program built(const Device& device, Program program) {
  const cl_int status = clBuildProgram(program, 1, &device.device, "", nullptr, nullptr);
  if (status != CL_SUCCESS) {
    std::string log = build_log(program, device.device);
    std::fprintf(stderr, "build log:\n%s\n", log.c_str());
    throw ClError("clBuildProgram", status);
  }
  return program;
}

Program build_program(const Device& device, const std::string& source) {
  const char* text = source.c_str();
  size_t length = source.size();
  cl_int status = CL_SUCCESS;
  Program program(clCreateProgramWithSource(device.context, 1, &text, &length, &status));
  cl_check(status, "clCreateProgramWithSource");
  return built(device, std::move(program));
}

bool has_spirv(const Device& device) {
  char versions[256] = {};
  return clGetDeviceInfo(device.device, CL_DEVICE_IL_VERSION, sizeof versions - 1, versions,
                         nullptr) == CL_SUCCESS &&
         std::strstr(versions, "SPIR-V");
}

// The device's program from the SPIR-V module `words`, built.
Program build_il_program(const Device& device, const std::vector<uint32_t>& words) {
  cl_int status = CL_SUCCESS;
  Program program(clCreateProgramWithIL(device.context, words.data(),
                                        words.size() * sizeof(uint32_t), &status));
  cl_check(status, "clCreateProgramWithIL");
  return built(device, std::move(program));
}

Kernel make_kernel(cl_program program, const char* name) {
  cl_int status = CL_SUCCESS;
  Kernel kernel(clCreateKernel(program, name, &status));
  cl_check(status, (std::string("clCreateKernel(") + name + ")").c_str());
  return kernel;
}

template <typename T>
void set_arg(cl_kernel kernel, cl_uint index, const T& value) {
  cl_check(clSetKernelArg(kernel, index, sizeof(T), &value), "clSetKernelArg");
}

void run_ndrange(const Device& device, cl_kernel kernel, cl_uint dims, const size_t* global,
                 const size_t* local) {
  cl_check(clEnqueueNDRangeKernel(device.queue, kernel, dims, nullptr, global, local, 0, nullptr,
                                  nullptr),
           "clEnqueueNDRangeKernel");
}

void finish(const Device& device) { cl_check(clFinish(device.queue), "clFinish"); }

// Times `repeats` runs of `body` (after one warm-up run), each ended by clFinish; the median.
double timed_median(const Device& device, int repeats, const std::function<void()>& body) {
  body();
  finish(device);
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    auto start = Clock::now();
    body();
    finish(device);
    times.push_back(seconds_between(start, Clock::now()));
  }
  return median_of(times);
}

void write_buffer(const Device& device, cl_mem buffer, size_t bytes, const void* data) {
  cl_check(clEnqueueWriteBuffer(device.queue, buffer, CL_TRUE, 0, bytes, data, 0, nullptr, nullptr),
           "clEnqueueWriteBuffer");
}
void read_buffer(const Device& device, cl_mem buffer, size_t bytes, void* data) {
  cl_check(clEnqueueReadBuffer(device.queue, buffer, CL_TRUE, 0, bytes, data, 0, nullptr, nullptr),
           "clEnqueueReadBuffer");
}

std::string mismatch(const char* what, size_t index, double expected, double got) {
  char text[160];
  std::snprintf(text, sizeof text, "%s[%zu] = %.7g, expected %.7g", what, index, got, expected);
  return text;
}

// ---------------------------------------------------------------------------------------------
// The measurements

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

Outcome measure_triad(const Device& device, cl_program program, const BenchSizes& sizes) {
  size_t bytes = sizes.stream_bytes, count = bytes / sizeof(float);
  std::vector<float> b(count), c(count), a(count);
  for (size_t i = 0; i < count; ++i) {
    b[i] = static_cast<float>(i % 1000) * 0.5f;
    c[i] = static_cast<float>(i % 7) + 0.25f;
  }
  Buffer a_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, bytes);
  Buffer b_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b.data());
  Buffer c_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, c.data());
  Kernel kernel = make_kernel(program, "triad");
  const float scale = 3.0f;
  set_arg(kernel, 0, a_buffer.get());
  set_arg(kernel, 1, b_buffer.get());
  set_arg(kernel, 2, c_buffer.get());
  set_arg(kernel, 3, scale);
  size_t global = count / 4;
  double seconds = timed_median(device, sizes.stream_repeats,
                                [&] { run_ndrange(device, kernel, 1, &global, nullptr); });
  read_buffer(device, a_buffer, bytes, a.data());
  for (size_t i = 0; i < count; ++i) {
    float expected = b[i] + scale * c[i];
    if (!close_enough(expected, a[i], 1e-6)) return {0, mismatch("a", i, expected, a[i])};
  }
  return {3.0 * static_cast<double>(bytes) / seconds / 1e9, {}};
}

Outcome measure_reduce(const Device& device, cl_program program, const BenchSizes& sizes) {
  const size_t group = 256;
  size_t count = sizes.stream_bytes / sizeof(float), groups = count / group;
  // Multiples of 1/4 below 5: every partial sum of 256 of them is exact in float.
  std::vector<float> input(count), partial(groups);
  for (size_t i = 0; i < count; ++i) input[i] = static_cast<float>(i % 17) * 0.25f;
  Buffer in_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                 count * sizeof(float), input.data());
  Buffer partial_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, groups * sizeof(float));
  Kernel kernel = make_kernel(program, "reduce");
  set_arg(kernel, 0, in_buffer.get());
  set_arg(kernel, 1, partial_buffer.get());
  cl_check(clSetKernelArg(kernel, 2, group * sizeof(float), nullptr), "clSetKernelArg(local)");
  double seconds = timed_median(device, sizes.stream_repeats,
                                [&] { run_ndrange(device, kernel, 1, &count, &group); });
  read_buffer(device, partial_buffer, groups * sizeof(float), partial.data());
  for (size_t g = 0; g < groups; ++g) {
    double expected = 0;
    for (size_t i = g * group; i < (g + 1) * group; ++i) expected += input[i];
    if (!close_enough(expected, partial[g], 1e-6))
      return {0, mismatch("partial", g, expected, partial[g])};
  }
  return {static_cast<double>(count * sizeof(float)) / seconds / 1e9, {}};
}

Outcome measure_sgemm(const Device& device, cl_program program, const char* kernel_name,
                      const BenchSizes& sizes) {
  const int n = sizes.sgemm_n;
  size_t elements = static_cast<size_t>(n) * n, bytes = elements * sizeof(float);
  std::mt19937 random(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(elements), b(elements), c(elements);
  for (auto& x : a) x = uniform(random);
  for (auto& x : b) x = uniform(random);
  Buffer a_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a.data());
  Buffer b_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b.data());
  Buffer c_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, bytes);
  Kernel kernel = make_kernel(program, kernel_name);
  set_arg(kernel, 0, n);
  set_arg(kernel, 1, a_buffer.get());
  set_arg(kernel, 2, b_buffer.get());
  set_arg(kernel, 3, c_buffer.get());
  size_t global[2] = {static_cast<size_t>(n), static_cast<size_t>(n)}, local[2] = {16, 16};
  double seconds = timed_median(device, sizes.sgemm_repeats,
                                [&] { run_ndrange(device, kernel, 2, global, local); });
  read_buffer(device, c_buffer, bytes, c.data());
  std::uniform_int_distribution<int> pick(0, n - 1);
  for (int sample = 0; sample < 256; ++sample) {
    int row = pick(random), col = pick(random);
    double expected = 0;
    for (int k = 0; k < n; ++k) expected += static_cast<double>(a[row * n + k]) * b[k * n + col];
    size_t index = static_cast<size_t>(row) * n + col;
    // Sums of n products of magnitude < 1: allow float rounding over n terms.
    if (std::fabs(expected - c[index]) > 1e-5 * n)
      return {0, mismatch("c", index, expected, c[index])};
  }
  return {2.0 * n * n * static_cast<double>(n) / seconds / 1e9, {}};
}

Outcome measure_nbody(const Device& device, cl_program program, const BenchSizes& sizes) {
  const int n = sizes.nbody_bodies;
  const float softening = 0.01f;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> coordinate(-1.0f, 1.0f), mass(0.5f, 1.0f);
  std::vector<float> positions(4 * static_cast<size_t>(n)), accel(4 * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) positions[4 * i + k] = coordinate(random);
    positions[4 * i + 3] = mass(random);
  }
  size_t bytes = positions.size() * sizeof(float);
  Buffer pos_buffer =
      make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, positions.data());
  Buffer accel_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, bytes);
  Kernel kernel = make_kernel(program, "nbody");
  set_arg(kernel, 0, n);
  set_arg(kernel, 1, softening);
  set_arg(kernel, 2, pos_buffer.get());
  set_arg(kernel, 3, accel_buffer.get());
  size_t global = static_cast<size_t>(n);
  double seconds = timed_median(device, sizes.nbody_repeats,
                                [&] { run_ndrange(device, kernel, 1, &global, nullptr); });
  read_buffer(device, accel_buffer, bytes, accel.data());
  for (int sample = 0; sample < 64; ++sample) {
    int i = (sample * 7919) % n;
    double expected[3] = {0, 0, 0};
    for (int j = 0; j < n; ++j) {
      double d[3], r2 = softening;
      for (int k = 0; k < 3; ++k) {
        d[k] = static_cast<double>(positions[4 * j + k]) - positions[4 * i + k];
        r2 += d[k] * d[k];
      }
      double inv = 1.0 / std::sqrt(r2);
      for (int k = 0; k < 3; ++k) expected[k] += d[k] * positions[4 * j + 3] * inv * inv * inv;
    }
    double magnitude = std::sqrt(expected[0] * expected[0] + expected[1] * expected[1] +
                                 expected[2] * expected[2]);
    for (int k = 0; k < 3; ++k)
      if (std::fabs(expected[k] - accel[4 * i + k]) > 1e-3 * std::max(1.0, magnitude))
        return {0,
                mismatch("accel", static_cast<size_t>(4 * i + k), expected[k], accel[4 * i + k])};
  }
  return {20.0 * n * static_cast<double>(n) / seconds / 1e9, {}};
}

// ---- Shapes of real applications (tools/bench_app_kernels.h) ----

bool is_gpu(const Device& device) {
  cl_device_type type = 0;
  clGetDeviceInfo(device.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
  return (type & CL_DEVICE_TYPE_GPU) != 0;
}

Program build_with_options(const Device& device, const char* source, const std::string& options) {
  size_t length = std::strlen(source);
  cl_int status = CL_SUCCESS;
  Program program(clCreateProgramWithSource(device.context, 1, &source, &length, &status));
  cl_check(status, "clCreateProgramWithSource");
  status = clBuildProgram(program, 1, &device.device, options.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) {
    std::fprintf(stderr, "build log:\n%s\n", build_log(program, device.device).c_str());
    throw ClError("clBuildProgram", status);
  }
  return program;
}

// Runs steps [first, first + count) of the LBM kernel over `f`.
void lbm_steps(const Device& device, cl_kernel kernel, size_t cells, uint64_t first,
               unsigned count) {
  const size_t local = 64, global = (cells + local - 1) / local * local;
  for (unsigned s = 0; s < count; ++s) {
    const cl_ulong t = first + s;
    set_arg(kernel, 2, t);
    run_ndrange(device, kernel, 1, &global, &local);
  }
}

Outcome measure_lbm(const Device& device, bool quick) {
  // First a small odd-sized box, two steps (both parities) against the C++ reference.
  {
    const Box box = kLbmCheckBox;
    Program program = build_with_options(device, lbm_source(), lbm_build_options(box));
    Kernel kernel = make_kernel(program, "lbm_d3q19");
    std::vector<float> f = lbm_initial(box, true), expected = f;
    std::vector<uint8_t> flags(box.cells(), 0);
    Buffer f_buffer = make_buffer(device, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                  f.size() * sizeof(float), f.data());
    Buffer flags_buffer =
        make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, flags.size(), flags.data());
    set_arg(kernel, 0, f_buffer.get());
    set_arg(kernel, 1, flags_buffer.get());
    lbm_steps(device, kernel, box.cells(), 0, 3);
    read_buffer(device, f_buffer, f.size() * sizeof(float), f.data());
    for (uint64_t t = 0; t < 3; ++t) lbm_reference_step(box, expected, flags, t);
    for (size_t i = 0; i < f.size(); ++i)
      if (std::fabs(expected[i] - f[i]) > 2e-5) return {0, mismatch("f", i, expected[i], f[i])};
  }
  // Then the timed box: mass is conserved.
  const Box box = lbm_box(is_gpu(device), quick);
  const size_t cells = box.cells();
  Program program = build_with_options(device, lbm_source(), lbm_build_options(box));
  Kernel kernel = make_kernel(program, "lbm_d3q19");
  std::vector<float> f = lbm_initial(box, false);
  double mass = 0;
  for (float v : f) mass += v;
  std::vector<uint8_t> flags(cells, 0);
  Buffer f_buffer = make_buffer(device, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                f.size() * sizeof(float), f.data());
  Buffer flags_buffer =
      make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, flags.size(), flags.data());
  set_arg(kernel, 0, f_buffer.get());
  set_arg(kernel, 1, flags_buffer.get());
  const unsigned steps = kLbmSteps;
  uint64_t t = 0;
  const double seconds = timed_median(device, quick ? 3 : 5, [&] {
    lbm_steps(device, kernel, cells, t, steps);
    t += steps;
  });
  read_buffer(device, f_buffer, f.size() * sizeof(float), f.data());
  double after = 0;
  for (float v : f) after += v;
  if (!close_enough(mass, after, 1e-4)) return {0, mismatch("mass", 0, mass, after)};
  return {static_cast<double>(cells) * steps / seconds / 1e6, {}};
}

Outcome measure_stencil(const Device& device, bool quick) {
  const Box box = stencil_box(quick);
  const size_t cells = box.cells(), bytes = cells * sizeof(float);
  std::vector<float> in(cells), out(cells);
  std::mt19937 random(11);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : in) v = uniform(random);
  Program program = build_with_options(device, stencil_source(), "");
  Kernel kernel = make_kernel(program, "stencil7");
  Buffer in_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in.data());
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, bytes);
  set_arg(kernel, 0, out_buffer.get());
  set_arg(kernel, 1, in_buffer.get());
  set_arg(kernel, 2, box.nx);
  set_arg(kernel, 3, box.ny);
  set_arg(kernel, 4, box.nz);
  const size_t global[3] = {box.nx, box.ny, box.nz}, local[3] = {64, 4, 1};
  const double seconds = timed_median(device, quick ? 4 : 10, [&] {
    for (int r = 0; r < kStencilSweeps; ++r) run_ndrange(device, kernel, 3, global, local);
  });
  read_buffer(device, out_buffer, bytes, out.data());
  for (unsigned z = 0; z < box.nz; ++z)
    for (unsigned y = 0; y < box.ny; ++y)
      for (unsigned x = 0; x < box.nx; ++x) {
        const size_t i = x + size_t{box.nx} * (y + size_t{box.ny} * z);
        const float expected = stencil_reference(box, in, x, y, z);
        if (!close_enough(expected, out[i], 1e-5)) return {0, mismatch("out", i, expected, out[i])};
      }
  return {2.0 * static_cast<double>(bytes) * kStencilSweeps / seconds / 1e9, {}};
}

struct TransferResults {
  Outcome host_to_device, device_to_host;
};

// Host<->device copies from `host` (pageable or pinned memory), checked byte for byte.
TransferResults measure_transfers(const Device& device, unsigned char* source,
                                  unsigned char* target, size_t bytes, int repeats) {
  for (size_t i = 0; i < bytes; ++i) source[i] = static_cast<unsigned char>(i * 131 + 7);
  Buffer device_buffer = make_buffer(device, CL_MEM_READ_WRITE, bytes);
  std::vector<double> write_times, read_times;
  write_buffer(device, device_buffer, bytes, source);
  read_buffer(device, device_buffer, bytes, target);
  for (int r = 0; r < repeats; ++r) {
    auto start = Clock::now();
    write_buffer(device, device_buffer, bytes, source);
    write_times.push_back(seconds_between(start, Clock::now()));
    start = Clock::now();
    read_buffer(device, device_buffer, bytes, target);
    read_times.push_back(seconds_between(start, Clock::now()));
  }
  TransferResults results;
  results.host_to_device.value = static_cast<double>(bytes) / median_of(write_times) / 1e9;
  results.device_to_host.value = static_cast<double>(bytes) / median_of(read_times) / 1e9;
  if (std::memcmp(source, target, bytes) != 0) {
    size_t index = 0;
    while (source[index] == target[index]) ++index;
    std::string failure = mismatch("byte", index, source[index], target[index]);
    results.host_to_device.failure = results.device_to_host.failure = failure;
  }
  return results;
}

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

// ---------------------------------------------------------------------------------------------
// Vector-typed kernels: the same computations at every vector width, so that a platform's
// handling of OpenCL's vector types shows next to its scalar figures.

constexpr unsigned kVectorWidths[] = {1, 2, 4, 8, 16};
constexpr unsigned kReadFetches = 16;  // loads per work-item in the streaming read
constexpr size_t kHashLanes = size_t{1} << 20;
constexpr size_t kGroupsOfOne = 2048;
// Long enough (about 0.2 s on 2 cores, 20 ms on 16) that the 1 ms polling interval of
// groups_of_one_poll_ms is not what it measures: whether the kernel uses every core is.
constexpr unsigned kGroupsOfOneIterations = 2000000;

std::string vector_type(const char* scalar, unsigned width) {
  return width == 1 ? scalar : scalar + std::to_string(width);
}

// (T)(0, 1, ..., width - 1): each lane's index.
std::string lane_indices(const char* scalar, unsigned width) {
  if (width == 1) return "0";
  std::string text = "(";
  text += vector_type(scalar, width);
  text += ")(";
  for (unsigned lane = 0; lane < width; ++lane) {
    if (lane) text += ',';
    text += std::to_string(lane);
  }
  return text + ")";
}

// MD5's 64 steps: round functions, message word order, rotations and constants.
struct Md5Step {
  unsigned round, word, shift;
  uint32_t constant;
};
std::vector<Md5Step> md5_steps() {
  static const unsigned shifts[4][4] = {
      {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};
  std::vector<Md5Step> steps;
  for (unsigned i = 0; i < 64; ++i) {
    const unsigned round = i / 16;
    const unsigned word = round == 0   ? i
                          : round == 1 ? (5 * i + 1) % 16
                          : round == 2 ? (3 * i + 5) % 16
                                       : (7 * i) % 16;
    const auto constant =
        static_cast<uint32_t>(std::floor(std::fabs(std::sin(double(i + 1))) * 4294967296.0));
    steps.push_back({round, word, shifts[round][i % 4], constant});
  }
  return steps;
}

std::string vector_bench_source() {
  std::string s = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  for (unsigned w : kVectorWidths) {
    const std::string f = vector_type("float", w), n = std::to_string(w);
    // Work-item i of a group reads its block's elements i, i + local size, ... (clpeak's
    // pattern: consecutive work-items read consecutive elements).
    s += "kernel void read_" + f + "(global const " + f + "* in, global " + f +
         "* out) {\n"
         "  size_t base = get_group_id(0) * get_local_size(0) * " +
         std::to_string(kReadFetches) +
         " + get_local_id(0);\n"
         "  " +
         f +
         " sum = 0;\n"
         "  for (int k = 0; k < " +
         std::to_string(kReadFetches) +
         "; ++k) sum += in[base + k * get_local_size(0)];\n"
         "  out[get_global_id(0)] = sum;\n}\n";
    for (const char* scalar : {"float", "uint", "double"}) {
      const std::string t = vector_type(scalar, w);
      s += "kernel void mad_" + t + "(global " + t + "* out, " + scalar + " a, " + scalar +
           " b) {\n  " + t + " x0 = (" + t + ")(get_global_id(0) * " + n + ") + " +
           lane_indices(scalar, w) + ";\n";
      for (int c = 1; c < 8; ++c)
        s += "  " + t + " x" + std::to_string(c) + " = x0 + (" + t + ")(" + std::to_string(c) +
             ");\n";
      s += "  for (int i = 0; i < " + std::to_string(kMadIterations) + "; ++i) {\n";
      for (int c = 0; c < 8; ++c)
        s += "    x" + std::to_string(c) + " = x" + std::to_string(c) + " * a + b;\n";
      s += "  }\n  out[get_global_id(0)] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));\n}\n";
    }
    const std::string u = vector_type("uint", w);
    s += "kernel void hash_" + u + "(global " + u + "* out, uint seed) {\n  " + u + " lane = (" +
         u + ")(get_global_id(0) * " + n + ") + " + lane_indices("uint", w) + ";\n";
    for (int m = 0; m < 16; ++m)
      s += "  " + u + " m" + std::to_string(m) + " = lane * " + std::to_string(2 * m + 1) +
           "u + seed;\n";
    s += "  " + u + " a = 0x67452301u, b = 0xefcdab89u, c = 0x98badcfeu, d = 0x10325476u;\n";
    // The variables rotate through the roles (a, b, c, d) instead of being moved.
    const char* names = "abcd";
    unsigned first = 0;
    for (const Md5Step& step : md5_steps()) {
      const char A = names[first % 4], B = names[(first + 1) % 4], C = names[(first + 2) % 4],
                 D = names[(first + 3) % 4];
      std::string f;
      switch (step.round) {
        case 0:
          f = std::string("bitselect(") + D + ", " + C + ", " + B + ")";
          break;
        case 1:
          f = std::string("bitselect(") + C + ", " + B + ", " + D + ")";
          break;
        case 2:
          f = std::string("(") + B + " ^ " + C + " ^ " + D + ")";
          break;
        default:
          f = std::string("(") + C + " ^ (" + B + " | ~" + D + "))";
          break;
      }
      s += std::string("  ") + A + " = " + B + " + rotate(" + A + " + " + f + " + m" +
           std::to_string(step.word) + " + " + std::to_string(step.constant) + "u, (" + u + ")" +
           std::to_string(step.shift) + ");\n";
      first = (first + 3) % 4;  // the next step's a is this step's d
    }
    s += "  out[get_global_id(0)] = (a + 0x67452301u) ^ (b + 0xefcdab89u) ^ (c + 0x98badcfeu) ^ "
         "(d + 0x10325476u);\n}\n";
  }
  s += R"CLC(
kernel void loop_uint16(global uint16* out, uint iterations) {
  uint16 x = (uint16)(get_global_id(0) * 16) + (uint16)(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15);
  uint16 y = x * 3u + 1u, z = x ^ 0x5bd1e995u;
  for (uint i = 0; i < iterations; ++i) {
    x += y;
    y ^= z;
    z += x;
  }
  out[get_global_id(0)] = x ^ y ^ z;
}

kernel void groups_of_one(global uint* out, uint iterations) {
  uint x = get_global_id(0);
  for (uint i = 0; i < iterations; ++i) x = (x * 1664525u + 1013904223u) ^ (x >> 7);
  out[get_global_id(0)] = x;
}
)CLC";
  return s;
}

// Host references, lane by lane.
uint32_t rotate_left(uint32_t x, unsigned s) { return (x << s) | (x >> (32 - s)); }

uint32_t md5_style_hash(uint32_t lane, uint32_t seed) {
  uint32_t m[16];
  for (uint32_t j = 0; j < 16; ++j) m[j] = lane * (2 * j + 1) + seed;
  uint32_t v[4] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
  unsigned first = 0;
  for (const Md5Step& step : md5_steps()) {
    uint32_t &a = v[first % 4], b = v[(first + 1) % 4], c = v[(first + 2) % 4],
             d = v[(first + 3) % 4];
    uint32_t f = step.round == 0   ? (b & c) | (~b & d)
                 : step.round == 1 ? (d & b) | (~d & c)
                 : step.round == 2 ? b ^ c ^ d
                                   : c ^ (b | ~d);
    a = b + rotate_left(a + f + m[step.word] + step.constant, step.shift);
    first = (first + 3) % 4;
  }
  return (v[0] + 0x67452301u) ^ (v[1] + 0xefcdab89u) ^ (v[2] + 0x98badcfeu) ^ (v[3] + 0x10325476u);
}

Outcome measure_read(const Device& device, cl_program program, unsigned width,
                     const BenchSizes& sizes) {
  const size_t bytes = sizes.stream_bytes, count = bytes / sizeof(float);
  const size_t items = count / width / kReadFetches;
  std::vector<float> in(count), out(items * width);
  for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>(i % 7);
  Buffer in_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in.data());
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, out.size() * sizeof(float));
  Kernel kernel = make_kernel(program, ("read_" + vector_type("float", width)).c_str());
  set_arg(kernel, 0, in_buffer.get());
  set_arg(kernel, 1, out_buffer.get());
  size_t global = items;
  double seconds = timed_median(device, sizes.stream_repeats,
                                [&] { run_ndrange(device, kernel, 1, &global, nullptr); });
  read_buffer(device, out_buffer, out.size() * sizeof(float), out.data());
  // The local size the platform chose is not known here: check against every group size that
  // divides the range would be costly, so check what does not depend on it, the total.
  double expected = 0, got = 0;
  for (size_t i = 0; i < count && i < items * width * kReadFetches; ++i) expected += in[i];
  for (float value : out) got += value;
  if (!close_enough(expected, got, 1e-9)) return {0, mismatch("sum of out", 0, expected, got)};
  return {static_cast<double>(items * width * kReadFetches * sizeof(float)) / seconds / 1e9, {}};
}

template <typename T>
Outcome measure_mad(const Device& device, cl_program program, const char* scalar, unsigned width,
                    const BenchSizes& sizes) {
  const size_t items = kMadLanes / width;
  const T a = std::is_floating_point_v<T> ? T(0.999) : T(1664525u);
  const T b = std::is_floating_point_v<T> ? T(0.001) : T(1013904223u);
  std::vector<T> out(kMadLanes);
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, out.size() * sizeof(T));
  Kernel kernel = make_kernel(program, ("mad_" + vector_type(scalar, width)).c_str());
  set_arg(kernel, 0, out_buffer.get());
  set_arg(kernel, 1, a);
  set_arg(kernel, 2, b);
  size_t global = items;
  double seconds = timed_median(device, sizes.vector_repeats,
                                [&] { run_ndrange(device, kernel, 1, &global, nullptr); });
  read_buffer(device, out_buffer, out.size() * sizeof(T), out.data());
  for (size_t lane = 0; lane < kMadLanes; lane += 997) {
    const T expected = mad_chains<T>(static_cast<T>(static_cast<uint32_t>(lane)), a, b);
    const double relative = std::is_floating_point_v<T> ? 1e-4 : 0;
    if (!close_enough(static_cast<double>(expected), static_cast<double>(out[lane]), relative))
      return {0,
              mismatch("out", lane, static_cast<double>(expected), static_cast<double>(out[lane]))};
  }
  return {2.0 * 8 * kMadIterations * static_cast<double>(kMadLanes) / seconds / 1e9, {}};
}

Outcome measure_hash(const Device& device, cl_program program, unsigned width,
                     const BenchSizes& sizes) {
  const uint32_t seed = 0x9e3779b9u;
  std::vector<uint32_t> out(kHashLanes);
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, out.size() * sizeof(uint32_t));
  Kernel kernel = make_kernel(program, ("hash_" + vector_type("uint", width)).c_str());
  set_arg(kernel, 0, out_buffer.get());
  set_arg(kernel, 1, seed);
  size_t global = kHashLanes / width;
  double seconds = timed_median(device, sizes.vector_repeats,
                                [&] { run_ndrange(device, kernel, 1, &global, nullptr); });
  read_buffer(device, out_buffer, out.size() * sizeof(uint32_t), out.data());
  for (size_t lane = 0; lane < kHashLanes; lane += 101) {
    const uint32_t expected = md5_style_hash(static_cast<uint32_t>(lane), seed);
    if (out[lane] != expected) return {0, mismatch("out", lane, expected, out[lane])};
  }
  return {static_cast<double>(kHashLanes) / seconds / 1e6, {}};
}

Outcome measure_loop_local1(const Device& device, cl_program program, const BenchSizes& sizes) {
  std::vector<uint32_t> out(kLoopItems * kLoopLanesPerItem);
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, out.size() * sizeof(uint32_t));
  Kernel kernel = make_kernel(program, "loop_uint16");
  set_arg(kernel, 0, out_buffer.get());
  set_arg(kernel, 1, kLoopIterations);
  size_t global = kLoopItems, local = 1;
  double seconds = timed_median(device, sizes.vector_repeats,
                                [&] { run_ndrange(device, kernel, 1, &global, &local); });
  read_buffer(device, out_buffer, out.size() * sizeof(uint32_t), out.data());
  for (size_t lane = 0; lane < out.size(); lane += 61) {
    const uint32_t expected = loop_lane(static_cast<uint32_t>(lane));
    if (out[lane] != expected) return {0, mismatch("out", lane, expected, out[lane])};
  }
  return {static_cast<double>(out.size()) * kLoopIterations / seconds / 1e6, {}};
}

// 2048 work-groups of one work-item; the host waits in clFinish, or polls the event's status
// with 1 ms sleeps as many applications do (then no application thread works inside the
// platform).
Outcome measure_groups_of_one(const Device& device, cl_program program, bool poll,
                              const BenchSizes& sizes) {
  std::vector<uint32_t> out(kGroupsOfOne);
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, out.size() * sizeof(uint32_t));
  Kernel kernel = make_kernel(program, "groups_of_one");
  set_arg(kernel, 0, out_buffer.get());
  set_arg(kernel, 1, kGroupsOfOneIterations);
  size_t global = kGroupsOfOne, local = 1;
  auto run_once = [&] {
    cl_event done = nullptr;
    cl_check(clEnqueueNDRangeKernel(device.queue, kernel, 1, nullptr, &global, &local, 0, nullptr,
                                    &done),
             "clEnqueueNDRangeKernel");
    if (!poll) {
      finish(device);
    } else {
      cl_check(clFlush(device.queue), "clFlush");
      for (;;) {
        cl_int status = CL_QUEUED;
        cl_check(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                nullptr),
                 "clGetEventInfo");
        if (status < 0) throw ClError("the kernel's event", status);
        if (status == CL_COMPLETE) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    clReleaseEvent(done);
  };
  run_once();
  std::vector<double> times;
  for (int r = 0; r < sizes.vector_repeats; ++r) {
    auto start = Clock::now();
    run_once();
    times.push_back(seconds_between(start, Clock::now()));
  }
  read_buffer(device, out_buffer, out.size() * sizeof(uint32_t), out.data());
  for (size_t i = 0; i < out.size(); i += 97) {
    uint32_t x = static_cast<uint32_t>(i);
    for (unsigned k = 0; k < kGroupsOfOneIterations; ++k)
      x = (x * 1664525u + 1013904223u) ^ (x >> 7);
    if (out[i] != x) return {0, mismatch("out", i, x, out[i])};
  }
  return {median_of(times) * 1e3, {}};
}

void measure_vector_kernels(const Device& device, const BenchSizes& sizes) {
  Program program;
  std::string build_failure;
  try {
    program = build_program(device, vector_bench_source());
  } catch (const std::exception& error) {
    build_failure = std::string("building the vector benchmark program: ") + error.what();
  }
  auto run = [&](const std::string& metric, const std::function<Outcome()>& body) {
    measure(metric.c_str(), [&]() -> Outcome {
      if (!build_failure.empty()) throw std::runtime_error(build_failure);
      return body();
    });
  };
  for (unsigned w : kVectorWidths)
    run("read_" + vector_type("float", w) + "_gbs",
        [&] { return measure_read(device, program, w, sizes); });
  for (unsigned w : kVectorWidths)
    run("mad_" + vector_type("float", w) + "_gflops",
        [&] { return measure_mad<float>(device, program, "float", w, sizes); });
  for (unsigned w : kVectorWidths)
    run("mad_" + vector_type("uint", w) + "_gops",
        [&] { return measure_mad<uint32_t>(device, program, "uint", w, sizes); });
  for (unsigned w : kVectorWidths)
    run("mad_" + vector_type("double", w) + "_gflops",
        [&] { return measure_mad<double>(device, program, "double", w, sizes); });
  for (unsigned w : kVectorWidths)
    if (w != 2)
      run("hash_" + vector_type("uint", w) + "_mlanes",
          [&] { return measure_hash(device, program, w, sizes); });
  run("loop_uint16_local1_melems", [&] { return measure_loop_local1(device, program, sizes); });
  run("groups_of_one_finish_ms",
      [&] { return measure_groups_of_one(device, program, false, sizes); });
  run("groups_of_one_poll_ms", [&] { return measure_groups_of_one(device, program, true, sizes); });
}

void emit_all_kernel_metrics_as(const std::string& value, const std::string& note) {
  for (const auto& metric : kMetrics)
    if (std::strncmp(metric.name, "build_", 6) != 0) emit(metric.name, value, note);
}

}  // namespace

// manifold _bench-device PLATFORM_NAME DEVICE_INDEX [--quick]
int run_bench_device_worker(const std::vector<std::string>& args) {
  if (args.size() < 2) return 2;
  bool quick = std::find(args.begin(), args.end(), "--quick") != args.end();
  BenchSizes sizes = bench_sizes(quick);
  Device device;
  try {
    device = open_device(args[0], std::stoi(args[1]));
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
