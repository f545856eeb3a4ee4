// End-to-end tests of the GPU devices (CUDA backend) through the ICD loader, run on every GPU
// device the platform lists (parametrized by device). Without a GPU every test is skipped,
// visibly ("[  SKIPPED ]": ctest counts them as skipped, label gpu).
#include <CL/cl.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cl_test.h"
#include "core/cl_khr_command_buffer.h"

#define ASSERT_CL_OK(expr) \
  ASSERT_EQ(::cltest::Err(CL_SUCCESS), ::cltest::Err(expr)) << "  in: " #expr

namespace {

using namespace cltest;

std::vector<cl_device_id> gpu_devices() {
  cl_platform_id platform = findPlatform();
  if (!platform) return {};
  cl_uint n = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 0, nullptr, &n) != CL_SUCCESS || n == 0)
    return {};
  std::vector<cl_device_id> devices(n);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, n, devices.data(), nullptr);
  return devices;
}

class Gpu : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    auto devices = gpu_devices();
    if (GetParam() >= static_cast<int>(devices.size()))
      GTEST_SKIP() << "no GPU device #" << GetParam() << " (the platform lists " << devices.size()
                   << ")";
    device_ = devices[GetParam()];
    cl_int err = CL_SUCCESS;
    context_.reset(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err));
    queue_.reset(clCreateCommandQueueWithProperties(context_, device_, nullptr, &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  }
  void TearDown() override {
    if (queue_) clFinish(queue_);
  }

  Program build(const char* source, const char* options = "") {
    cl_int err = CL_SUCCESS;
    Program p(clCreateProgramWithSource(context_, 1, &source, nullptr, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err));
    err = clBuildProgram(p, 1, &device_, options, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      size_t size = 0;
      clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      ADD_FAILURE() << "build failed: " << errorName(err) << "\n" << log;
    }
    return p;
  }
  Kernel kernel(cl_program p, const char* name) {
    cl_int err = CL_SUCCESS;
    Kernel k(clCreateKernel(p, name, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << name;
    return k;
  }
  Mem buffer(size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE, void* host = nullptr) {
    cl_int err = CL_SUCCESS;
    Mem m(clCreateBuffer(context_, flags, size, host, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err));
    return m;
  }
  template <class T>
  std::vector<T> read(cl_mem m, size_t count, cl_command_queue q = nullptr) {
    std::vector<T> out(count);
    EXPECT_CL_OK(clEnqueueReadBuffer(q ? q : queue_.get(), m, CL_TRUE, 0, count * sizeof(T),
                                     out.data(), 0, nullptr, nullptr));
    return out;
  }
  template <class T>
  void arg(cl_kernel k, cl_uint i, const T& v) {
    ASSERT_CL_OK(clSetKernelArg(k, i, sizeof(T), &v));
  }
  void run(cl_kernel k, size_t global, size_t local = 0, size_t offset = 0) {
    ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, k, 1, offset ? &offset : nullptr, &global,
                                        local ? &local : nullptr, 0, nullptr, nullptr));
  }

  cl_device_id device_ = nullptr;
  Context context_;
  Queue queue_;
};

TEST_P(Gpu, DeviceInfoIsTrue) {
  EXPECT_NE(deviceString(device_, CL_DEVICE_NAME), "");
  EXPECT_EQ(deviceInfo<cl_device_type>(device_, CL_DEVICE_TYPE),
            cl_device_type(CL_DEVICE_TYPE_GPU));
  EXPECT_GT(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_COMPUTE_UNITS), 1u);
  EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_MAX_WORK_GROUP_SIZE), 256u);
  EXPECT_GE(deviceInfo<cl_ulong>(device_, CL_DEVICE_LOCAL_MEM_SIZE), 48u * 1024);
  EXPECT_GT(deviceInfo<cl_ulong>(device_, CL_DEVICE_GLOBAL_MEM_SIZE), 1ull << 30);
  EXPECT_GT(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_CLOCK_FREQUENCY), 100u);
  const std::string ext = deviceString(device_, CL_DEVICE_EXTENSIONS);
  EXPECT_TRUE(hasWord(ext, "cl_khr_device_uuid")) << ext;
  EXPECT_TRUE(hasWord(ext, "cl_khr_pci_bus_info")) << ext;
  EXPECT_TRUE(hasWord(ext, "cl_khr_fp64")) << ext;
  EXPECT_TRUE(hasWord(ext, "cl_khr_int64_base_atomics")) << ext;
  cl_uchar uuid[CL_UUID_SIZE_KHR] = {};
  ASSERT_CL_OK(clGetDeviceInfo(device_, CL_DEVICE_UUID_KHR, sizeof(uuid), uuid, nullptr));
  EXPECT_NE(std::accumulate(uuid, uuid + CL_UUID_SIZE_KHR, 0), 0);
  std::printf("[ INFO ] %s | %s | %s\n", deviceString(device_, CL_DEVICE_NAME).c_str(),
              deviceString(device_, CL_DEVICE_VERSION).c_str(),
              deviceString(device_, CL_DRIVER_VERSION).c_str());
}

TEST_P(Gpu, VectorAddWithOffsetAndConstant) {
  Program p = build(R"(
    kernel void add(global const float* a, constant float* b, global float* c, float s) {
      size_t i = get_global_id(0);
      c[i] = a[i] + s * b[i];
    })");
  const size_t n = 1 << 20;
  std::vector<float> a(n), b(n);
  for (size_t i = 0; i < n; ++i) a[i] = float(i), b[i] = float(i % 13);
  Mem ma = buffer(n * 4, CL_MEM_COPY_HOST_PTR, a.data());
  Mem mb = buffer(n * 4, CL_MEM_COPY_HOST_PTR, b.data());
  Mem mc = buffer(n * 4);
  Kernel k = kernel(p, "add");
  arg(k, 0, ma.get()), arg(k, 1, mb.get()), arg(k, 2, mc.get()), arg(k, 3, 2.0f);
  run(k, n / 2, 256, n / 2);  // the upper half, through the global offset
  auto c = read<float>(mc, n);
  for (size_t i = n / 2; i < n; i += 997) ASSERT_EQ(c[i], a[i] + 2.0f * b[i]) << i;
}

