// Object lifetimes: an object stays alive while a queued command uses it, whatever the
// application releases; destructor callbacks fire exactly once; released queues and contexts are
// really freed (their context's destructor callback fires).
#include "cl_test.h"

using namespace cltest;

namespace {

// Counts destructor callbacks and lets a test wait (bounded) for them: commands finish on
// worker threads, which may drop the last internal reference.
struct DestroyLog {
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::string> order;
  void add(const char* what) {
    std::lock_guard<std::mutex> lock(m);
    order.emplace_back(what);
    cv.notify_all();
  }
  int count(const std::string& what) {
    std::lock_guard<std::mutex> lock(m);
    return static_cast<int>(std::count(order.begin(), order.end(), what));
  }
  bool waitFor(const std::string& what, std::chrono::seconds timeout = std::chrono::seconds(20)) {
    std::unique_lock<std::mutex> lock(m);
    return cv.wait_for(lock, timeout,
                       [&] { return std::find(order.begin(), order.end(), what) != order.end(); });
  }
  std::vector<std::string> snapshot() {
    std::lock_guard<std::mutex> lock(m);
    return order;
  }
};
struct Tag {
  DestroyLog* log;
  const char* name;
};
void CL_CALLBACK memGone(cl_mem, void* u) {
  auto* t = static_cast<Tag*>(u);
  t->log->add(t->name);
}
void CL_CALLBACK contextGone(cl_context, void* u) {
  auto* t = static_cast<Tag*>(u);
  t->log->add(t->name);
}

class Lifetime : public DeviceTest {
 protected:
  cl_context newContext() {
    cl_int err = -1;
    cl_context c = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    EXPECT_ERR(CL_SUCCESS, err);
    return c;
  }
  cl_command_queue newQueue(cl_context c, cl_command_queue_properties p = 0) {
    cl_int err = -1;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, p, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(c, device_, props, &err);
    EXPECT_ERR(CL_SUCCESS, err);
    return q;
  }
  cl_mem newBuffer(cl_context c, size_t n, cl_mem_flags f = 0, void* host = nullptr) {
    cl_int err = -1;
    cl_mem m = clCreateBuffer(c, f, n, host, &err);
    EXPECT_ERR(CL_SUCCESS, err);
    return m;
  }
  cl_event newUserEvent(cl_context c) {
    cl_int err = -1;
    cl_event e = clCreateUserEvent(c, &err);
    EXPECT_ERR(CL_SUCCESS, err);
    return e;
  }
  // A read map and its unmap, queued after what came before (in-order `q`, or after `after`):
  // the spec's way to make a USE_HOST_PTR region show the buffer's bytes. Nothing is written
  // into the region at release (applications free it first).
  void enqueueMapForReading(cl_command_queue q, cl_mem m, size_t size, cl_event after = nullptr) {
    cl_int err = -1;
    cl_event mapped = nullptr;
    void* p = clEnqueueMapBuffer(q, m, CL_FALSE, CL_MAP_READ, 0, size, after ? 1 : 0,
                                 after ? &after : nullptr, &mapped, &err);
    ASSERT_ERR(CL_SUCCESS, err);
    ASSERT_CL(CL_SUCCESS, clEnqueueUnmapMemObject(q, m, p, 1, &mapped, nullptr));
    EXPECT_CL_OK(clReleaseEvent(mapped));
  }
};

TEST_F(Lifetime, QueueAndContextAreFreedAfterUse) {
  for (cl_command_queue_properties p :
       {cl_command_queue_properties(0),
        cl_command_queue_properties(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE),
        cl_command_queue_properties(CL_QUEUE_PROFILING_ENABLE)}) {
    DestroyLog log;
    Tag ctx_tag{&log, "context"};
    cl_context c = newContext();
    ASSERT_CL(CL_SUCCESS, clSetContextDestructorCallback(c, contextGone, &ctx_tag));
    cl_command_queue q = newQueue(c, p);
    cl_mem m = newBuffer(c, 256);
    std::vector<unsigned char> d(256, 1);
    ASSERT_CL(CL_SUCCESS,
              clEnqueueWriteBuffer(q, m, CL_FALSE, 0, 256, d.data(), 0, nullptr, nullptr));
    cl_event e = nullptr;
    ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(q, m, CL_FALSE, 0, 256, d.data(), 0, nullptr, &e));
    ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clEnqueueBarrierWithWaitList(q, 1, &e, nullptr));
    ASSERT_CL(CL_SUCCESS, clEnqueueBarrierWithWaitList(q, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clFinish(q));
    EXPECT_CL_OK(clReleaseEvent(e));
    EXPECT_CL_OK(clReleaseMemObject(m));
    EXPECT_CL_OK(clReleaseCommandQueue(q));
    EXPECT_EQ(0, log.count("context"));
    EXPECT_CL_OK(clReleaseContext(c));
    // The spec: the context is deleted once all the objects attached to it (queues, memory
    // objects, events) are released, and then its destructor callbacks are called. Nothing
    // internal may keep the queue (and so the context) alive once the commands are done.
    EXPECT_TRUE(log.waitFor("context"))
        << "queue properties 0x" << std::hex << p << ": the context (or its queue) was never freed";
    EXPECT_EQ(1, log.count("context"));
  }
}

