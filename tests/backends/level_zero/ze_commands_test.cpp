// Commands on the Level Zero backend's device, through the real loader and the test driver
// (ze_test_driver_commands.cpp: host memory, immediate lists run at once, kernels through
// Manifold's SPIR-V reader and CPU pipeline): buffer transfers, fills, a kernel built by the
// SPIR-V pipeline, and a buffer shared with the CPU device in one context.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "ze_test_devices.h"

namespace {

using ze_test::device_text;
using ze_test::find_device;

class LevelZeroCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    device = find_device(true);
    ASSERT_NE(device, nullptr) << "the test driver's device (ZE_ENABLE_ALT_DRIVERS)";
    cl_int error = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error);
    ASSERT_EQ(error, CL_SUCCESS);
    queue = clCreateCommandQueueWithProperties(context, device, nullptr, &error);
    ASSERT_EQ(error, CL_SUCCESS);
  }
  void TearDown() override {
    if (queue) clReleaseCommandQueue(queue);
    if (context) clReleaseContext(context);
  }
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
};

TEST_F(LevelZeroCommands, BufferWriteReadRoundTrip) {
  constexpr size_t n = 4096;
  std::vector<int> in(n), out(n, -1);
  for (size_t i = 0; i < n; ++i) in[i] = int(i * 7 + 3);
  cl_int error = CL_SUCCESS;
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(int), nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(int), nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  ASSERT_EQ(
      clEnqueueWriteBuffer(queue, a, CL_FALSE, 0, n * sizeof(int), in.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  // Device to device, then a fill over the second half, then back to the host.
  ASSERT_EQ(clEnqueueCopyBuffer(queue, a, b, 0, 0, n * sizeof(int), 0, nullptr, nullptr),
            CL_SUCCESS);
  const int pattern = -5;
  ASSERT_EQ(clEnqueueFillBuffer(queue, b, &pattern, sizeof pattern, n / 2 * sizeof(int),
                                n / 2 * sizeof(int), 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(
      clEnqueueReadBuffer(queue, b, CL_TRUE, 0, n * sizeof(int), out.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], i < n / 2 ? in[i] : pattern) << "at " << i;
  clReleaseMemObject(a);
  clReleaseMemObject(b);
}

const char* kVectorAdd = R"(
kernel void vector_add(global const float* a, global const float* b, global float* c,
                       float scale, local float* scratch) {
  size_t i = get_global_id(0);
  scratch[get_local_id(0)] = a[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  c[i] = scratch[get_local_id(0)] + scale * b[i];
})";

TEST_F(LevelZeroCommands, VectorAddMatchesTheHost) {
  cl_int error = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context, 1, &kVectorAdd, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  error = clBuildProgram(program, 1, &device, "", nullptr, nullptr);
  if (error != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    FAIL() << "build: " << error << "\n" << log;
  }
  cl_kernel kernel = clCreateKernel(program, "vector_add", &error);
  ASSERT_EQ(error, CL_SUCCESS);
  constexpr size_t n = 1024, local = 64;
  std::vector<float> a(n), b(n), c(n, 0.0f);
  for (size_t i = 0; i < n; ++i) a[i] = float(i) * 0.5f, b[i] = float(n - i);
  const float scale = 3.0f;
  cl_mem da = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * 4, a.data(), &error);
  cl_mem db = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * 4, b.data(), &error);
  cl_mem dc = clCreateBuffer(context, CL_MEM_WRITE_ONLY, n * 4, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  clSetKernelArg(kernel, 0, sizeof da, &da);
  clSetKernelArg(kernel, 1, sizeof db, &db);
  clSetKernelArg(kernel, 2, sizeof dc, &dc);
  clSetKernelArg(kernel, 3, sizeof scale, &scale);
  ASSERT_EQ(clSetKernelArg(kernel, 4, local * sizeof(float), nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &n, &local, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, n * 4, c.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + scale * b[i]) << "at " << i;
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
}

// Program-scope variables with initializers, one a pointer to an array element (&a[1]): LLVM's
// SPIR-V backend wrote that initializer as indices into the array's type rather than the byte
// offset it meant (&a[2] of a uchar2 array), and the kernel wrote outside the array (CTS basic
// progvar_prog_scope_init).
TEST_F(LevelZeroCommands, ProgramScopePointerToAnArrayElement) {
  cl_int error = CL_SUCCESS;
  const char* source = R"CL(
global uchar2 before = (uchar2)(3, 4);
global uchar2 table[2] = { (uchar2)(5, 6), (uchar2)(7, 8) };
global uchar2 after = (uchar2)(9, 10);
global uchar2* second = &table[1];
kernel void move(uint index) { second = table + index; }  // `second` stays a variable
kernel void touch(global uchar2* out, uchar2 value) {
  out[0] = *second;
  *second = value;
  out[1] = before;
  out[2] = table[0];
  out[3] = table[1];
  out[4] = after;
})CL";
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
  ASSERT_EQ(clBuildProgram(program, 1, &device, "-cl-std=CL2.0", nullptr, nullptr), CL_SUCCESS);
  cl_kernel kernel = clCreateKernel(program, "touch", &error);
  ASSERT_EQ(error, CL_SUCCESS);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 10, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  const cl_uchar2 value = {{42, 43}};
  ASSERT_EQ(clSetKernelArg(kernel, 0, sizeof out, &out), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(kernel, 1, sizeof value, &value), CL_SUCCESS);
  const size_t one = 1;
  ASSERT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &one, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  std::vector<unsigned char> bytes(10, 0);
  ASSERT_EQ(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, 10, bytes.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(bytes, (std::vector<unsigned char>{7, 8, 3, 4, 5, 6, 42, 43, 9, 10}));
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
}

// A global offset (zeKernelSetGlobalOffsetExp), then a launch without one on the same kernel:
// the offset is not left behind.
TEST_F(LevelZeroCommands, GlobalOffsetShiftsTheIds) {
  cl_int error = CL_SUCCESS;
  const char* source = "kernel void set(global int* out, int v) { out[get_global_id(0)] = v; }";
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
  ASSERT_EQ(clBuildProgram(program, 1, &device, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel kernel = clCreateKernel(program, "set", &error);
  ASSERT_EQ(error, CL_SUCCESS);
  constexpr size_t n = 64;
  const std::vector<int> zeros(n, 0);
  cl_mem out = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * sizeof(int),
                              const_cast<int*>(zeros.data()), &error);
  ASSERT_EQ(error, CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(kernel, 0, sizeof out, &out), CL_SUCCESS);
  const size_t offset = 24, global = 16, local = 8;
  const int shifted = 7, plain = 3;
  ASSERT_EQ(clSetKernelArg(kernel, 1, sizeof shifted, &shifted), CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, &offset, &global, &local, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(kernel, 1, sizeof plain, &plain), CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &local, &local, 0, nullptr, nullptr),
            CL_SUCCESS);
  std::vector<int> values(n, -1);
  ASSERT_EQ(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, n * sizeof(int), values.data(), 0, nullptr,
                                nullptr),
            CL_SUCCESS);
  for (size_t i = 0; i < n; ++i)
    EXPECT_EQ(values[i], i < local                            ? plain
                         : i >= offset && i < offset + global ? shifted
                                                              : 0)
        << "at " << i;
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
}

// Not supported yet: the command fails with a clear status, nothing crashes, the queue goes on.
TEST_F(LevelZeroCommands, NonUniformGroupsAreRefused) {
  cl_int error = CL_SUCCESS;
  const char* source = "kernel void set(global int* out) { out[get_global_id(0)] = 1; }";
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
  ASSERT_EQ(clBuildProgram(program, 1, &device, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel kernel = clCreateKernel(program, "set", &error);
  ASSERT_EQ(error, CL_SUCCESS);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(int), nullptr, &error);
  ASSERT_EQ(clSetKernelArg(kernel, 0, sizeof out, &out), CL_SUCCESS);
  const size_t global = 20, local = 8;
  EXPECT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
            CL_INVALID_WORK_GROUP_SIZE);
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
}

// A kernel's results read through a mapping, changed there, and seen by the next launch.
TEST_F(LevelZeroCommands, MapSeesTheDevicesBytes) {
  cl_int error = CL_SUCCESS;
  const char* source = "kernel void twice(global int* x) { x[get_global_id(0)] *= 2; }";
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
  ASSERT_EQ(clBuildProgram(program, 1, &device, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel kernel = clCreateKernel(program, "twice", &error);
  constexpr size_t n = 256, local = 32;
  std::vector<int> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = int(i);
  cl_mem x = clCreateBuffer(context, CL_MEM_USE_HOST_PTR, n * sizeof(int), host.data(), &error);
  ASSERT_EQ(error, CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(kernel, 0, sizeof x, &x), CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &n, &local, 0, nullptr, nullptr),
            CL_SUCCESS);
  auto* mapped =
      static_cast<int*>(clEnqueueMapBuffer(queue, x, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                           n * sizeof(int), 0, nullptr, nullptr, &error));
  ASSERT_EQ(error, CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(mapped[i], 2 * int(i)) << "at " << i;
  mapped[5] = 1000;
  ASSERT_EQ(clEnqueueUnmapMemObject(queue, x, mapped, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &n, &local, 0, nullptr, nullptr),
            CL_SUCCESS);
  std::vector<int> out(n);
  ASSERT_EQ(
      clEnqueueReadBuffer(queue, x, CL_TRUE, 0, n * sizeof(int), out.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], i == 5 ? 2000 : 4 * int(i)) << "at " << i;
  clReleaseMemObject(x);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
}

// Two queues of the device fed from two threads launch clones of one kernel concurrently: the
// clones share one Level Zero kernel, whose argument state each launch sets under its lock.
TEST_F(LevelZeroCommands, QueuesRunConcurrently) {
  cl_int error = CL_SUCCESS;
  const char* source = "kernel void add(global int* x, int v) { x[get_global_id(0)] += v; }";
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
  ASSERT_EQ(clBuildProgram(program, 1, &device, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel kernel = clCreateKernel(program, "add", &error);
  ASSERT_EQ(error, CL_SUCCESS);
  constexpr size_t n = 512, local = 64;
  constexpr int rounds = 20;
  const auto run = [&](int value, std::vector<int>* result) {
    cl_int e = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueueWithProperties(context, device, nullptr, &e);
    cl_kernel k = clCloneKernel(kernel, &e);
    const std::vector<int> zeros(n, 0);
    cl_mem x = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * sizeof(int),
                              const_cast<int*>(zeros.data()), &e);
    clSetKernelArg(k, 0, sizeof x, &x);
    clSetKernelArg(k, 1, sizeof value, &value);
    for (int r = 0; r < rounds; ++r)
      clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, &local, 0, nullptr, nullptr);
    result->assign(n, -1);
    clEnqueueReadBuffer(q, x, CL_TRUE, 0, n * sizeof(int), result->data(), 0, nullptr, nullptr);
    clReleaseMemObject(x);
    clReleaseKernel(k);
    clReleaseCommandQueue(q);
  };
  std::vector<int> first, second;
  std::thread a(run, 1, &first), b(run, 3, &second);
  a.join();
  b.join();
  ASSERT_EQ(first.size(), n);
  ASSERT_EQ(second.size(), n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(first[i], rounds) << "at " << i;
    ASSERT_EQ(second[i], 3 * rounds) << "at " << i;
  }
  clReleaseKernel(kernel);
  clReleaseProgram(program);
}

TEST(LevelZeroWithCpu, ContextSharesABuffer) {
  cl_device_id devices[2] = {find_device(true), find_device(false)};
  ASSERT_NE(devices[0], nullptr);
  ASSERT_NE(devices[1], nullptr);
  cl_int error = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 2, devices, nullptr, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  cl_command_queue ze = clCreateCommandQueueWithProperties(context, devices[0], nullptr, &error);
  cl_command_queue cpu = clCreateCommandQueueWithProperties(context, devices[1], nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  constexpr size_t n = 1000;
  std::vector<unsigned> in(n), out(n, 0);
  for (size_t i = 0; i < n; ++i) in[i] = unsigned(i * i);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, n * 4, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  // Written on the Level Zero device, partly overwritten on the CPU, read back from the GPU:
  // the bytes move both ways.
  cl_event written = nullptr, filled = nullptr;
  ASSERT_EQ(clEnqueueWriteBuffer(ze, buffer, CL_FALSE, 0, n * 4, in.data(), 0, nullptr, &written),
            CL_SUCCESS);
  const unsigned pattern = 0xabcdef01u;
  ASSERT_EQ(clEnqueueFillBuffer(cpu, buffer, &pattern, 4, 0, 100 * 4, 1, &written, &filled),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(ze, buffer, CL_TRUE, 0, n * 4, out.data(), 1, &filled, nullptr),
            CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], i < 100 ? pattern : in[i]) << "at " << i;
  clReleaseEvent(written);
  clReleaseEvent(filled);
  clReleaseMemObject(buffer);
  clReleaseCommandQueue(ze);
  clReleaseCommandQueue(cpu);
  clReleaseContext(context);
}

}  // namespace
