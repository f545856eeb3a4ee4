// clCreateCommandQueue, clCreateCommandQueueWithProperties (in-order, out-of-order, profiling,
// property validation), clGetCommandQueueInfo, retain/release, clFlush, clFinish.
#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "cl_test.h"
// After cl_test.h, which chooses the OpenCL version of the headers.
#include <CL/cl_manifold.h>

using namespace cltest;

namespace {

class QueueApi : public ContextTest {};

TEST_F(QueueApi, LegacyCreateEveryValidCombination) {
  for (cl_command_queue_properties p :
       {cl_command_queue_properties(0), cl_command_queue_properties(CL_QUEUE_PROFILING_ENABLE),
        cl_command_queue_properties(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE),
        cl_command_queue_properties(CL_QUEUE_PROFILING_ENABLE |
                                    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)}) {
    if ((p & caps_.hostQueueProps) != p) continue;
    cl_int err = -1;
    Queue q(clCreateCommandQueue(context_, device_, p, &err));
    ASSERT_ERR(CL_SUCCESS, err) << "properties 0x" << std::hex << p;
    EXPECT_EQ(p, queueInfo<cl_command_queue_properties>(q, CL_QUEUE_PROPERTIES));
    // A queue made by clCreateCommandQueue has no property array.
    size_t size = 99;
    EXPECT_CL_OK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, 0, nullptr, &size));
    EXPECT_EQ(0u, size);
  }
}