TEST_P(Gpu, NDRangeBeyondTheGridLimitIsSplitKeepingItsIds) {
  // CUDA grids have at most 65535 blocks in y and z (2^31-1 in x): a larger NDRange goes as
  // several launches, each of which still sees the whole NDRange's ids and sizes.
  Program p = build(R"(
    kernel void ids(global uint* out) {
      const size_t y = get_global_id(1) - get_global_offset(1);
      if (get_global_id(0) != 0) return;
      out[y * 4 + 0] = (uint)get_group_id(1);
      out[y * 4 + 1] = (uint)get_num_groups(1);
      out[y * 4 + 2] = (uint)get_global_size(1);
      out[y * 4 + 3] = (uint)get_global_id(1);
    })");
  const size_t groups = 65535 + 4466, local_y = 2, n = groups * local_y;
  Mem m = buffer(n * 4 * sizeof(cl_uint));
  Kernel k = kernel(p, "ids");
  arg(k, 0, m.get());
  const size_t global[2] = {1, n}, local[2] = {1, local_y}, offset[2] = {0, 7};
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, k, 2, offset, global, local, 0, nullptr, nullptr));
  auto out = read<cl_uint>(m, n * 4);
  for (size_t y = 0; y < n; ++y) {
    ASSERT_EQ(out[y * 4 + 0], y / local_y) << y;
    ASSERT_EQ(out[y * 4 + 1], groups) << y;
    ASSERT_EQ(out[y * 4 + 2], n) << y;
    ASSERT_EQ(out[y * 4 + 3], y + 7) << y;
  }
  // The next launch of the program sees a whole-grid launch state again.
  const size_t small[2] = {1, 64};
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, k, 2, nullptr, small, nullptr, 0, nullptr, nullptr));
  out = read<cl_uint>(m, 64 * 4);
  for (size_t y = 0; y < 64; ++y) {
    ASSERT_EQ(out[y * 4 + 2], 64u) << y;
    ASSERT_EQ(out[y * 4 + 3], y) << y;
  }
}