TEST_F(Lifetime, ReleaseEverythingWhileACommandWaits) {
  DestroyLog log;
  Tag buf_tag{&log, "buffer"}, ctx_tag{&log, "context"};
  std::vector<unsigned char> host(4096, 0), src(4096, 0x6b);
  cl_context c = newContext();
  ASSERT_CL(CL_SUCCESS, clSetContextDestructorCallback(c, contextGone, &ctx_tag));
  cl_command_queue q = newQueue(c);
  cl_mem m = newBuffer(c, 4096, CL_MEM_USE_HOST_PTR, host.data());
  ASSERT_CL(CL_SUCCESS, clSetMemObjectDestructorCallback(m, memGone, &buf_tag));
  cl_event gate = newUserEvent(c);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(q, m, CL_FALSE, 0, 4096, src.data(), 1, &gate, nullptr));
  enqueueMapForReading(q, m, 4096);
  // The application drops everything but the user event.
  EXPECT_CL_OK(clReleaseMemObject(m));
  EXPECT_CL_OK(clReleaseCommandQueue(q));
  EXPECT_CL_OK(clReleaseContext(c));
  // The spec: the memory object is deleted once its reference count is zero and the commands
  // queued that use it have finished.
  EXPECT_EQ(0, log.count("buffer"));
  EXPECT_EQ(0, log.count("context"));
  EXPECT_EQ(0, host[0]);
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  ASSERT_TRUE(log.waitFor("buffer"));
  // The command ran on the buffer the application had released.
  EXPECT_EQ(0x6b, host[0]);
  EXPECT_EQ(0x6b, host[4095]);
  // The user event still holds the context.
  EXPECT_EQ(0, log.count("context"));
  EXPECT_CL_OK(clReleaseEvent(gate));
  ASSERT_TRUE(log.waitFor("context"));
  EXPECT_EQ(1, log.count("buffer"));
  EXPECT_EQ(1, log.count("context"));
  auto order = log.snapshot();
  EXPECT_EQ((std::vector<std::string>{"buffer", "context"}), order);
}

TEST_F(Lifetime, ReleasedOutOfOrderQueueStillRunsItsCommands) {
  DestroyLog log;
  Tag ctx_tag{&log, "context"}, a_tag{&log, "a"}, b_tag{&log, "b"};
  cl_context c = newContext();
  ASSERT_CL(CL_SUCCESS, clSetContextDestructorCallback(c, contextGone, &ctx_tag));
  cl_command_queue q = newQueue(c, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  std::vector<unsigned char> host(1024, 0);
  cl_mem a = newBuffer(c, 1024);
  cl_mem b = newBuffer(c, 1024, CL_MEM_USE_HOST_PTR, host.data());
  ASSERT_CL(CL_SUCCESS, clSetMemObjectDestructorCallback(a, memGone, &a_tag));
  ASSERT_CL(CL_SUCCESS, clSetMemObjectDestructorCallback(b, memGone, &b_tag));
  cl_event gate = newUserEvent(c);
  cl_uint pat = 0x01010101u * 0x3c;
  cl_event fill = nullptr;
  ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(q, a, &pat, 4, 0, 1024, 1, &gate, &fill));
  cl_event copied = nullptr;
  ASSERT_CL(CL_SUCCESS, clEnqueueCopyBuffer(q, a, b, 0, 0, 1024, 1, &fill, &copied));
  enqueueMapForReading(q, b, 1024, copied);
  EXPECT_CL_OK(clReleaseEvent(copied));
  EXPECT_CL_OK(clReleaseEvent(fill));
  EXPECT_CL_OK(clReleaseMemObject(a));
  EXPECT_CL_OK(clReleaseMemObject(b));
  EXPECT_CL_OK(clReleaseCommandQueue(q));
  EXPECT_CL_OK(clReleaseContext(c));
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_CL_OK(clReleaseEvent(gate));
  ASSERT_TRUE(log.waitFor("context"));
  EXPECT_EQ(0x3c, host[0]);
  EXPECT_EQ(0x3c, host[1023]);
  EXPECT_EQ(1, log.count("a"));
  EXPECT_EQ(1, log.count("b"));
  EXPECT_EQ(1, log.count("context"));
  auto order = log.snapshot();
  EXPECT_EQ("context", order.back());
}