TEST_F(QueueApi, DeviceSupportsOutOfOrderAndProfiling) {
  // The spec (3.0): the mandated minimum capability is CL_QUEUE_PROFILING_ENABLE; Manifold's
  // CPU device also offers out-of-order queues.
  EXPECT_TRUE(caps_.hostQueueProps & CL_QUEUE_PROFILING_ENABLE);
  EXPECT_TRUE(caps_.hostQueueProps & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
}

TEST_F(QueueApi, LegacyCreateInvalid) {
  cl_int err = CL_SUCCESS;
  // The spec: CL_INVALID_VALUE if values specified in properties are not valid.
  EXPECT_EQ(nullptr,
            clCreateCommandQueue(context_, device_, cl_command_queue_properties(1) << 20, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  EXPECT_EQ(nullptr, clCreateCommandQueue(nullptr, device_, 0, &err));
  EXPECT_ERR(CL_INVALID_CONTEXT, err);
  EXPECT_EQ(nullptr, clCreateCommandQueue(context_, nullptr, 0, &err));
  EXPECT_ERR(CL_INVALID_DEVICE, err);
}

TEST_F(QueueApi, WithPropertiesNullEmptyAndFull) {
  cl_int err = -1;
  Queue a(clCreateCommandQueueWithProperties(context_, device_, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(0u, queueInfo<cl_command_queue_properties>(a, CL_QUEUE_PROPERTIES));
  size_t size = 99;
  EXPECT_CL_OK(clGetCommandQueueInfo(a, CL_QUEUE_PROPERTIES_ARRAY, 0, nullptr, &size));
  EXPECT_EQ(0u, size);

  cl_queue_properties empty[] = {0};
  Queue b(clCreateCommandQueueWithProperties(context_, device_, empty, &err));
  ASSERT_ERR(CL_SUCCESS, err);

  cl_queue_properties full[] = {
      CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  Queue c(clCreateCommandQueueWithProperties(context_, device_, full, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(cl_command_queue_properties(CL_QUEUE_PROFILING_ENABLE |
                                        CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE),
            queueInfo<cl_command_queue_properties>(c, CL_QUEUE_PROPERTIES));
  // The spec: CL_QUEUE_PROPERTIES_ARRAY returns the properties argument as given.
  auto arr = infoVector<cl_queue_properties>(clGetCommandQueueInfo, c, CL_QUEUE_PROPERTIES_ARRAY);
  ASSERT_EQ(3u, arr.size());
  EXPECT_EQ(full[0], arr[0]);
  EXPECT_EQ(full[1], arr[1]);
  EXPECT_EQ(0u, arr[2]);
}

TEST_F(QueueApi, WithPropertiesValidation) {
  cl_int err = CL_SUCCESS;
  // The spec: CL_INVALID_VALUE if values specified in properties are not valid.
  cl_queue_properties unknown_name[] = {0x7777, 0, 0};
  EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(context_, device_, unknown_name, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  cl_queue_properties unknown_bits[] = {CL_QUEUE_PROPERTIES, cl_queue_properties(1) << 30, 0};
  EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(context_, device_, unknown_bits, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  // CL_QUEUE_ON_DEVICE requires CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, and
  // CL_QUEUE_ON_DEVICE_DEFAULT requires CL_QUEUE_ON_DEVICE (table of queue properties).
  cl_queue_properties on_device_in_order[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE, 0};
  EXPECT_EQ(nullptr,
            clCreateCommandQueueWithProperties(context_, device_, on_device_in_order, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  cl_queue_properties default_only[] = {
      CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE_DEFAULT | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(context_, device_, default_only, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  // CL_QUEUE_SIZE only applies to device queues.
  cl_queue_properties size_only[] = {CL_QUEUE_SIZE, 1024, 0};
  EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(context_, device_, size_only, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  if (!(caps_.deviceEnqueue & CL_DEVICE_QUEUE_SUPPORTED)) {
    // The spec: CL_INVALID_QUEUE_PROPERTIES if values specified in properties are valid but are
    // not supported by the device.
    cl_queue_properties on_device[] = {
        CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(context_, device_, on_device, &err));
    EXPECT_ERR(CL_INVALID_QUEUE_PROPERTIES, err);
  }
  EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(nullptr, device_, nullptr, &err));
  EXPECT_ERR(CL_INVALID_CONTEXT, err);
  EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(context_, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_DEVICE, err);
  // A context handle where a device is expected.
  EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(
                         context_, reinterpret_cast<cl_device_id>(context_.get()), nullptr, &err));
  EXPECT_ERR(CL_INVALID_DEVICE, err);
}

TEST_F(QueueApi, InfoQueries) {
  EXPECT_EQ(context_.get(), queueInfo<cl_context>(queue_, CL_QUEUE_CONTEXT));
  EXPECT_EQ(device_, queueInfo<cl_device_id>(queue_, CL_QUEUE_DEVICE));
  EXPECT_EQ(1u, refCount(queue_.get()));
  // The spec (3.0): CL_QUEUE_DEVICE_DEFAULT is NULL without device queues, and CL_QUEUE_SIZE
  // of a host queue is CL_INVALID_COMMAND_QUEUE ("not a valid command-queue for param_name").
  EXPECT_EQ(nullptr, queueInfo<cl_command_queue>(queue_, CL_QUEUE_DEVICE_DEFAULT));
  cl_uint size = 0;
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
            clGetCommandQueueInfo(queue_, CL_QUEUE_SIZE, sizeof(size), &size, nullptr));
  // The spec: CL_INVALID_VALUE if param_name is not one of the supported values or if size in
  // bytes specified by param_value_size is < size of return type and param_value is not NULL.
  EXPECT_CL(CL_INVALID_VALUE, clGetCommandQueueInfo(queue_, 0x7777, sizeof(size), &size, nullptr));
  char one = 0;
  EXPECT_CL(CL_INVALID_VALUE, clGetCommandQueueInfo(queue_, CL_QUEUE_CONTEXT, 1, &one, nullptr));
  size_t ret = 0;
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
            clGetCommandQueueInfo(nullptr, CL_QUEUE_CONTEXT, 0, nullptr, &ret));
}

TEST_F(QueueApi, RetainReleaseCounts) {
  Queue q = makeQueue(0);
  ASSERT_TRUE(q);
  EXPECT_EQ(1u, refCount(q.get()));
  EXPECT_CL_OK(clRetainCommandQueue(q));
  EXPECT_EQ(2u, refCount(q.get()));
  EXPECT_CL_OK(clReleaseCommandQueue(q));
  EXPECT_EQ(1u, refCount(q.get()));
  // A queue holds its context.
  cl_uint before = refCount(context_.get());
  {
    Queue other = makeQueue(0);
    EXPECT_GE(refCount(context_.get()), before);
  }
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clRetainCommandQueue(nullptr));
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clReleaseCommandQueue(nullptr));
}

TEST_F(QueueApi, InOrderQueueRunsCommandsInOrder) {
  // Overlapping writes of different values, non-blocking: the last one must win.
  Mem buf = makeBuffer(4096);
  std::vector<std::vector<unsigned char>> data;
  for (int i = 0; i < 16; ++i) data.emplace_back(4096, static_cast<unsigned char>(i + 1));
  for (auto& d : data)
    ASSERT_CL(CL_SUCCESS,
              clEnqueueWriteBuffer(queue_, buf, CL_FALSE, 0, 4096, d.data(), 0, nullptr, nullptr));
  auto got = read(buf, 4096);
  EXPECT_EQ(data.back(), got);
}

TEST_F(QueueApi, InOrderCommandsWaitForAStalledPredecessor) {
  Mem buf = makeBuffer(64);
  Event gate = makeUserEvent();
  std::vector<unsigned char> a(64, 1), b(64, 2);
  Event first, second;
  cl_event g = gate;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(queue_, buf, CL_FALSE, 0, 64, a.data(), 1, &g, first.out()));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(queue_, buf, CL_FALSE, 0, 64, b.data(), 0, nullptr, second.out()));
  EXPECT_CL_OK(clFlush(queue_));
  // The second command has no wait list, but an in-order queue runs it after the first.
  EXPECT_GT(eventStatus(second), CL_COMPLETE);
  EXPECT_GT(eventStatus(first), CL_COMPLETE);
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(first));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(second));
  EXPECT_EQ(b, read(buf, 64));
}

TEST_F(QueueApi, OutOfOrderQueueDoesNotOrderIndependentCommands) {
  Queue q = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  ASSERT_TRUE(q);
  Mem a = makeBuffer(64), b = makeBuffer(64);
  Event gate = makeUserEvent();
  std::vector<unsigned char> x(64, 7), y(64, 9);
  Event blocked, free_one;
  cl_event g = gate;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(q, a, CL_FALSE, 0, 64, x.data(), 1, &g, blocked.out()));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(q, b, CL_FALSE, 0, 64, y.data(), 0, nullptr, free_one.out()));
  cl_event f = free_one;
  // In an out-of-order queue the second command does not wait for the first.
  EXPECT_CL_OK(clWaitForEvents(1, &f));
  EXPECT_GT(eventStatus(blocked), CL_COMPLETE);
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(q));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(blocked));
  std::vector<unsigned char> got(64);
  EXPECT_CL_OK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, 64, got.data(), 0, nullptr, nullptr));
  EXPECT_EQ(x, got);
}