TEST_P(Gpu, ImportedHostMemoryIsUsedInPlace) {
  // cl_arm_import_memory: the GPU maps the application's pages; a kernel changes them with no
  // copy and no read.
  using ImportFn = cl_mem(CL_API_CALL*)(cl_context, cl_mem_flags, const cl_import_properties_arm*,
                                        void*, size_t, cl_int*);
  auto import = reinterpret_cast<ImportFn>(
      clGetExtensionFunctionAddressForPlatform(findPlatform(), "clImportMemoryARM"));
  ASSERT_NE(import, nullptr);
  ASSERT_TRUE(hasWord(deviceString(device_, CL_DEVICE_EXTENSIONS), "cl_arm_import_memory_host"));
  const size_t n = (size_t{64} << 20) + 12;  // not a multiple of the page size
  std::vector<float> host(n / sizeof(float) + 1);
  for (size_t i = 0; i < host.size(); ++i) host[i] = float(i % 1000);
  cl_int err = CL_SUCCESS;
  // From the second float on: an unaligned start.
  Mem m(import(context_, CL_MEM_READ_WRITE, nullptr, host.data() + 1, n, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Program p = build("kernel void twice(global float* x) { x[get_global_id(0)] *= 2.0f; }");
  Kernel k = kernel(p, "twice");
  arg(k, 0, m.get());
  run(k, n / sizeof(float));
  ASSERT_CL_OK(clFinish(queue_));
  EXPECT_EQ(host[0], 0.0f);  // outside the imported range
  for (size_t i = 1; i <= n / sizeof(float); i += 9973)
    ASSERT_EQ(host[i], 2.0f * float(i % 1000)) << i;
}

TEST_P(Gpu, LocalMemoryReductionWithBarriers) {
  Program p = build(R"(
    kernel void reduce(global const float* in, global float* out, local float* scratch) {
      local float twice[256];
      size_t lid = get_local_id(0);
      scratch[lid] = in[get_global_id(0)];
      twice[lid] = 2.0f * scratch[lid];
      barrier(CLK_LOCAL_MEM_FENCE);
      for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
        if (lid < s) { scratch[lid] += scratch[lid + s]; twice[lid] += twice[lid + s]; }
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      if (lid == 0) { out[2 * get_group_id(0)] = scratch[0]; out[2 * get_group_id(0) + 1] = twice[0]; }
    })");
  const size_t n = 1 << 18, group = 256;
  std::vector<float> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = float(i % 17) * 0.25f;
  Mem mi = buffer(n * 4, CL_MEM_COPY_HOST_PTR, in.data());
  Mem mo = buffer(n / group * 8);
  Kernel k = kernel(p, "reduce");
  arg(k, 0, mi.get()), arg(k, 1, mo.get());
  ASSERT_CL_OK(clSetKernelArg(k, 2, group * 4, nullptr));
  size_t wg = 0;
  ASSERT_CL_OK(
      clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_WORK_GROUP_SIZE, sizeof(wg), &wg, nullptr));
  EXPECT_GE(wg, group);
  EXPECT_LE(wg, deviceInfo<size_t>(device_, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  run(k, n, group);
  auto out = read<float>(mo, n / group * 2);
  for (size_t g = 0; g < n / group; ++g) {
    float expected = 0;
    for (size_t i = g * group; i < (g + 1) * group; ++i) expected += in[i];
    ASSERT_EQ(out[2 * g], expected) << g;
    ASSERT_EQ(out[2 * g + 1], 2 * expected) << g;
  }
}

TEST_P(Gpu, LargeLocalMemoryBeyond48K) {
  Program p = build(R"(
    kernel void fill(global int* out, local int* big, int n) {
      for (int i = get_local_id(0); i < n; i += get_local_size(0)) big[i] = i;
      barrier(CLK_LOCAL_MEM_FENCE);
      if (get_local_id(0) == 0) { int s = 0; for (int i = 0; i < n; ++i) s += big[i]; out[0] = s; }
    })");
  const int n = 96 * 1024 / 4;
  if (deviceInfo<cl_ulong>(device_, CL_DEVICE_LOCAL_MEM_SIZE) < size_t(n) * 4)
    GTEST_SKIP() << "small local memory";
  Mem mo = buffer(4);
  Kernel k = kernel(p, "fill");
  arg(k, 0, mo.get());
  ASSERT_CL_OK(clSetKernelArg(k, 1, n * 4, nullptr));
  arg(k, 2, n);
  run(k, 128, 128);
  EXPECT_EQ(read<int>(mo, 1)[0], n * (n - 1) / 2);
}

TEST_P(Gpu, Atomics32And64) {
  Program p = build(R"(
    #pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
    #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
    kernel void count(global int* c32, global long* c64, global int* mx) {
      local long l64;
      if (get_local_id(0) == 0) l64 = 0;
      barrier(CLK_LOCAL_MEM_FENCE);
      atomic_inc(c32);
      atom_add(c64, (long)get_global_id(0) << 20);
      atom_add(&l64, 1L);
      atomic_max(mx, (int)get_global_id(0));
      barrier(CLK_LOCAL_MEM_FENCE);
      if (get_local_id(0) == 0) atom_add(c64 + 1, l64);
    })");
  const size_t n = 1 << 16;
  int zero32[1] = {0};
  long long zero64[2] = {0, 0};
  Mem m32 = buffer(4, CL_MEM_COPY_HOST_PTR, zero32);
  Mem m64 = buffer(16, CL_MEM_COPY_HOST_PTR, zero64);
  Mem mmax = buffer(4, CL_MEM_COPY_HOST_PTR, zero32);
  Kernel k = kernel(p, "count");
  arg(k, 0, m32.get()), arg(k, 1, m64.get()), arg(k, 2, mmax.get());
  run(k, n, 128);
  EXPECT_EQ(read<int>(m32, 1)[0], int(n));
  auto c64 = read<long long>(m64, 2);
  EXPECT_EQ(c64[0], (long long)(n * (n - 1) / 2) << 20);
  EXPECT_EQ(c64[1], (long long)n);
  EXPECT_EQ(read<int>(mmax, 1)[0], int(n - 1));
}

TEST_P(Gpu, DoublePrecision) {
  Program p = build(R"(
    #pragma OPENCL EXTENSION cl_khr_fp64 : enable
    kernel void f(global double* x) {
      size_t i = get_global_id(0);
      x[i] = sqrt((double)i) + exp(-1.0) + sin((double)i * 0.001);
    })");
  const size_t n = 4096;
  Mem m = buffer(n * 8);
  Kernel k = kernel(p, "f");
  arg(k, 0, m.get());
  run(k, n, 64);
  auto x = read<double>(m, n);
  for (size_t i = 0; i < n; i += 101)
    EXPECT_NEAR(x[i], std::sqrt(double(i)) + std::exp(-1.0) + std::sin(i * 0.001), 1e-12);
}

TEST_P(Gpu, Printf) {
  Program p = build(R"(
    kernel void hello(int v) {
      if (get_global_id(0) == 0) printf("gpu says %d %.2f %s %v4d\n", v, 1.5f, "ok", (int4)(1, 2, 3, 4));
    })");
  Kernel k = kernel(p, "hello");
  arg(k, 0, 42);
  // CUDA's printf writes to file descriptor 1: capture it in a file.
  char path[] = "/tmp/manifold_printf_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::fflush(stdout);
  int saved = dup(1);
  dup2(fd, 1);
  run(k, 32, 32);
  clFinish(queue_);
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  close(fd);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path);
  EXPECT_NE(text.str().find("gpu says 42 1.50 ok 1,2,3,4"), std::string::npos) << text.str();
}

TEST_P(Gpu, TransfersLargePageableAndRect) {
  const size_t n = (size_t(96) << 20) / 4 + 123;  // several staging chunks and a ragged tail
  std::vector<int> host(n), back(n, 0);
  std::iota(host.begin(), host.end(), 7);
  Mem m = buffer(n * 4);
  ASSERT_CL_OK(
      clEnqueueWriteBuffer(queue_, m, CL_FALSE, 0, n * 4, host.data(), 0, nullptr, nullptr));
  Mem copy = buffer(n * 4);
  ASSERT_CL_OK(clEnqueueCopyBuffer(queue_, m, copy, 0, 0, n * 4, 0, nullptr, nullptr));
  ASSERT_CL_OK(
      clEnqueueReadBuffer(queue_, copy, CL_TRUE, 0, n * 4, back.data(), 0, nullptr, nullptr));
  ASSERT_TRUE(host == back);
  // A 2-D region: rows of 16 ints out of rows of 64.
  size_t origin[3] = {8 * 4, 2, 0}, host_origin[3] = {0, 0, 0}, region[3] = {16 * 4, 10, 1};
  std::vector<int> rect(16 * 10);
  ASSERT_CL_OK(clEnqueueReadBufferRect(queue_, m, CL_TRUE, origin, host_origin, region, 64 * 4, 0,
                                       16 * 4, 0, rect.data(), 0, nullptr, nullptr));
  for (int r = 0; r < 10; ++r)
    for (int c = 0; c < 16; ++c) ASSERT_EQ(rect[r * 16 + c], host[(2 + r) * 64 + 8 + c]);
}

TEST_P(Gpu, FillPatterns) {
  Mem m = buffer(1 << 20);
  const cl_uchar one = 0xab;
  const cl_uint four = 0x01020304;
  cl_uint sixteen[4] = {1, 2, 3, 4};
  ASSERT_CL_OK(clEnqueueFillBuffer(queue_, m, &one, 1, 0, 4096, 0, nullptr, nullptr));
  ASSERT_CL_OK(clEnqueueFillBuffer(queue_, m, &four, 4, 4096, 4096, 0, nullptr, nullptr));
  ASSERT_CL_OK(
      clEnqueueFillBuffer(queue_, m, sixteen, 16, 8192, (1 << 20) - 8192, 0, nullptr, nullptr));
  auto bytes = read<cl_uchar>(m, 4096);
  EXPECT_EQ(bytes[17], 0xab);
  auto words = read<cl_uint>(m, (1 << 20) / 4);
  EXPECT_EQ(words[1024 + 5], four);
  for (size_t i = 2048; i < words.size(); i += 331) ASSERT_EQ(words[i], sixteen[i % 4]) << i;
}

TEST_P(Gpu, MapUnmapAllocHostPtrAndUseHostPtr) {
  Program p = build("kernel void inc(global int* x) { x[get_global_id(0)] += 1; }");
  Kernel k = kernel(p, "inc");
  const size_t n = 1 << 20;
  // ALLOC_HOST_PTR: write through a map, run, read through a map.
  Mem m = buffer(n * 4, CL_MEM_ALLOC_HOST_PTR);
  cl_int err = CL_SUCCESS;
  auto* w = static_cast<int*>(clEnqueueMapBuffer(queue_, m, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION,
                                                 0, n * 4, 0, nullptr, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  for (size_t i = 0; i < n; ++i) w[i] = int(i);
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, m, w, 0, nullptr, nullptr));
  arg(k, 0, m.get());
  run(k, n, 256);
  auto* r = static_cast<int*>(
      clEnqueueMapBuffer(queue_, m, CL_TRUE, CL_MAP_READ, 0, n * 4, 0, nullptr, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  for (size_t i = 0; i < n; i += 977) ASSERT_EQ(r[i], int(i) + 1);
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, m, r, 0, nullptr, nullptr));
  // USE_HOST_PTR: the application's memory shows the result once mapped.
  std::vector<int> host(n, 5);
  Mem u = buffer(n * 4, CL_MEM_USE_HOST_PTR, host.data());
  arg(k, 0, u.get());
  run(k, n, 256);
  auto* h = static_cast<int*>(
      clEnqueueMapBuffer(queue_, u, CL_TRUE, CL_MAP_READ, 0, n * 4, 0, nullptr, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  EXPECT_EQ(h, host.data());
  EXPECT_EQ(host[12345], 6);
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, u, h, 0, nullptr, nullptr));
  clFinish(queue_);
}

TEST_P(Gpu, ProfilingAndCallbacks) {
  cl_int err = CL_SUCCESS;
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  Queue q(clCreateCommandQueueWithProperties(context_, device_, props, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Program p = build(
      "kernel void spin(global float* x, int n) { float v = x[get_global_id(0)]; for (int i = 0; i "
      "< n; ++i) v = v * 0.999f + 0.5f; x[get_global_id(0)] = v; }");
  Kernel k = kernel(p, "spin");
  Mem m = buffer(1 << 22);
  ASSERT_CL_OK(clEnqueueFillBuffer(q, m, &err, 4, 0, 1 << 22, 0, nullptr, nullptr));
  arg(k, 0, m.get());
  arg(k, 1, 2000);
  size_t global = 1 << 20;
  Event e;
  ASSERT_CL_OK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, e.out()));
  std::atomic<int> called{0};
  ASSERT_CL_OK(clSetEventCallback(
      e, CL_COMPLETE,
      [](cl_event, cl_int s, void* u) {
        static_cast<std::atomic<int>*>(u)->store(s == CL_COMPLETE ? 1 : -1);
      },
      &called));
  ASSERT_CL_OK(clFlush(q));
  // The callback comes without anybody waiting (the queue's waiter thread sees the GPU finish).
  for (int i = 0; i < 5000 && called.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(called.load(), 1);
  cl_ulong queued = 0, submit = 0, start = 0, end = 0;
  ASSERT_CL_OK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED, 8, &queued, nullptr));
  ASSERT_CL_OK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_SUBMIT, 8, &submit, nullptr));
  ASSERT_CL_OK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, 8, &start, nullptr));
  ASSERT_CL_OK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, 8, &end, nullptr));
  EXPECT_LE(queued, submit);
  EXPECT_LE(submit, start);
  EXPECT_LT(start, end);
  EXPECT_LT(end - start, 5'000'000'000ull);
  std::printf("[ INFO ] kernel time %.1f us (device timestamps)\n", (end - start) / 1e3);
}