TEST_F(Lifetime, EventOutlivesItsQueueAndContext) {
  DestroyLog log;
  Tag ctx_tag{&log, "context"};
  cl_context c = newContext();
  ASSERT_CL(CL_SUCCESS, clSetContextDestructorCallback(c, contextGone, &ctx_tag));
  cl_command_queue q = newQueue(c);
  cl_event e = nullptr;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 0, nullptr, &e));
  EXPECT_CL_OK(clReleaseCommandQueue(q));
  EXPECT_CL_OK(clReleaseContext(c));
  EXPECT_CL_OK(clWaitForEvents(1, &e));
  // The event still answers its queries: its queue and context are kept for it.
  EXPECT_STATUS(CL_COMPLETE, eventStatus(e));
  EXPECT_EQ(q, eventInfo<cl_command_queue>(e, CL_EVENT_COMMAND_QUEUE));
  EXPECT_EQ(c, eventInfo<cl_context>(e, CL_EVENT_CONTEXT));
  EXPECT_EQ(0, log.count("context"));
  EXPECT_CL_OK(clReleaseEvent(e));
  EXPECT_TRUE(log.waitFor("context"));
}

// A kernel's argument values are shared by its launches (one snapshot until an argument
// changes) and the kernel keeps no reference to them: a buffer the application released goes
// once the launches that use it have finished, while the kernel, still set to it, lives on. A
// launch keeps the values it was enqueued with.
TEST_F(Lifetime, KernelArgumentsGoWithTheirLaunches) {
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  DestroyLog log;
  Tag a_tag{&log, "a"};
  cl_context c = newContext();
  cl_command_queue q = newQueue(c);
  const char* source = "kernel void put(global int* p, int v) { p[get_global_id(0)] = v; }";
  cl_int err = -1;
  cl_program program = clCreateProgramWithSource(c, 1, &source, nullptr, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &device_, "", nullptr, nullptr));
  cl_kernel k = clCreateKernel(program, "put", &err);
  ASSERT_ERR(CL_SUCCESS, err);
  std::vector<cl_int> host_a(64, 0), host_b(64, 0);
  cl_mem a = newBuffer(c, sizeof(cl_int) * 64, CL_MEM_USE_HOST_PTR, host_a.data());
  cl_mem b = newBuffer(c, sizeof(cl_int) * 64, CL_MEM_USE_HOST_PTR, host_b.data());
  ASSERT_CL(CL_SUCCESS, clSetMemObjectDestructorCallback(a, memGone, &a_tag));
  cl_event gate = newUserEvent(c);
  const size_t global = 64;
  cl_int value = 5;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 0, sizeof(cl_mem), &a));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof(value), &value));
  // Two launches with the same values (they share them), held back by the gate.
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 1, &gate, nullptr));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  enqueueMapForReading(q, a, sizeof(cl_int) * 64);
  // New values for the next launch only.
  value = 6;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 0, sizeof(cl_mem), &b));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof(value), &value));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  EXPECT_CL_OK(clReleaseMemObject(a));
  EXPECT_EQ(0, log.count("a"));  // the gated launches still use it
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  ASSERT_CL(CL_SUCCESS, clFinish(q));
  ASSERT_TRUE(log.waitFor("a")) << "a released buffer outlived its launches";
  EXPECT_EQ(5, host_a[0]);
  EXPECT_EQ(5, host_a[63]);
  std::vector<cl_int> out(64, 0);
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof(cl_int) * 64, out.data(), 0,
                                            nullptr, nullptr));
  EXPECT_EQ(6, out[0]);
  EXPECT_EQ(6, out[63]);
  // The kernel launches on after the buffer it was once set to has gone.
  value = 7;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof(value), &value));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof(cl_int) * 64, out.data(), 0,
                                            nullptr, nullptr));
  EXPECT_EQ(7, out[0]);
  EXPECT_EQ(1, log.count("a"));
  EXPECT_CL_OK(clReleaseEvent(gate));
  EXPECT_CL_OK(clReleaseKernel(k));
  EXPECT_CL_OK(clReleaseProgram(program));
  EXPECT_CL_OK(clReleaseMemObject(b));
  EXPECT_CL_OK(clReleaseCommandQueue(q));
  EXPECT_CL_OK(clReleaseContext(c));
}

