// NULL and wrong-type handles on every group of entry points: each call returns the spec's
// CL_INVALID_<type> code for the bad handle and never crashes. A wrong-type handle is a live
// Manifold object of another kind (the loader dispatches it to Manifold like a right one).
#include "cl_test.h"

using namespace cltest;

namespace {

class Handles : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    buf_ = makeBuffer(256);
    user_ = makeUserEvent();
    ASSERT_TRUE(buf_ && user_);
  }
  void TearDown() override {
    if (user_) clSetUserEventStatus(user_, CL_COMPLETE);
    ContextTest::TearDown();
  }
  // Handles of every kind but the one a parameter wants, and NULL.
  template <class T>
  std::vector<T> wrong(void* except) {
    std::vector<T> v;
    for (void* p : {static_cast<void*>(context_.get()), static_cast<void*>(queue_.get()),
                    static_cast<void*>(buf_.get()), static_cast<void*>(user_.get()),
                    static_cast<void*>(device_)})
      if (p != except) v.push_back(static_cast<T>(p));
    v.push_back(nullptr);
    return v;
  }
  Mem buf_;
  Event user_;
};

TEST_F(Handles, ContextEntryPoints) {
  for (cl_context bad : wrong<cl_context>(context_.get())) {
    SCOPED_TRACE(testing::Message() << "handle " << bad);
    cl_uint n = 0;
    // The spec: CL_INVALID_CONTEXT if context is not a valid context.
    EXPECT_CL(CL_INVALID_CONTEXT, clRetainContext(bad));
    EXPECT_CL(CL_INVALID_CONTEXT, clReleaseContext(bad));
    EXPECT_CL(CL_INVALID_CONTEXT,
              clGetContextInfo(bad, CL_CONTEXT_NUM_DEVICES, sizeof(n), &n, nullptr));
    EXPECT_CL(CL_INVALID_CONTEXT, clSetContextDestructorCallback(
                                      bad, [](cl_context, void*) {}, nullptr));
    cl_int err = CL_SUCCESS;
    EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(bad, device_, nullptr, &err));
    EXPECT_ERR(CL_INVALID_CONTEXT, err);
    EXPECT_EQ(nullptr, clCreateCommandQueue(bad, device_, 0, &err));
    EXPECT_ERR(CL_INVALID_CONTEXT, err);
    EXPECT_EQ(nullptr, clCreateBuffer(bad, 0, 64, nullptr, &err));
    EXPECT_ERR(CL_INVALID_CONTEXT, err);
    EXPECT_EQ(nullptr, clCreateBufferWithProperties(bad, nullptr, 0, 64, nullptr, &err));
    EXPECT_ERR(CL_INVALID_CONTEXT, err);
    EXPECT_EQ(nullptr, clCreateUserEvent(bad, &err));
    EXPECT_ERR(CL_INVALID_CONTEXT, err);
    const char* src = "kernel void k() {}";
    EXPECT_EQ(nullptr, clCreateProgramWithSource(bad, 1, &src, nullptr, &err));
    EXPECT_ERR(CL_INVALID_CONTEXT, err);
    EXPECT_EQ(nullptr, clCreateSamplerWithProperties(bad, nullptr, &err));
    EXPECT_ERR(CL_INVALID_CONTEXT, err);
    cl_image_format fmt{CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = desc.image_height = 4;
    EXPECT_EQ(nullptr, clCreateImage(bad, 0, &fmt, &desc, nullptr, &err));
    EXPECT_ERR(CL_INVALID_CONTEXT, err);
    EXPECT_CL(CL_INVALID_CONTEXT,
              clGetSupportedImageFormats(bad, 0, CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &n));
  }
}