TEST_P(Gpu, OutOfOrderQueueWithWaitLists) {
  Queue q(clCreateCommandQueueWithProperties(
      context_, device_,
      std::vector<cl_queue_properties>{CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                                       0}
          .data(),
      nullptr));
  ASSERT_TRUE(q);
  Program p = build("kernel void add(global int* x, int v) { x[get_global_id(0)] += v; }");
  const size_t n = 4096;
  std::vector<Mem> bufs;
  std::vector<Event> last(8);
  std::vector<Kernel> ks;
  int zero = 0;
  for (int b = 0; b < 8; ++b) {
    bufs.push_back(buffer(n * 4));
    ASSERT_CL_OK(clEnqueueFillBuffer(q, bufs[b], &zero, 4, 0, n * 4, 0, nullptr, last[b].out()));
  }
  for (int round = 0; round < 10; ++round)
    for (int b = 0; b < 8; ++b) {
      Kernel k = kernel(p, "add");
      arg(k, 0, bufs[b].get());
      arg(k, 1, round);
      cl_event wait = last[b].get();
      Event next;
      ASSERT_CL_OK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 1, &wait, next.out()));
      last[b] = next;
      ks.push_back(k);
    }
  ASSERT_CL_OK(clFinish(q));
  for (int b = 0; b < 8; ++b) EXPECT_EQ(read<int>(bufs[b], n)[n - 1], 45) << b;
}