TEST_F(QueueApi, FlushAndFinish) {
  Mem buf = makeBuffer(1 << 16);
  std::vector<unsigned char> src(1 << 16);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7);
  std::vector<unsigned char> dst(1 << 16, 0);
  Event w, r;
  ASSERT_CL(CL_SUCCESS, clEnqueueWriteBuffer(queue_, buf, CL_FALSE, 0, src.size(), src.data(), 0,
                                             nullptr, w.out()));
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue_, buf, CL_FALSE, 0, dst.size(), dst.data(), 0,
                                            nullptr, r.out()));
  EXPECT_CL_OK(clFlush(queue_));
  // The spec: clFlush guarantees the commands are issued; they then complete by themselves.
  EXPECT_STATUS(CL_COMPLETE, waitStatus(r));
  EXPECT_EQ(src, dst);
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_CL_OK(clFinish(queue_));  // an idle queue
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clFlush(nullptr));
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clFinish(nullptr));
}

TEST_F(QueueApi, FinishWaitsForEveryCommand) {
  for (cl_command_queue_properties p :
       {cl_command_queue_properties(0),
        cl_command_queue_properties(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)}) {
    Queue q = makeQueue(p);
    ASSERT_TRUE(q);
    Mem buf = makeBuffer(1 << 12);
    std::vector<Event> events(64);
    cl_uint pattern = 0xabcd1234;
    for (auto& e : events)
      ASSERT_CL(CL_SUCCESS,
                clEnqueueFillBuffer(q, buf, &pattern, 4, 0, 1 << 12, 0, nullptr, e.out()));
    EXPECT_CL_OK(clFinish(q));
    for (auto& e : events) EXPECT_STATUS(CL_COMPLETE, eventStatus(e));
  }
}