TEST_F(Handles, DeviceArguments) {
  for (cl_device_id bad : wrong<cl_device_id>(device_)) {
    SCOPED_TRACE(testing::Message() << "handle " << bad);
    cl_int err = CL_SUCCESS;
    // The spec: CL_INVALID_DEVICE if device is not a valid device or is not associated with
    // context.
    EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(context_, bad, nullptr, &err));
    EXPECT_ERR(CL_INVALID_DEVICE, err);
    EXPECT_EQ(nullptr, clCreateCommandQueue(context_, bad, 0, &err));
    EXPECT_ERR(CL_INVALID_DEVICE, err);
    cl_uint v = 0;
    EXPECT_CL(CL_INVALID_DEVICE, clGetDeviceInfo(bad, CL_DEVICE_VENDOR_ID, sizeof(v), &v, nullptr));
    if (bad) {
      // clCreateContext with a NULL device is the loader's business (devices[0] is used to find
      // the platform); a wrong-type one reaches Manifold.
      cl_device_id devs[] = {bad};
      EXPECT_EQ(nullptr, clCreateContext(nullptr, 1, devs, nullptr, nullptr, &err));
      EXPECT_ERR(CL_INVALID_DEVICE, err);
    }
  }
}

TEST_F(Handles, QueueEntryPoints) {
  for (cl_command_queue bad : wrong<cl_command_queue>(queue_.get())) {
    SCOPED_TRACE(testing::Message() << "handle " << bad);
    char d[64] = {};
    size_t zero[3] = {0, 0, 0}, region[3] = {1, 1, 1};
    cl_int err = CL_SUCCESS;
    cl_mem b = buf_;
    cl_uint n = 0;
    // The spec: CL_INVALID_COMMAND_QUEUE if command_queue is not a valid host command-queue.
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clRetainCommandQueue(bad));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clReleaseCommandQueue(bad));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
              clGetCommandQueueInfo(bad, CL_QUEUE_CONTEXT, sizeof(n), &n, nullptr));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clFlush(bad));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clFinish(bad));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
              clEnqueueReadBuffer(bad, buf_, CL_TRUE, 0, 8, d, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
              clEnqueueWriteBuffer(bad, buf_, CL_TRUE, 0, 8, d, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
              clEnqueueCopyBuffer(bad, buf_, buf_, 0, 8, 8, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
              clEnqueueFillBuffer(bad, buf_, d, 1, 0, 8, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
              clEnqueueReadBufferRect(bad, buf_, CL_TRUE, zero, zero, region, 0, 0, 0, 0, d, 0,
                                      nullptr, nullptr));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
              clEnqueueWriteBufferRect(bad, buf_, CL_TRUE, zero, zero, region, 0, 0, 0, 0, d, 0,
                                       nullptr, nullptr));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
              clEnqueueCopyBufferRect(bad, buf_, buf_, zero, region, region, 0, 0, 0, 0, 0, nullptr,
                                      nullptr));
    EXPECT_EQ(nullptr,
              clEnqueueMapBuffer(bad, buf_, CL_TRUE, CL_MAP_READ, 0, 8, 0, nullptr, nullptr, &err));
    EXPECT_ERR(CL_INVALID_COMMAND_QUEUE, err);
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clEnqueueUnmapMemObject(bad, buf_, d, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
              clEnqueueMigrateMemObjects(bad, 1, &b, 0, 0, nullptr, nullptr));
    cl_event ev = nullptr;
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clEnqueueMarkerWithWaitList(bad, 0, nullptr, &ev));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clEnqueueBarrierWithWaitList(bad, 0, nullptr, &ev));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clEnqueueMarker(bad, &ev));
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clEnqueueBarrier(bad));
    cl_event u = user_;
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clEnqueueWaitForEvents(bad, 1, &u));
    size_t one = 1;
    EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
              clEnqueueNDRangeKernel(bad, nullptr, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
    EXPECT_EQ(nullptr, ev);
  }
}