TEST_P(Gpu, AllocationFailureLeavesContextUsable) {
  const cl_ulong max_alloc = deviceInfo<cl_ulong>(device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  const cl_ulong total = deviceInfo<cl_ulong>(device_, CL_DEVICE_GLOBAL_MEM_SIZE);
  std::vector<Mem> hogs;
  cl_int failure = CL_SUCCESS;
  // Allocate until the GPU is full: the failing command reports it, nothing else breaks.
  for (cl_ulong used = 0; used <= total + max_alloc && failure == CL_SUCCESS; used += max_alloc) {
    hogs.push_back(buffer(max_alloc));
    cl_uchar z = 0;
    Event e;
    cl_int err = clEnqueueFillBuffer(queue_, hogs.back(), &z, 1, 0, 1, 0, nullptr, e.out());
    if (err != CL_SUCCESS) {
      failure = err;
      break;
    }
    cl_event raw = e.get();
    clWaitForEvents(1, &raw);
    failure = eventStatus(raw) < 0 ? eventStatus(raw) : CL_SUCCESS;
  }
  EXPECT_TRUE(failure == CL_MEM_OBJECT_ALLOCATION_FAILURE || failure == CL_OUT_OF_RESOURCES ||
              failure == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
      << errorName(failure);
  hogs.clear();
  // Still usable.
  Program p = build("kernel void one(global int* x) { x[get_global_id(0)] = 1; }");
  Kernel k = kernel(p, "one");
  Mem m = buffer(64 * 4);
  arg(k, 0, m.get());
  run(k, 64, 64);
  EXPECT_EQ(read<int>(m, 64)[63], 1);
}

TEST_P(Gpu, WorkGroupTooLargeForKernelIsRejected) {
  Program p = build("kernel void k(global int* x) { x[get_global_id(0)] = 0; }");
  Kernel k = kernel(p, "k");
  Mem m = buffer(4096 * 4);
  arg(k, 0, m.get());
  size_t wg = 0;
  ASSERT_CL_OK(
      clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_WORK_GROUP_SIZE, sizeof(wg), &wg, nullptr));
  size_t global = 4096, local = wg * 2;
  // Larger than the kernel allows: CL_INVALID_WORK_GROUP_SIZE, or CL_INVALID_WORK_ITEM_SIZE when it
  // also exceeds CL_DEVICE_MAX_WORK_ITEM_SIZES[0] (the spec allows either check to come first).
  const cl_int err =
      clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, &local, 0, nullptr, nullptr);
  EXPECT_TRUE(err == CL_INVALID_WORK_GROUP_SIZE || err == CL_INVALID_WORK_ITEM_SIZE)
      << errorName(err);
}

// CUDA interop: the application makes another CUDA context current on the thread (or none)
// between its enqueues. Manifold skips the context switch before a launch when the thread made
// its context current itself (CudaDevice::ensure_current): the launches must still run, in
// Manifold's streams, and compute.
TEST_P(Gpu, ApplicationSwitchesCudaContexts) {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);  // Manifold has loaded it
  if (!cuda) GTEST_SKIP() << "libcuda.so.1 is not loaded: not a CUDA device";
  using DeviceGet = int (*)(int*, int);
  using CtxCreate = int (*)(void**, unsigned, int);
  using CtxSetCurrent = int (*)(void*);
  using CtxDestroy = int (*)(void*);
  auto device_get = reinterpret_cast<DeviceGet>(dlsym(cuda, "cuDeviceGet"));
  auto ctx_create = reinterpret_cast<CtxCreate>(dlsym(cuda, "cuCtxCreate_v2"));
  auto ctx_set_current = reinterpret_cast<CtxSetCurrent>(dlsym(cuda, "cuCtxSetCurrent"));
  auto ctx_destroy = reinterpret_cast<CtxDestroy>(dlsym(cuda, "cuCtxDestroy_v2"));
  if (!device_get || !ctx_create || !ctx_set_current || !ctx_destroy)
    GTEST_SKIP() << "the driver lacks cuCtxCreate_v2";

  Program p = build("kernel void add_one(global int* a) { a[get_global_id(0)] += 1; }");
  Kernel k = kernel(p, "add_one");
  const size_t n = 4096;
  std::vector<int> zeros(n, 0);
  Mem m = buffer(n * sizeof(int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, zeros.data());
  arg(k, 0, m.get());
  run(k, n, 256);  // Manifold's context becomes the thread's
  ASSERT_CL_OK(clFinish(queue_));

  int dev = 0;
  // Sub-devices listed in place of their GPU (MANIFOLD_GPU_PARTITION) outnumber CUDA's devices.
  if (device_get(&dev, GetParam()) != 0) GTEST_SKIP() << "no CUDA device of this ordinal";
  void* other = nullptr;
  ASSERT_EQ(0, ctx_create(&other, 0, dev));  // and makes it current
  for (int i = 0; i < 10; ++i) run(k, n, 256);
  ASSERT_CL_OK(clFinish(queue_));
  ASSERT_EQ(0, ctx_set_current(nullptr));
  for (int i = 0; i < 10; ++i) run(k, n, 256);
  ASSERT_CL_OK(clFinish(queue_));
  ASSERT_EQ(0, ctx_set_current(other));
  const std::vector<int> out = read<int>(m, n);
  ctx_destroy(other);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(21, out[i]) << "at " << i;
}