// A kernel's work-groups run on every compute unit even when no application thread waits
// inside the platform: here the application polls the event's status with short sleeps, as
// many do. Each group announces itself in a counter and waits (bounded) to see another group
// running at the same time; with a single thread running the groups none ever does.
TEST_F(QueueApi, KernelUsesSeveralComputeUnitsWhileTheApplicationPolls) {
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  cl_uint units = 0;
  ASSERT_CL(CL_SUCCESS,
            clGetDeviceInfo(device_, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, nullptr));
  if (units < 2) GTEST_SKIP() << "the device has one compute unit";
  const char* source = R"(
    kernel void meet(global int* running, global int* met, int spins) {
      atomic_inc(running);
      int seen = 0;
      for (int i = 0; i < spins && !seen; ++i) seen = atomic_or(running, 0) >= 2;
      // get_local_size keeps the groups as enqueued: a kernel that asks only global ids may
      // run its one-item groups as larger groups, whose items run in turn.
      if (seen) atomic_add(met, (int)get_local_size(0));
      atomic_dec(running);
    })";
  cl_int err = -1;
  Program program(clCreateProgramWithSource(context_, 1, &source, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &device_, "", nullptr, nullptr));
  Kernel kernel(clCreateKernel(program, "meet", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  cl_int zeros[2] = {0, 0};
  Mem running = makeBuffer(sizeof(cl_int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &zeros[0]);
  Mem met = makeBuffer(sizeof(cl_int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &zeros[1]);
  const cl_int spins = 20000000;  // a bound, reached only by a group that runs alone
  cl_mem running_mem = running.get(), met_mem = met.get();
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(kernel, 0, sizeof(cl_mem), &running_mem));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(kernel, 1, sizeof(cl_mem), &met_mem));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(kernel, 2, sizeof(spins), &spins));
  const size_t groups = 16, one = 1;
  Event done;
  ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &groups, &one, 0,
                                               nullptr, done.out()));
  ASSERT_CL(CL_SUCCESS, clFlush(queue_));
  while (eventStatus(done) > CL_COMPLETE) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_STATUS(CL_COMPLETE, eventStatus(done));
  cl_int met_count = 0;
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue_, met, CL_TRUE, 0, sizeof(met_count), &met_count,
                                            0, nullptr, nullptr));
  EXPECT_GT(met_count, 0) << "no two work-groups ever ran at the same time";
}

TEST_F(QueueApi, SetCommandQueuePropertyIsRejected) {
  cl_command_queue_properties old = 0;
  // Deprecated since 1.1: Manifold's queue properties are fixed; the call must fail cleanly.
  EXPECT_NE(Err(CL_SUCCESS),
            Err(clSetCommandQueueProperty(queue_, CL_QUEUE_PROFILING_ENABLE, CL_TRUE, &old)));
  EXPECT_EQ(0u, queueInfo<cl_command_queue_properties>(queue_, CL_QUEUE_PROPERTIES));
}

TEST_F(QueueApi, SetDefaultDeviceQueueWithoutDeviceQueues) {
  if (caps_.deviceEnqueue & CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT)
    GTEST_SKIP() << "device queues supported";
  // The spec (3.0): CL_INVALID_OPERATION if device does not support a replaceable default
  // on-device queue.
  EXPECT_CL(CL_INVALID_OPERATION, clSetDefaultDeviceCommandQueue(context_, device_, queue_));
  EXPECT_CL(CL_INVALID_CONTEXT, clSetDefaultDeviceCommandQueue(nullptr, device_, queue_));
  // CTS api consistency_device_enqueue: whatever the queue, even none.
  EXPECT_CL(CL_INVALID_OPERATION, clSetDefaultDeviceCommandQueue(context_, device_, nullptr));
}

