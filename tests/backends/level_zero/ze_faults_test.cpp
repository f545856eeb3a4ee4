// The Level Zero backend's error paths and device-side waits, over the test driver
// (ze_test_driver_controls.h): a module the driver rejects, device memory running out, a device
// lost while a kernel runs, waits between queues made on the device, and a refused launch failing
// the commands of other queues that wait for it there.
#include <CL/cl.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakes/level_zero/ze_test_driver_controls.h"
#include "ze_test_devices.h"

namespace {

// A symbol of the test driver the loader has loaded (ZE_ENABLE_ALT_DRIVERS).
void* driver_symbol(const char* name) {
  const char* path = std::getenv("ZE_ENABLE_ALT_DRIVERS");
  if (!path) return nullptr;
  void* library = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  return library ? dlsym(library, name) : nullptr;
}

class LevelZeroFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    device = ze_test::find_device(true);
    ASSERT_NE(device, nullptr) << "the test driver's device (ZE_ENABLE_ALT_DRIVERS)";
    inject = reinterpret_cast<ze_test::InjectFault>(driver_symbol(ze_test::kInjectFaultSymbol));
    ASSERT_NE(inject, nullptr) << "the test driver exports " << ze_test::kInjectFaultSymbol;
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

  cl_program build(const char* source, cl_int* status) {
    cl_int error = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
    EXPECT_EQ(error, CL_SUCCESS);
    *status = clBuildProgram(program, 1, &device, nullptr, nullptr, nullptr);
    return program;
  }
  std::string log(cl_program program) {
    size_t size = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string text(size, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, text.data(), nullptr);
    return text;
  }
  // Runs `fill(buffer, value)` over n ints and returns the buffer's contents.
  std::vector<int> fill_with_kernel(size_t n, int value) {
    cl_int status = CL_SUCCESS;
    cl_program program =
        build("kernel void fill(global int* p, int v) { p[get_global_id(0)] = v; }", &status);
    EXPECT_EQ(status, CL_SUCCESS) << log(program);
    cl_kernel kernel = clCreateKernel(program, "fill", &status);
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(int), nullptr, &status);
    clSetKernelArg(kernel, 0, sizeof buffer, &buffer);
    clSetKernelArg(kernel, 1, sizeof value, &value);
    EXPECT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &n, nullptr, 0, nullptr, nullptr),
              CL_SUCCESS);
    std::vector<int> out(n, -1);
    EXPECT_EQ(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, n * sizeof(int), out.data(), 0,
                                  nullptr, nullptr),
              CL_SUCCESS);
    clReleaseMemObject(buffer);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    return out;
  }

  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  ze_test::InjectFault inject = nullptr;
};

// zeModuleCreate fails: the build fails with the driver's log in the program's build log, and
// the next build of the same source (from the program cache) loads.
TEST_F(LevelZeroFaults, RejectedModuleFailsTheBuildWithTheDriversLog) {
  const char* source = "kernel void k(global int* p) { p[get_global_id(0)] = 7; }";
  inject(ze_test::kFaultRejectModules, 1);
  cl_int status = CL_SUCCESS;
  cl_program rejected = build(source, &status);
  EXPECT_EQ(status, CL_BUILD_PROGRAM_FAILURE);
  const std::string text = log(rejected);
  EXPECT_NE(text.find("module rejected (injected fault)"), std::string::npos) << text;
  EXPECT_NE(text.find("ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"), std::string::npos) << text;
  cl_build_status build_status = CL_BUILD_NONE;
  clGetProgramBuildInfo(rejected, device, CL_PROGRAM_BUILD_STATUS, sizeof build_status,
                        &build_status, nullptr);
  EXPECT_EQ(build_status, CL_BUILD_ERROR);
  clReleaseProgram(rejected);
  cl_program accepted = build(source, &status);
  EXPECT_EQ(status, CL_SUCCESS) << log(accepted);
  clReleaseProgram(accepted);
}