TEST_P(Gpu, BuildTimes) {
  // Cold (a unique source) and cached; printed for the record, limits live in bench/.
  const std::string nonce =
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  const std::string source = "// " + nonce +
                             "\nkernel void saxpy(global float* y, global const float* x, float a) "
                             "{ size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }";
  auto time_build = [&] {
    auto start = std::chrono::steady_clock::now();
    Program p = build(source.c_str());
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  const double cold = time_build(), cached = time_build();
  std::printf("[ INFO ] build: cold %.1f ms, again %.1f ms\n", cold, cached);
}

// Long runs of launches go to the GPU in batches (graph launches, backends/gpu_stream/
// launch_batch.h). Every launch keeps its own arguments, its place in the queue's order and its
// event: an affine map per launch (order matters: they do not commute), arguments that change
// with a period that does not divide the batch (some graph nodes updated, some replayed), two
// kernels and two buffers, and now and then a launch that cannot wait in a batch (an offset).
TEST_P(Gpu, LongRunsOfLaunchesKeepOrderArgumentsAndEvents) {
  Program p = build(R"(
    kernel void affine(global uint* x, uint a, uint b) { x[get_global_id(0)] = x[get_global_id(0)] * a + b; }
    kernel void twice(global uint* x) { x[get_global_id(0)] *= 2u; })");
  Kernel affine = kernel(p, "affine"), twice = kernel(p, "twice");
  const size_t n = 256;
  Mem m[2] = {buffer(n * 4), buffer(n * 4)};
  std::vector<uint32_t> init(n), expect[2];
  std::iota(init.begin(), init.end(), 1u);
  for (int b = 0; b < 2; ++b) {
    ASSERT_CL_OK(
        clEnqueueWriteBuffer(queue_, m[b], CL_TRUE, 0, n * 4, init.data(), 0, nullptr, nullptr));
    expect[b] = init;
  }
  std::vector<Event> events;
  for (int i = 0; i < 3000; ++i) {
    const int b = (i / 7) % 2;
    if (i % 13 == 5) {
      arg(twice, 0, m[b].get());
      run(twice, n);
      for (auto& v : expect[b]) v *= 2u;
    } else {
      const uint32_t a = 3 + 2 * (i % 5), c = i % 11;
      arg(affine, 0, m[b].get());
      arg(affine, 1, a);
      arg(affine, 2, c);
      const size_t offset = i % 101 == 50 ? 16 : 0;  // an offset rewrites the launch state first
      const size_t global = n - offset;
      Event e;
      ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, affine, 1, offset ? &offset : nullptr, &global,
                                          nullptr, 0, nullptr, i % 97 == 0 ? e.out() : nullptr));
      if (e) events.push_back(std::move(e));
      for (size_t j = offset; j < n; ++j) expect[b][j] = expect[b][j] * a + c;
    }
  }
  // Waiting for an event in the middle of the run launches what it needs.
  cl_event middle = events.back().get();
  ASSERT_CL_OK(clWaitForEvents(1, &middle));
  for (auto& e : events) {
    cl_int status = 1;
    ASSERT_CL_OK(
        clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr));
    EXPECT_EQ(status, CL_COMPLETE);
  }
  for (int b = 0; b < 2; ++b) EXPECT_EQ(read<uint32_t>(m[b], n), expect[b]) << "buffer " << b;
}

// A launch that waits in a batch still starts when the application neither enqueues more nor
// flushes (the batch's deadline): after a long pause, clFinish finds the long kernel done.
TEST_P(Gpu, BatchedLaunchStartsWithoutFlush) {
  Program p = build(R"(
    kernel void spin(global uint* x, uint n) {
      uint v = x[get_global_id(0)];
      for (uint i = 0; i < n; ++i) v = v * 1664525u + 1013904223u;
      x[get_global_id(0)] = v;
    })");
  Kernel k = kernel(p, "spin");
  Mem m = buffer(4096);
  const uint32_t zero = 0;
  ASSERT_CL_OK(clEnqueueFillBuffer(queue_, m, &zero, 4, 0, 4096, 0, nullptr, nullptr));
  ASSERT_CL_OK(clFinish(queue_));
  arg(k, 0, m.get());
  using clock = std::chrono::steady_clock;
  auto ms_since = [](clock::time_point t) {
    return std::chrono::duration<double, std::milli>(clock::now() - t).count();
  };
  // A kernel of at least 20 ms (one work-item, a dependent chain).
  uint32_t iterations = 1u << 22;
  double alone = 0;
  for (; iterations < (1u << 31); iterations *= 2) {
    arg(k, 1, iterations);
    const auto t0 = clock::now();
    run(k, 1, 1);
    ASSERT_CL_OK(clFinish(queue_));
    alone = ms_since(t0);
    if (alone > 20) break;
  }
  ASSERT_GT(alone, 20) << "no kernel long enough";
  // The first launch goes straight to the idle stream, the second waits in a batch behind it.
  arg(k, 1, 1u);
  run(k, 1, 1);
  arg(k, 1, iterations);
  run(k, 1, 1);
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(2 * alone + 100));
  const auto t0 = clock::now();
  ASSERT_CL_OK(clFinish(queue_));
  const double finish = ms_since(t0);
  std::printf("[ INFO ] spin kernel %.1f ms alone; clFinish after the pause %.2f ms\n", alone,
              finish);
  EXPECT_LT(finish, alone / 2) << "the batched launch waited for clFinish";
}