// A queue's printf callback (CL_QUEUE_PRINTF_CALLBACK_MFLD): each kernel's output reaches it,
// complete when the kernel's event is, and none of it the standard output. Devices whose driver
// prints (GPUs) refuse the property.
struct PrintedText {
  std::mutex mutex;
  std::string text;
  int calls = 0;
  static void CL_CALLBACK keep(const char* text, size_t length, void* user_data) {
    auto& self = *static_cast<PrintedText*>(user_data);
    std::lock_guard lock(self.mutex);
    self.text.append(text, length);
    ++self.calls;
  }
  std::vector<std::string> lines() {
    std::lock_guard lock(mutex);
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
      out.push_back(text.substr(start, end - start));
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST_F(QueueApi, PrintfCallbackGetsEachKernelsOutput) {
  PrintedText printed;
  const cl_queue_properties props[] = {
      CL_QUEUE_PRINTF_CALLBACK_MFLD, cl_queue_properties(&PrintedText::keep),
      CL_QUEUE_PRINTF_USER_DATA_MFLD, cl_queue_properties(&printed), 0};
  cl_int err = -1;
  Queue q(clCreateCommandQueueWithProperties(context_, device_, props, &err));
  if (err == CL_INVALID_QUEUE_PROPERTIES && !isCpuDevice(device_))
    GTEST_SKIP() << "the device's driver prints its kernels' output itself";
  ASSERT_ERR(CL_SUCCESS, err);
  cl_queue_properties listed[8] = {};
  size_t size = 0;
  ASSERT_CL(CL_SUCCESS,
            clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, sizeof listed, listed, &size));
  EXPECT_EQ(size, sizeof props);
  EXPECT_EQ(listed[0], cl_queue_properties(CL_QUEUE_PRINTF_CALLBACK_MFLD));
  const char* source = R"CLC(
kernel void say(int base) {
  printf("item %d of %d\n", base + (int)get_global_id(0), (int)get_global_size(0));
}
)CLC";
  Program program(clCreateProgramWithSource(context_, 1, &source, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &device_, "", nullptr, nullptr));
  Kernel kernel(clCreateKernel(program, "say", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  std::vector<std::string> expected;
  std::fflush(stdout);
  CapturedStdout captured;
  for (int base : {0, 100}) {
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(kernel, 0, sizeof base, &base));
    const size_t global = 8, local = 4;
    Event done;
    ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &global, &local, 0, nullptr,
                                                 done.out()));
    cl_event wait_for = done;
    ASSERT_CL(CL_SUCCESS, clWaitForEvents(1, &wait_for));
    for (int i = 0; i < 8; ++i) expected.push_back("item " + std::to_string(base + i) + " of 8");
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(printed.lines(), expected) << "after the launch of base " << base;
  }
  const std::string on_stdout = captured.text();
  EXPECT_EQ(on_stdout.find("item"), std::string::npos) << on_stdout;
  EXPECT_GE(printed.calls, 2);
}

TEST_F(QueueApi, PrintfCallbackPropertyErrors) {
  PrintedText printed;
  cl_int err = -1;
  const cl_queue_properties null_callback[] = {CL_QUEUE_PRINTF_CALLBACK_MFLD, 0, 0};
  EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(context_, device_, null_callback, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  const cl_queue_properties data_alone[] = {CL_QUEUE_PRINTF_USER_DATA_MFLD,
                                            cl_queue_properties(&printed), 0};
  EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(context_, device_, data_alone, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  const cl_queue_properties twice[] = {
      CL_QUEUE_PRINTF_CALLBACK_MFLD, cl_queue_properties(&PrintedText::keep),
      CL_QUEUE_PRINTF_CALLBACK_MFLD, cl_queue_properties(&PrintedText::keep), 0};
  EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(context_, device_, twice, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
}

}  // namespace