TEST_F(Handles, MemEntryPoints) {
  for (cl_mem bad : wrong<cl_mem>(buf_.get())) {
    SCOPED_TRACE(testing::Message() << "handle " << bad);
    char d[64] = {};
    size_t zero[3] = {0, 0, 0}, region[3] = {1, 1, 1};
    size_t n = 0;
    cl_int err = CL_SUCCESS;
    // The spec: CL_INVALID_MEM_OBJECT if memobj (buffer) is not a valid memory object.
    EXPECT_CL(CL_INVALID_MEM_OBJECT, clRetainMemObject(bad));
    EXPECT_CL(CL_INVALID_MEM_OBJECT, clReleaseMemObject(bad));
    EXPECT_CL(CL_INVALID_MEM_OBJECT, clGetMemObjectInfo(bad, CL_MEM_SIZE, sizeof(n), &n, nullptr));
    EXPECT_CL(CL_INVALID_MEM_OBJECT, clSetMemObjectDestructorCallback(
                                         bad, [](cl_mem, void*) {}, nullptr));
    cl_buffer_region r{0, 8};
    EXPECT_EQ(nullptr, clCreateSubBuffer(bad, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err));
    EXPECT_ERR(CL_INVALID_MEM_OBJECT, err);
    EXPECT_CL(CL_INVALID_MEM_OBJECT,
              clEnqueueReadBuffer(queue_, bad, CL_TRUE, 0, 8, d, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_MEM_OBJECT,
              clEnqueueWriteBuffer(queue_, bad, CL_TRUE, 0, 8, d, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_MEM_OBJECT,
              clEnqueueCopyBuffer(queue_, bad, buf_, 0, 0, 8, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_MEM_OBJECT,
              clEnqueueCopyBuffer(queue_, buf_, bad, 0, 0, 8, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_MEM_OBJECT,
              clEnqueueFillBuffer(queue_, bad, d, 1, 0, 8, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_MEM_OBJECT,
              clEnqueueReadBufferRect(queue_, bad, CL_TRUE, zero, zero, region, 0, 0, 0, 0, d, 0,
                                      nullptr, nullptr));
    EXPECT_CL(CL_INVALID_MEM_OBJECT,
              clEnqueueWriteBufferRect(queue_, bad, CL_TRUE, zero, zero, region, 0, 0, 0, 0, d, 0,
                                       nullptr, nullptr));
    EXPECT_CL(CL_INVALID_MEM_OBJECT, clEnqueueCopyBufferRect(queue_, bad, buf_, zero, zero, region,
                                                             0, 0, 0, 0, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_MEM_OBJECT, clEnqueueCopyBufferRect(queue_, buf_, bad, zero, zero, region,
                                                             0, 0, 0, 0, 0, nullptr, nullptr));
    EXPECT_EQ(nullptr, clEnqueueMapBuffer(queue_, bad, CL_TRUE, CL_MAP_READ, 0, 8, 0, nullptr,
                                          nullptr, &err));
    EXPECT_ERR(CL_INVALID_MEM_OBJECT, err);
    EXPECT_CL(CL_INVALID_MEM_OBJECT, clEnqueueUnmapMemObject(queue_, bad, d, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_MEM_OBJECT,
              clEnqueueMigrateMemObjects(queue_, 1, &bad, 0, 0, nullptr, nullptr));
  }
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(Handles, EventEntryPoints) {
  for (cl_event bad : wrong<cl_event>(user_.get())) {
    SCOPED_TRACE(testing::Message() << "handle " << bad);
    cl_int v = 0;
    cl_ulong t = 0;
    // The spec: CL_INVALID_EVENT if event is not a valid event object.
    EXPECT_CL(CL_INVALID_EVENT, clRetainEvent(bad));
    EXPECT_CL(CL_INVALID_EVENT, clReleaseEvent(bad));
    EXPECT_CL(CL_INVALID_EVENT,
              clGetEventInfo(bad, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(v), &v, nullptr));
    EXPECT_CL(CL_INVALID_EVENT,
              clGetEventProfilingInfo(bad, CL_PROFILING_COMMAND_END, sizeof(t), &t, nullptr));
    EXPECT_CL(CL_INVALID_EVENT, clSetUserEventStatus(bad, CL_COMPLETE));
    EXPECT_CL(CL_INVALID_EVENT, clSetEventCallback(
                                    bad, CL_COMPLETE, [](cl_event, cl_int, void*) {}, nullptr));
    EXPECT_CL(CL_INVALID_EVENT, clWaitForEvents(1, &bad));
    // In a wait list the code is CL_INVALID_EVENT_WAIT_LIST.
    cl_event list[] = {user_, bad};
    cl_event out = nullptr;
    EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST, clEnqueueMarkerWithWaitList(queue_, 2, list, &out));
    EXPECT_EQ(nullptr, out);
  }
}

TEST_F(Handles, ProgramKernelSamplerEntryPoints) {
  // Handles of the wrong kind reach programs, kernels and samplers too.
  for (void* p : {static_cast<void*>(context_.get()), static_cast<void*>(buf_.get()),
                  static_cast<void*>(user_.get()), static_cast<void*>(queue_.get()),
                  static_cast<void*>(nullptr)}) {
    SCOPED_TRACE(testing::Message() << "handle " << p);
    cl_int err = CL_SUCCESS;
    size_t n = 0;
    auto prog = static_cast<cl_program>(p);
    auto kern = static_cast<cl_kernel>(p);
    auto samp = static_cast<cl_sampler>(p);
    EXPECT_CL(CL_INVALID_PROGRAM, clRetainProgram(prog));
    EXPECT_CL(CL_INVALID_PROGRAM, clReleaseProgram(prog));
    EXPECT_CL(CL_INVALID_PROGRAM, clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, 0, nullptr, &n));
    EXPECT_CL(CL_INVALID_PROGRAM, clBuildProgram(prog, 0, nullptr, nullptr, nullptr, nullptr));
    EXPECT_EQ(nullptr, clCreateKernel(prog, "k", &err));
    EXPECT_ERR(CL_INVALID_PROGRAM, err);
    EXPECT_CL(CL_INVALID_KERNEL, clRetainKernel(kern));
    EXPECT_CL(CL_INVALID_KERNEL, clReleaseKernel(kern));
    int v = 0;
    EXPECT_CL(CL_INVALID_KERNEL, clSetKernelArg(kern, 0, sizeof(v), &v));
    EXPECT_CL(CL_INVALID_KERNEL, clGetKernelInfo(kern, CL_KERNEL_NUM_ARGS, 0, nullptr, &n));
    size_t one = 1;
    EXPECT_CL(CL_INVALID_KERNEL,
              clEnqueueNDRangeKernel(queue_, kern, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_SAMPLER, clRetainSampler(samp));
    EXPECT_CL(CL_INVALID_SAMPLER, clReleaseSampler(samp));
    EXPECT_CL(CL_INVALID_SAMPLER, clGetSamplerInfo(samp, CL_SAMPLER_CONTEXT, 0, nullptr, &n));
  }
}

TEST_F(Handles, PlatformArguments) {
  for (void* p : {static_cast<void*>(context_.get()), static_cast<void*>(device_),
                  static_cast<void*>(buf_.get())}) {
    auto bad = static_cast<cl_platform_id>(p);
    size_t n = 0;
    cl_uint count = 0;
    // The spec: CL_INVALID_PLATFORM if platform is not a valid platform.
    EXPECT_CL(CL_INVALID_PLATFORM, clGetPlatformInfo(bad, CL_PLATFORM_NAME, 0, nullptr, &n));
    EXPECT_CL(CL_INVALID_PLATFORM, clGetDeviceIDs(bad, CL_DEVICE_TYPE_ALL, 0, nullptr, &count));
  }
}

TEST_F(Handles, QueueStillWorksAfterAllThat) {
  std::vector<unsigned char> d(256, 0x12);
  write(buf_, d.data(), 256);
  EXPECT_EQ(d, read(buf_, 256));
}

}  // namespace