// ---- cl_khr_command_buffer: one CUDA graph per command buffer and device ----

struct CommandBufferFns {
  explicit CommandBufferFns(cl_platform_id p) {
#define LOAD(name) \
  name = reinterpret_cast<name##_t*>(clGetExtensionFunctionAddressForPlatform(p, #name))
    LOAD(clCreateCommandBufferKHR);
    LOAD(clCommandNDRangeKernelKHR);
    LOAD(clCommandFillBufferKHR);
    LOAD(clCommandCopyBufferKHR);
    LOAD(clFinalizeCommandBufferKHR);
    LOAD(clEnqueueCommandBufferKHR);
    LOAD(clReleaseCommandBufferKHR);
    LOAD(clUpdateMutableCommandsKHR);
#undef LOAD
  }
  clCreateCommandBufferKHR_t* clCreateCommandBufferKHR;
  clCommandNDRangeKernelKHR_t* clCommandNDRangeKernelKHR;
  clCommandFillBufferKHR_t* clCommandFillBufferKHR;
  clCommandCopyBufferKHR_t* clCommandCopyBufferKHR;
  clFinalizeCommandBufferKHR_t* clFinalizeCommandBufferKHR;
  clEnqueueCommandBufferKHR_t* clEnqueueCommandBufferKHR;
  clReleaseCommandBufferKHR_t* clReleaseCommandBufferKHR;
  clUpdateMutableCommandsKHR_t* clUpdateMutableCommandsKHR;
};

// A fill, 100 kernels and a copy as one graph: every replay computes on the data of its time,
// a mutable update changes later replays; the replay cost per kernel is printed next to plain
// enqueues of the same kernels.
TEST_P(Gpu, CommandBufferReplaysAHundredKernelsAsOneGraph) {
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  CommandBufferFns f(findPlatform());
  ASSERT_NE(f.clUpdateMutableCommandsKHR, nullptr);
  Program p = build("kernel void add(global int* x, int v) { x[get_global_id(0)] += v; }");
  Kernel k = kernel(p, "add");
  const size_t n = 1 << 16;
  Mem work = buffer(n * sizeof(cl_int)), out = buffer(n * sizeof(cl_int));
  arg(k, 0, work.get());
  arg(k, 1, cl_int{1});
  const cl_command_buffer_properties_khr props[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                                    CL_COMMAND_BUFFER_MUTABLE_KHR, 0};
  cl_command_queue q = queue_.get();
  cl_int err = CL_SUCCESS;
  cl_command_buffer_khr cb = f.clCreateCommandBufferKHR(1, &q, props, &err);
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Mem seed = buffer(sizeof(cl_int));
  const cl_int zero = 0;
  ASSERT_CL_OK(f.clCommandFillBufferKHR(cb, nullptr, nullptr, work, &zero, sizeof zero, 0,
                                        n * sizeof(cl_int), 0, nullptr, nullptr, nullptr));
  cl_mutable_command_khr first = nullptr;
  for (int i = 0; i < 100; ++i)
    ASSERT_CL_OK(f.clCommandNDRangeKernelKHR(cb, nullptr, nullptr, k, 1, nullptr, &n, nullptr, 0,
                                             nullptr, nullptr, i ? nullptr : &first));
  ASSERT_CL_OK(f.clCommandCopyBufferKHR(cb, nullptr, nullptr, work, out, 0, 0, n * sizeof(cl_int),
                                        0, nullptr, nullptr, nullptr));
  ASSERT_CL_OK(f.clFinalizeCommandBufferKHR(cb));
  for (int round = 0; round < 3; ++round) {
    ASSERT_CL_OK(f.clEnqueueCommandBufferKHR(0, nullptr, cb, 0, nullptr, nullptr));
    EXPECT_EQ(read<cl_int>(out, n), std::vector<cl_int>(n, 100)) << "round " << round;
  }
  const cl_int big = 1001;
  cl_mutable_dispatch_arg_khr new_arg{1, sizeof big, &big};
  manifold::khr::MutableDispatchConfig config{};
  config.command = first;
  config.num_args = 1;
  config.arg_list = &new_arg;
  const cl_command_buffer_update_type_khr type = CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR;
  const void* configs[] = {&config};
  ASSERT_CL_OK(f.clUpdateMutableCommandsKHR(cb, 1, &type, configs));
  ASSERT_CL_OK(f.clEnqueueCommandBufferKHR(0, nullptr, cb, 0, nullptr, nullptr));
  EXPECT_EQ(read<cl_int>(out, n), std::vector<cl_int>(n, 1100));

  // Replay against plain enqueue, empty-ish kernels (one work-item each).
  ASSERT_CL_OK(
      clEnqueueFillBuffer(queue_, seed, &zero, sizeof zero, 0, sizeof zero, 0, nullptr, nullptr));
  Kernel tiny = kernel(p, "add");
  arg(tiny, 0, seed.get());
  arg(tiny, 1, cl_int{1});
  cl_command_buffer_khr timed = f.clCreateCommandBufferKHR(1, &q, nullptr, &err);
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const size_t one = 1;
  for (int i = 0; i < 100; ++i)
    ASSERT_CL_OK(f.clCommandNDRangeKernelKHR(timed, nullptr, nullptr, tiny, 1, nullptr, &one,
                                             nullptr, 0, nullptr, nullptr, nullptr));
  ASSERT_CL_OK(f.clFinalizeCommandBufferKHR(timed));
  for (int i = 0; i < 3; ++i)
    ASSERT_CL_OK(f.clEnqueueCommandBufferKHR(0, nullptr, timed, 0, nullptr, nullptr));
  ASSERT_CL_OK(clFinish(queue_));
  using clock = std::chrono::steady_clock;
  const int replays = 200;
  auto t0 = clock::now();
  for (int i = 0; i < replays; ++i)
    ASSERT_CL_OK(f.clEnqueueCommandBufferKHR(0, nullptr, timed, 0, nullptr, nullptr));
  ASSERT_CL_OK(clFinish(queue_));
  const double replay_us =
      std::chrono::duration<double, std::micro>(clock::now() - t0).count() / (replays * 100.0);
  t0 = clock::now();
  for (int i = 0; i < replays * 100; ++i) run(tiny, 1, 1);
  ASSERT_CL_OK(clFinish(queue_));
  const double plain_us =
      std::chrono::duration<double, std::micro>(clock::now() - t0).count() / (replays * 100.0);
  std::printf(
      "[ INFO ] 100-kernel command buffer: %.3f us per kernel replayed, %.3f us per "
      "kernel enqueued\n",
      replay_us, plain_us);
  EXPECT_EQ(read<cl_int>(seed, 1)[0], (3 + replays) * 100 + replays * 100);
  ASSERT_CL_OK(f.clReleaseCommandBufferKHR(timed));
  ASSERT_CL_OK(f.clReleaseCommandBufferKHR(cb));
}