TEST_F(Lifetime, SubBufferCommandKeepsParentAlive) {
  const size_t align = deviceInfo<cl_uint>(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
  DestroyLog log;
  Tag parent_tag{&log, "parent"}, sub_tag{&log, "sub"}, ctx_tag{&log, "context"};
  std::vector<unsigned char> host(4 * align, 0);
  cl_context c = newContext();
  ASSERT_CL(CL_SUCCESS, clSetContextDestructorCallback(c, contextGone, &ctx_tag));
  cl_command_queue q = newQueue(c);
  cl_mem parent = newBuffer(c, 4 * align, CL_MEM_USE_HOST_PTR, host.data());
  cl_buffer_region r{align, align};
  cl_int err = -1;
  cl_mem sub = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clSetMemObjectDestructorCallback(parent, memGone, &parent_tag));
  ASSERT_CL(CL_SUCCESS, clSetMemObjectDestructorCallback(sub, memGone, &sub_tag));
  cl_event gate = newUserEvent(c);
  cl_uchar pat = 0x99;
  ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(q, sub, &pat, 1, 0, align, 1, &gate, nullptr));
  enqueueMapForReading(q, parent, 4 * align);
  EXPECT_CL_OK(clReleaseMemObject(parent));
  EXPECT_CL_OK(clReleaseMemObject(sub));
  EXPECT_CL_OK(clReleaseCommandQueue(q));
  EXPECT_CL_OK(clReleaseContext(c));
  EXPECT_EQ(0, log.count("parent"));
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_CL_OK(clReleaseEvent(gate));
  ASSERT_TRUE(log.waitFor("context"));
  EXPECT_EQ(0x99, host[align]);
  EXPECT_EQ(0, host[align - 1]);
  EXPECT_EQ(0, host[2 * align]);
  // The sub-buffer goes before its parent, both before the context.
  EXPECT_EQ((std::vector<std::string>{"sub", "parent", "context"}), log.snapshot());
}

TEST_F(Lifetime, ManyQueuesAndContextsAreAllFreed) {
  DestroyLog log;
  Tag ctx_tag{&log, "context"};
  constexpr int kRounds = 20;
  for (int i = 0; i < kRounds; ++i) {
    cl_context c = newContext();
    ASSERT_CL(CL_SUCCESS, clSetContextDestructorCallback(c, contextGone, &ctx_tag));
    for (int j = 0; j < 3; ++j) {
      cl_command_queue q = newQueue(c, j == 1 ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0);
      for (int k = 0; k < 5; ++k)
        ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 0, nullptr, nullptr));
      EXPECT_CL_OK(clReleaseCommandQueue(q));  // without clFinish: the release flushes
    }
    EXPECT_CL_OK(clReleaseContext(c));
  }
  for (int i = 0; i < 2000 && log.count("context") < kRounds; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(kRounds, log.count("context"));
}

TEST_F(Lifetime, DestructorCallbackRegisteredLateStillFiresOnce) {
  DestroyLog log;
  Tag tag{&log, "buffer"};
  cl_context c = newContext();
  cl_command_queue q = newQueue(c);
  cl_mem m = newBuffer(c, 64);
  cl_event gate = newUserEvent(c);
  cl_uchar pat = 1;
  ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(q, m, &pat, 1, 0, 64, 1, &gate, nullptr));
  ASSERT_CL(CL_SUCCESS, clSetMemObjectDestructorCallback(m, memGone, &tag));
  EXPECT_CL_OK(clReleaseMemObject(m));
  EXPECT_EQ(0, log.count("buffer"));
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(q));
  EXPECT_TRUE(log.waitFor("buffer"));
  EXPECT_CL_OK(clReleaseEvent(gate));
  EXPECT_CL_OK(clReleaseCommandQueue(q));
  EXPECT_CL_OK(clReleaseContext(c));
  EXPECT_EQ(1, log.count("buffer"));
}

}  // namespace