// zeMemAllocDevice fails: the command that needed the memory fails with
// CL_MEM_OBJECT_ALLOCATION_FAILURE, the queue and the context stay usable.
TEST_F(LevelZeroFaults, OutOfDeviceMemoryFailsTheCommandOnly) {
  cl_int error = CL_SUCCESS;
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  inject(ze_test::kFaultOutOfDeviceMemory, 1);
  const int pattern = 5;
  cl_event event = nullptr;
  error = clEnqueueFillBuffer(queue, buffer, &pattern, sizeof pattern, 0, 4096, 0, nullptr, &event);
  if (error == CL_SUCCESS) {
    clWaitForEvents(1, &event);
    cl_int status = CL_COMPLETE;
    clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    EXPECT_EQ(status, CL_MEM_OBJECT_ALLOCATION_FAILURE);
    clReleaseEvent(event);
  } else {
    EXPECT_EQ(error, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  }
  clReleaseMemObject(buffer);
  EXPECT_EQ(fill_with_kernel(256, 9), std::vector<int>(256, 9));
}

// The first use of a buffer on the device needs its memory there, and the allocation is refused:
// that command fails with CL_MEM_OBJECT_ALLOCATION_FAILURE, a command of another queue of the
// device that waits for it fails with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST (it must not
// run on the strength of a wait made on the device), and the buffer keeps its bytes: the device
// is not taken for the place that holds them.
TEST_F(LevelZeroFaults, RefusedAllocationFailsWhatWaitsAndKeepsTheBytes) {
  cl_int error = CL_SUCCESS;
  cl_command_queue other = clCreateCommandQueueWithProperties(context, device, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  std::vector<int> original(256), waiting(256);
  for (int i = 0; i < 256; ++i) original[i] = 3 * i + 1, waiting[i] = 7 * i;
  const size_t bytes = 256 * sizeof(int);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                                 original.data(), &error);
  ASSERT_EQ(error, CL_SUCCESS);
  cl_mem second = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                                 waiting.data(), &error);
  ASSERT_EQ(error, CL_SUCCESS);
  std::vector<int> out(256, -1);
  // `second` has its memory on the device already: the refused allocation is `buffer`'s.
  ASSERT_EQ(clEnqueueReadBuffer(other, second, CL_TRUE, 0, bytes, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  cl_event gate = clCreateUserEvent(context, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  inject(ze_test::kFaultOutOfDeviceMemory, 1);
  const int pattern = 5;
  cl_event filled = nullptr, dependent = nullptr;
  ASSERT_EQ(
      clEnqueueFillBuffer(queue, buffer, &pattern, sizeof pattern, 0, bytes, 1, &gate, &filled),
      CL_SUCCESS);
  ASSERT_EQ(clEnqueueFillBuffer(other, second, &pattern, sizeof pattern, 0, bytes, 1, &filled,
                                &dependent),
            CL_SUCCESS);
  clFlush(queue);
  clFlush(other);
  ASSERT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  clWaitForEvents(1, &dependent);
  clWaitForEvents(1, &filled);
  inject(ze_test::kFaultOutOfDeviceMemory, 0);
  cl_int status = CL_COMPLETE;
  clGetEventInfo(filled, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  EXPECT_EQ(status, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  clGetEventInfo(dependent, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  EXPECT_EQ(status, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  ASSERT_EQ(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, bytes, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(out, original);
  ASSERT_EQ(clEnqueueReadBuffer(other, second, CL_TRUE, 0, bytes, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(out, waiting);
  clReleaseEvent(filled);
  clReleaseEvent(dependent);
  clReleaseEvent(gate);
  clReleaseMemObject(buffer);
  clReleaseMemObject(second);
  clReleaseCommandQueue(other);
}

// A job on one queue waits for a job on another queue of the device on the device: the driver
// sees the wait list, and the order holds. The first job is held back by a user event, so the
// second is enqueued before the first reaches its queue, and runs long enough to be in flight
// when the second's dependency resolves (were it complete already, no wait would be needed).
TEST_F(LevelZeroFaults, WaitsBetweenQueuesAreMadeOnTheDevice) {
  auto waits_appended =
      reinterpret_cast<ze_test::WaitsAppended>(driver_symbol(ze_test::kWaitsAppendedSymbol));
  ASSERT_NE(waits_appended, nullptr);
  cl_int error = CL_SUCCESS;
  cl_command_queue other = clCreateCommandQueueWithProperties(context, device, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  cl_int status = CL_SUCCESS;
  cl_program program = build(R"(
      kernel void fill(global int* p, int v) {
        uint x = (uint)get_global_id(0) + 1;  // xorshift: no closed form for the optimizer
        for (int i = 0; i < 5000000; ++i) x ^= (x << 13) ^ (x >> 7) ^ (uint)i;
        p[get_global_id(0)] = v + (x == 0x12345u && v == -7);
      }
      kernel void add_one(global const int* in, global int* out) {
        out[get_global_id(0)] = in[get_global_id(0)] + 1;
      })",
                             &status);
  ASSERT_EQ(status, CL_SUCCESS) << log(program);
  cl_kernel fill = clCreateKernel(program, "fill", &error);
  cl_kernel add = clCreateKernel(program, "add_one", &error);
  const size_t n = 64;
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(int), nullptr, &error);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(int), nullptr, &error);
  // Both buffers live on the device before the measured commands (no migration between them).
  const int zero = 0;
  clEnqueueFillBuffer(queue, a, &zero, sizeof zero, 0, n * sizeof(int), 0, nullptr, nullptr);
  clEnqueueFillBuffer(other, b, &zero, sizeof zero, 0, n * sizeof(int), 0, nullptr, nullptr);
  clFinish(queue);
  clFinish(other);
  const unsigned long before = waits_appended();
  const int value = 41;
  clSetKernelArg(fill, 0, sizeof a, &a);
  clSetKernelArg(fill, 1, sizeof value, &value);
  clSetKernelArg(add, 0, sizeof a, &a);
  clSetKernelArg(add, 1, sizeof b, &b);
  cl_event gate = clCreateUserEvent(context, &error);
  cl_event filled = nullptr;
  ASSERT_EQ(clEnqueueNDRangeKernel(queue, fill, 1, nullptr, &n, nullptr, 1, &gate, &filled),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(other, add, 1, nullptr, &n, nullptr, 1, &filled, nullptr),
            CL_SUCCESS);
  clFlush(other);
  ASSERT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  std::vector<int> out(n, -1);
  ASSERT_EQ(
      clEnqueueReadBuffer(other, b, CL_TRUE, 0, n * sizeof(int), out.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(out, std::vector<int>(n, 42));
  EXPECT_GT(waits_appended(), before) << "the dependency was resolved on the host";
  clReleaseEvent(gate);
  clReleaseEvent(filled);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(fill);
  clReleaseKernel(add);
  clReleaseProgram(program);
  clReleaseCommandQueue(other);
}

// A launch the driver refuses fails on its queue's worker, after the command entered its queue;
// a command of another queue that lists it was released then (its wait is made on the device)
// and must fail too, leaving its output as it was, not run after the failure.
TEST_F(LevelZeroFaults, RefusedLaunchFailsTheCommandsWaitingForItOnTheDevice) {
  cl_int error = CL_SUCCESS;
  cl_command_queue other = clCreateCommandQueueWithProperties(context, device, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  cl_int status = CL_SUCCESS;
  cl_program program = build(R"(
      kernel void fill(global int* p, int v) { p[get_global_id(0)] = v; }
      kernel void add_one(global const int* in, global int* out) {
        out[get_global_id(0)] = in[get_global_id(0)] + 1;
      })",
                             &status);
  ASSERT_EQ(status, CL_SUCCESS) << log(program);
  cl_kernel fill = clCreateKernel(program, "fill", &error);
  cl_kernel add = clCreateKernel(program, "add_one", &error);
  const size_t n = 64;
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(int), nullptr, &error);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(int), nullptr, &error);
  const int zero = 0, value = 41;
  clEnqueueFillBuffer(queue, a, &zero, sizeof zero, 0, n * sizeof(int), 0, nullptr, nullptr);
  clEnqueueFillBuffer(other, b, &zero, sizeof zero, 0, n * sizeof(int), 0, nullptr, nullptr);
  clFinish(queue);
  clFinish(other);
  clSetKernelArg(fill, 0, sizeof a, &a);
  clSetKernelArg(fill, 1, sizeof value, &value);
  clSetKernelArg(add, 0, sizeof a, &a);
  clSetKernelArg(add, 1, sizeof b, &b);
  cl_event gate = clCreateUserEvent(context, &error);
  cl_event filled = nullptr, added = nullptr;
  ASSERT_EQ(clEnqueueNDRangeKernel(queue, fill, 1, nullptr, &n, nullptr, 1, &gate, &filled),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(other, add, 1, nullptr, &n, nullptr, 1, &filled, &added),
            CL_SUCCESS);
  clFlush(other);
  inject(ze_test::kFaultRefuseLaunches, 1);
  ASSERT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  clWaitForEvents(1, &added);
  clWaitForEvents(1, &filled);
  inject(ze_test::kFaultRefuseLaunches, 0);
  clGetEventInfo(filled, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  EXPECT_LT(status, 0) << "the refused launch";
  clGetEventInfo(added, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  EXPECT_EQ(status, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  std::vector<int> out(n, -1);
  ASSERT_EQ(
      clEnqueueReadBuffer(other, b, CL_TRUE, 0, n * sizeof(int), out.data(), 0, nullptr, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(out, std::vector<int>(n, 0)) << "the dependent ran after the failure";
  clReleaseEvent(gate);
  clReleaseEvent(filled);
  clReleaseEvent(added);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(fill);
  clReleaseKernel(add);
  clReleaseProgram(program);
  clReleaseCommandQueue(other);
}

// The device is lost while a kernel runs: that command and every later one fail, nothing hangs,
// and the CPU device of the same process keeps working. Last in this file: the loss is final.
TEST_F(LevelZeroFaults, LostDeviceFailsItsCommandsAndLeavesTheProcessAlive) {
  cl_int status = CL_SUCCESS;
  cl_program program = build(R"(
      kernel void spin(global uint* p) {
        uint x = (uint)get_global_id(0) + 1;
        // Long enough to be running when the loss comes 20 ms in, on every core count (its
        // 16 work-items may run as groups on several threads).
        for (int i = 0; i < 400000000; ++i) x ^= (x << 13) ^ (x >> 7) ^ (uint)i;
        p[get_global_id(0)] = x;
      })",
                             &status);
  ASSERT_EQ(status, CL_SUCCESS) << log(program);
  cl_int error = CL_SUCCESS;
  cl_kernel spin = clCreateKernel(program, "spin", &error);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(int), nullptr, &error);
  clSetKernelArg(spin, 0, sizeof buffer, &buffer);
  const size_t n = 16;
  cl_event running = nullptr;
  ASSERT_EQ(clEnqueueNDRangeKernel(queue, spin, 1, nullptr, &n, nullptr, 0, nullptr, &running),
            CL_SUCCESS);
  clFlush(queue);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  inject(ze_test::kFaultDeviceLost, 1);
  clWaitForEvents(1, &running);
  cl_int running_status = CL_COMPLETE;
  clGetEventInfo(running, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof running_status, &running_status,
                 nullptr);
  EXPECT_LT(running_status, 0) << "the kernel of the lost device completed";
  clReleaseEvent(running);
  // Later commands fail at once.
  cl_event later = nullptr;
  const int pattern = 1;
  error = clEnqueueFillBuffer(queue, buffer, &pattern, sizeof pattern, 0, sizeof pattern, 0,
                              nullptr, &later);
  if (error == CL_SUCCESS) {
    clWaitForEvents(1, &later);
    cl_int later_status = CL_COMPLETE;
    clGetEventInfo(later, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof later_status, &later_status,
                   nullptr);
    EXPECT_LT(later_status, 0);
    clReleaseEvent(later);
  }
  clFinish(queue);
  clReleaseMemObject(buffer);
  clReleaseKernel(spin);
  clReleaseProgram(program);

  // The CPU device is unaffected.
  cl_device_id cpu = ze_test::find_device(false);
  ASSERT_NE(cpu, nullptr);
  cl_context cpu_context = clCreateContext(nullptr, 1, &cpu, nullptr, nullptr, &error);
  cl_command_queue cpu_queue =
      clCreateCommandQueueWithProperties(cpu_context, cpu, nullptr, &error);
  cl_mem m = clCreateBuffer(cpu_context, CL_MEM_READ_WRITE, sizeof(int), nullptr, &error);
  const int seven = 7;
  int back = 0;
  EXPECT_EQ(
      clEnqueueWriteBuffer(cpu_queue, m, CL_TRUE, 0, sizeof seven, &seven, 0, nullptr, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(clEnqueueReadBuffer(cpu_queue, m, CL_TRUE, 0, sizeof back, &back, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(back, 7);
  clReleaseMemObject(m);
  clReleaseCommandQueue(cpu_queue);
  clReleaseContext(cpu_context);
}

}  // namespace