// One command buffer over the CPU and this GPU: the GPU's kernel feeds the CPU's through a sync
// point; the scheduler moves the buffer between them on every replay.
TEST_P(Gpu, CommandBufferAcrossCpuAndGpu) {
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  CommandBufferFns f(findPlatform());
  cl_device_id cpu = nullptr;
  ASSERT_CL_OK(clGetDeviceIDs(findPlatform(), CL_DEVICE_TYPE_CPU, 1, &cpu, nullptr));
  cl_device_id both[] = {device_, cpu};
  cl_int err = CL_SUCCESS;
  Context c(clCreateContext(nullptr, 2, both, nullptr, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Queue gq(clCreateCommandQueueWithProperties(c, device_, nullptr, &err));
  Queue cq(clCreateCommandQueueWithProperties(c, cpu, nullptr, &err));
  const char* source = "kernel void add(global int* x, int v) { x[get_global_id(0)] += v; }";
  Program p(clCreateProgramWithSource(c, 1, &source, nullptr, &err));
  ASSERT_CL_OK(clBuildProgram(p, 2, both, nullptr, nullptr, nullptr));
  Kernel on_gpu(clCreateKernel(p, "add", &err)), on_cpu(clCreateKernel(p, "add", &err));
  const size_t n = 1 << 16;
  Mem m(clCreateBuffer(c, CL_MEM_READ_WRITE, n * sizeof(cl_int), nullptr, &err));
  for (cl_kernel k : {on_gpu.get(), on_cpu.get()}) {
    cl_mem mem = m.get();
    ASSERT_CL_OK(clSetKernelArg(k, 0, sizeof mem, &mem));
  }
  const cl_int ten = 10, three = 3;
  ASSERT_CL_OK(clSetKernelArg(on_gpu, 1, sizeof ten, &ten));
  ASSERT_CL_OK(clSetKernelArg(on_cpu, 1, sizeof three, &three));
  cl_command_queue queues[] = {gq.get(), cq.get()};
  // Not natively synchronized across backends: the device-side-sync flag is refused.
  const cl_command_buffer_properties_khr device_side[] = {
      CL_COMMAND_BUFFER_FLAGS_KHR, CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR, 0};
  EXPECT_EQ(f.clCreateCommandBufferKHR(2, queues, device_side, &err), nullptr);
  EXPECT_EQ(Err(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR), Err(err));
  cl_command_buffer_khr cb = f.clCreateCommandBufferKHR(2, queues, nullptr, &err);
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  cl_sync_point_khr gpu_done = 0;
  ASSERT_CL_OK(f.clCommandNDRangeKernelKHR(cb, gq, nullptr, on_gpu, 1, nullptr, &n, nullptr, 0,
                                           nullptr, &gpu_done, nullptr));
  ASSERT_CL_OK(f.clCommandNDRangeKernelKHR(cb, cq, nullptr, on_cpu, 1, nullptr, &n, nullptr, 1,
                                           &gpu_done, nullptr, nullptr));
  ASSERT_CL_OK(f.clFinalizeCommandBufferKHR(cb));
  for (int round = 0; round < 4; ++round) {
    std::vector<cl_int> host(n);
    std::iota(host.begin(), host.end(), round * 5);
    ASSERT_CL_OK(clEnqueueWriteBuffer(gq, m, CL_TRUE, 0, n * sizeof(cl_int), host.data(), 0,
                                      nullptr, nullptr));
    Event done;
    ASSERT_CL_OK(f.clEnqueueCommandBufferKHR(0, nullptr, cb, 0, nullptr, done.out()));
    std::vector<cl_int> got(n);
    cl_event wait = done.get();
    ASSERT_CL_OK(
        clEnqueueReadBuffer(gq, m, CL_TRUE, 0, n * sizeof(cl_int), got.data(), 1, &wait, nullptr));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], host[i] + 13) << "round " << round;
  }
  ASSERT_CL_OK(f.clReleaseCommandBufferKHR(cb));
}

// One instance per GPU the platform lists (one, skipped, where there is none).
INSTANTIATE_TEST_SUITE_P(
    Devices, Gpu, ::testing::Range(0, std::max<int>(1, static_cast<int>(gpu_devices().size()))),
    [](const ::testing::TestParamInfo<int>& info) { return "gpu" + std::to_string(info.param); });

}  // namespace
