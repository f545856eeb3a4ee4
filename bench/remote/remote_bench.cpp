// Remote devices against local ones, in one run: an empty kernel's round trip (enqueue to
// completion), enqueue throughput, blocking write and read bandwidth, and a migration between two
// servers' devices. The client is pointed at the servers by bench/remote/run.sh (MANIFOLD_REMOTE).
// Prints one table row per measurement: name, device, value, unit.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void check(cl_int status, const char* what) {
  if (status == CL_SUCCESS) return;
  std::fprintf(stderr, "remote_bench: %s failed: %d\n", what, status);
  std::exit(1);
}

std::string name_of(cl_device_id d) {
  char name[512] = {};
  clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
  return name;
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Setup {
  cl_context context;
  cl_program program;
  cl_kernel empty;
};

Setup setup(const std::vector<cl_device_id>& devices) {
  cl_int err = CL_SUCCESS;
  Setup s{};
  s.context =
      clCreateContext(nullptr, cl_uint(devices.size()), devices.data(), nullptr, nullptr, &err);
  check(err, "clCreateContext");
  const char* source = "kernel void empty(global int* x) {}\n";
  s.program = clCreateProgramWithSource(s.context, 1, &source, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  check(clBuildProgram(s.program, 0, nullptr, "", nullptr, nullptr), "clBuildProgram");
  s.empty = clCreateKernel(s.program, "empty", &err);
  check(err, "clCreateKernel");
  return s;
}

void row(const char* what, const std::string& device, double value, const char* unit) {
  std::printf("| %s | %s | %.2f %s |\n", what, device.c_str(), value, unit);
  std::fflush(stdout);
}

void measure_device(cl_device_id device) {
  Setup s = setup({device});
  cl_int err = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueueWithProperties(s.context, device, nullptr, &err);
  check(err, "clCreateCommandQueue");
  cl_mem dummy = clCreateBuffer(s.context, CL_MEM_READ_WRITE, 64, nullptr, &err);
  check(err, "clCreateBuffer");
  clSetKernelArg(s.empty, 0, sizeof dummy, &dummy);
  const size_t one = 1;
  const std::string name = name_of(device);
  // Round trip: one empty kernel, enqueued and waited for, many times; the median.
  std::vector<double> trips;
  for (int i = 0; i < 2000; ++i) {
    const auto t = Clock::now();
    check(clEnqueueNDRangeKernel(q, s.empty, 1, nullptr, &one, nullptr, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
    check(clFinish(q), "clFinish");
    if (i >= 100) trips.push_back(seconds_since(t));
  }
  std::nth_element(trips.begin(), trips.begin() + trips.size() / 2, trips.end());
  row("empty kernel round trip (median)", name, trips[trips.size() / 2] * 1e6, "us");
  // Throughput: many kernels enqueued back to back, then one wait.
  const int launches = 20000;
  auto t = Clock::now();
  for (int i = 0; i < launches; ++i)
    check(clEnqueueNDRangeKernel(q, s.empty, 1, nullptr, &one, nullptr, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
  check(clFinish(q), "clFinish");
  row("enqueue throughput (empty kernels)", name, launches / seconds_since(t) / 1e3,
      "k commands/s");
  // Bandwidth: blocking writes and reads of one buffer.
  for (size_t mib : {1, 16, 256}) {
    const size_t size = mib << 20;
    std::vector<char> host(size, 1);
    cl_mem m = clCreateBuffer(s.context, CL_MEM_READ_WRITE, size, nullptr, &err);
    check(err, "clCreateBuffer");
    check(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, size, host.data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
    const int reps = mib >= 256 ? 4 : 16;
    t = Clock::now();
    for (int i = 0; i < reps; ++i)
      check(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, size, host.data(), 0, nullptr, nullptr),
            "clEnqueueWriteBuffer");
    const std::string label_w = "write " + std::to_string(mib) + " MiB";
    row(label_w.c_str(), name, double(size) * reps / seconds_since(t) / 1e9, "GB/s");
    t = Clock::now();
    for (int i = 0; i < reps; ++i)
      check(clEnqueueReadBuffer(q, m, CL_TRUE, 0, size, host.data(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer");
    const std::string label_r = "read " + std::to_string(mib) + " MiB";
    row(label_r.c_str(), name, double(size) * reps / seconds_since(t) / 1e9, "GB/s");
    clReleaseMemObject(m);
  }
  clReleaseMemObject(dummy);
  clReleaseCommandQueue(q);
  clReleaseKernel(s.empty);
  clReleaseProgram(s.program);
  clReleaseContext(s.context);
}

// A buffer written on `from`'s device moves to `to`'s for a kernel there.
void measure_migration(cl_device_id from, cl_device_id to, size_t size) {
  Setup s = setup({from, to});
  cl_int err = CL_SUCCESS;
  cl_command_queue qa = clCreateCommandQueueWithProperties(s.context, from, nullptr, &err);
  cl_command_queue qb = clCreateCommandQueueWithProperties(s.context, to, nullptr, &err);
  cl_mem m = clCreateBuffer(s.context, CL_MEM_READ_WRITE, size, nullptr, &err);
  check(err, "clCreateBuffer");
  const char zero = 0;
  check(clEnqueueFillBuffer(qa, m, &zero, 1, 0, size, 0, nullptr, nullptr), "clEnqueueFillBuffer");
  check(clFinish(qa), "clFinish");
  const auto t = Clock::now();
  check(clEnqueueMigrateMemObjects(qb, 1, &m, 0, 0, nullptr, nullptr),
        "clEnqueueMigrateMemObjects");
  check(clFinish(qb), "clFinish");
  const double elapsed = seconds_since(t);
  const std::string what = "migrate " + std::to_string(size >> 20) + " MiB";
  row(what.c_str(), name_of(from) + " -> " + name_of(to), double(size) / elapsed / 1e9, "GB/s");
  clReleaseMemObject(m);
  clReleaseCommandQueue(qa);
  clReleaseCommandQueue(qb);
  clReleaseKernel(s.empty);
  clReleaseProgram(s.program);
  clReleaseContext(s.context);
}

}  // namespace

int main() {
  cl_platform_id platforms[16];
  cl_uint n = 0;
  clGetPlatformIDs(16, platforms, &n);
  std::vector<cl_device_id> local, remote;
  for (cl_uint p = 0; p < n; ++p) {
    char name[256] = {};
    clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    if (!std::strstr(name, "Manifold")) continue;
    cl_device_id devices[64];
    cl_uint count = 0;
    clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 64, devices, &count);
    for (cl_uint i = 0; i < count; ++i)
      (name_of(devices[i]).find(": ") != std::string::npos ? remote : local).push_back(devices[i]);
  }
  if (local.empty() || remote.empty()) {
    std::fprintf(stderr, "remote_bench: needs a local device and a remote one (MANIFOLD_REMOTE)\n");
    return 1;
  }
  std::printf("| measurement | device | value |\n|---|---|---|\n");
  for (cl_device_id d : local) measure_device(d);
  for (cl_device_id d : remote) measure_device(d);
  if (remote.size() >= 2) measure_migration(remote[0], remote[1], size_t(1) << 30);
  return 0;
}
