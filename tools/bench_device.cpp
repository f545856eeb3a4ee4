// The bench worker's plumbing (bench_device.h): protocol lines, device lookup, builds, launches.
#include "bench_device.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_metrics.h"
#include "settings/settings.h"

namespace manifold_tool {
namespace {

// The kernels launched on a device group during the current measurement, held until measure()
// has asked for their splits. The group keeps the split of each kernel name's last launch, so
// one entry per name, with its last NDRange.
struct NotedLaunch {
  cl_kernel kernel;
  cl_device_id device;
  std::string name;
  cl_uint dims;
  size_t global[3], local[3];  // local all 0: left to the platform
};
std::vector<NotedLaunch> noted_launches;

bool same_range(const NotedLaunch& noted, cl_uint dims, const size_t* global, const size_t* local) {
  if (noted.dims != dims) return false;
  for (cl_uint d = 0; d < dims; ++d)
    if (noted.global[d] != global[d] || noted.local[d] != (local ? local[d] : 0)) return false;
  return true;
}

std::string range_text(const NotedLaunch& noted) {
  std::string text;
  for (cl_uint d = 0; d < noted.dims; ++d) text += (d ? "x" : "") + std::to_string(noted.global[d]);
  if (noted.local[0] == 0) return text;
  text += "/";
  for (cl_uint d = 0; d < noted.dims; ++d) text += (d ? "x" : "") + std::to_string(noted.local[d]);
  return text;
}

// One split line per noted kernel; lets the kernels go.
void emit_splits(const char* metric) {
  for (const NotedLaunch& noted : noted_launches) {
    const std::vector<float> split = group_split(noted.kernel, noted.device);
    if (!split.empty()) {
      std::string fractions;
      for (size_t m = 0; m < split.size(); ++m) {
        char text[32];
        std::snprintf(text, sizeof text, "%s%.4g", m ? "," : "", double(split[m]));
        fractions += text;
      }
      std::printf("split\t%s\t%s\t%s\t%s\n", metric, noted.name.c_str(), range_text(noted).c_str(),
                  fractions.c_str());
    }
    clReleaseKernel(noted.kernel);
  }
  std::fflush(stdout);
  noted_launches.clear();
}

}  // namespace

void note_launch(const Device& device, cl_kernel kernel, cl_uint dims, const size_t* global,
                 const size_t* local) {
  if (!device.group || dims < 1 || dims > 3) return;
  // The timed loops launch one kernel many times: the common case is one comparison.
  for (const NotedLaunch& noted : noted_launches)
    if (noted.kernel == kernel && same_range(noted, dims, global, local)) return;
  size_t size = 0;
  if (clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size) != CL_SUCCESS) return;
  std::string name(size, '\0');
  clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, size, name.data(), nullptr);
  while (!name.empty() && name.back() == '\0') name.pop_back();
  NotedLaunch launch{kernel, device.device, name, dims, {1, 1, 1}, {0, 0, 0}};
  for (cl_uint d = 0; d < dims; ++d) {
    launch.global[d] = global[d];
    launch.local[d] = local ? local[d] : 0;
  }
  clRetainKernel(kernel);
  for (NotedLaunch& noted : noted_launches)
    if (noted.name == name) {
      clReleaseKernel(noted.kernel);
      noted = launch;
      return;
    }
  noted_launches.push_back(launch);
}

void emit(const char* metric, const std::string& value, const std::string& note) {
  const MetricInfo* info = find_metric(metric);
  std::printf("%s\t%s\t%s%s%s\n", metric, value.c_str(), info ? info->unit : "-",
              note.empty() ? "" : "\t", note.c_str());
  std::fflush(stdout);
}

void emit_info(const char* key, const std::string& value) {
  std::printf("info\t%s\t%s\n", key, value.c_str());
  std::fflush(stdout);
}

void measure(const char* metric, const std::function<Outcome()>& body) {
  if (!metric_selected(metric)) return;
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
  emit_splits(metric);
}

Device open_device(const std::string& platform_name, int device_index, int member) {
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
  if (member >= 0) {
    const std::vector<cl_device_id> members = group_members(result.device);
    if (size_t(member) >= members.size()) throw std::runtime_error("no such group member");
    result.device = members[size_t(member)];
  } else {
    result.group = !group_members(result.device).empty();
  }
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

Buffer make_buffer(const Device& device, cl_mem_flags flags, size_t bytes, void* host) {
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

namespace {

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

}  // namespace

Program build_program(const Device& device, const std::string& source) {
  const char* text = source.c_str();
  size_t length = source.size();
  cl_int status = CL_SUCCESS;
  Program program(clCreateProgramWithSource(device.context, 1, &text, &length, &status));
  cl_check(status, "clCreateProgramWithSource");
  return built(device, std::move(program));
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

bool is_gpu(const Device& device) {
  cl_device_type type = 0;
  clGetDeviceInfo(device.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
  return (type & CL_DEVICE_TYPE_GPU) != 0;
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

void run_ndrange(const Device& device, cl_kernel kernel, cl_uint dims, const size_t* global,
                 const size_t* local) {
  cl_check(clEnqueueNDRangeKernel(device.queue, kernel, dims, nullptr, global, local, 0, nullptr,
                                  nullptr),
           "clEnqueueNDRangeKernel");
  note_launch(device, kernel, dims, global, local);
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

}  // namespace manifold_tool
