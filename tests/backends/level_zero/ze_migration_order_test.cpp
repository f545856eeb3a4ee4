// Migrations on the Level Zero device in a context shared with the CPU, where commands of one
// out-of-order queue reach the device's one in-order command list in an order of their own.
// A command's migrations are planned when it is submitted (scheduler/migration.h); two commands
// of an out-of-order queue that do not depend on each other are planned and submitted by
// whichever threads resolve them, so the one planned second may be on the command list first.
// A profiling queue's CL_SUBMITTED callbacks run after a command's migrations are planned and
// before it goes to the command list: the tests hold a command there, on the thread that
// resolved it, while they enqueue another.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "ze_test_devices.h"

namespace {

using ze_test::find_device;

// A CL_SUBMITTED callback that keeps the submitting thread until release() (or a timeout, so
// that a test that goes wrong still ends).
class SubmissionGate {
 public:
  static void CL_CALLBACK hold(cl_event, cl_int, void* user) {
    auto* gate = static_cast<SubmissionGate*>(user);
    std::unique_lock lock(gate->mutex_);
    gate->entered_ = true;
    gate->changed_.notify_all();
    gate->changed_.wait_for(lock, std::chrono::seconds(20), [&] { return gate->released_; });
  }
  bool wait_entered() {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(20), [&] { return entered_; });
  }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool entered_ = false, released_ = false;
};

class LevelZeroMigrationOrder : public ::testing::Test {
 protected:
  void SetUp() override {
    devices_[0] = find_device(true);
    devices_[1] = find_device(false);
    ASSERT_NE(devices_[0], nullptr) << "the test driver's device (ZE_ENABLE_ALT_DRIVERS)";
    ASSERT_NE(devices_[1], nullptr) << "the CPU device";
    cl_int error = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 2, devices_, nullptr, nullptr, &error);
    ASSERT_EQ(error, CL_SUCCESS);
    gpu_ = clCreateCommandQueueWithProperties(context_, devices_[0], nullptr, &error);
    ASSERT_EQ(error, CL_SUCCESS);
    cpu_ = clCreateCommandQueueWithProperties(context_, devices_[1], nullptr, &error);
    ASSERT_EQ(error, CL_SUCCESS);
    const cl_queue_properties unordered[] = {
        CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE, 0};
    unordered_ = clCreateCommandQueueWithProperties(context_, devices_[0], unordered, &error);
    ASSERT_EQ(error, CL_SUCCESS);
  }
  void TearDown() override {
    for (cl_command_queue q : {unordered_, cpu_, gpu_})
      if (q) clReleaseCommandQueue(q);
    if (context_) clReleaseContext(context_);
  }

  // A buffer whose current bytes are `current`, in host memory only, while the GPU's copy still
  // holds `stale`: written on the GPU, then overwritten on the CPU.
  cl_mem stale_on_the_gpu(const std::vector<cl_uint>& stale, const std::vector<cl_uint>& current) {
    const size_t bytes = current.size() * sizeof(cl_uint);
    cl_int error = CL_SUCCESS;
    cl_mem buffer = clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &error);
    EXPECT_EQ(error, CL_SUCCESS);
    EXPECT_EQ(
        clEnqueueWriteBuffer(gpu_, buffer, CL_TRUE, 0, bytes, stale.data(), 0, nullptr, nullptr),
        CL_SUCCESS);
    EXPECT_EQ(
        clEnqueueWriteBuffer(cpu_, buffer, CL_TRUE, 0, bytes, current.data(), 0, nullptr, nullptr),
        CL_SUCCESS);
    return buffer;
  }

  cl_device_id devices_[2] = {nullptr, nullptr};
  cl_context context_ = nullptr;
  cl_command_queue gpu_ = nullptr, cpu_ = nullptr, unordered_ = nullptr;
};

// Two reads of one out-of-order queue, neither waiting for the other, of bytes current only in
// host memory: the first, resolved on another thread, plans the copy to the GPU and is held
// before the command list; the second is planned and on the list meanwhile. Each must read the
// current bytes, never the GPU's stale copy that the first one's copy has not replaced yet.
TEST_F(LevelZeroMigrationOrder, UnorderedReadsOfAnOutOfOrderQueueSeeTheCurrentBytes) {
  constexpr size_t n = 1024;
  std::vector<cl_uint> stale(n), current(n);
  for (size_t i = 0; i < n; ++i) {
    stale[i] = cl_uint(0xdead0000u + i);
    current[i] = cl_uint(i * 2654435761u);
  }
  cl_mem buffer = stale_on_the_gpu(stale, current);
  ASSERT_FALSE(HasFailure());

  cl_int error = CL_SUCCESS;
  cl_event gate_event = clCreateUserEvent(context_, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  std::vector<cl_uint> first(n, 0), second(n, 0);
  cl_event first_read = nullptr, second_read = nullptr;
  ASSERT_EQ(clEnqueueReadBuffer(unordered_, buffer, CL_FALSE, 0, n * sizeof(cl_uint), first.data(),
                                1, &gate_event, &first_read),
            CL_SUCCESS);
  SubmissionGate gate;
  ASSERT_EQ(clSetEventCallback(first_read, CL_SUBMITTED, SubmissionGate::hold, &gate), CL_SUCCESS);
  // The first read is planned and held on this thread.
  std::thread resolver([&] { clSetUserEventStatus(gate_event, CL_COMPLETE); });
  const bool held = gate.wait_entered();
  EXPECT_TRUE(held) << "the first read's CL_SUBMITTED callback did not run";
  if (held) {
    EXPECT_EQ(clEnqueueReadBuffer(unordered_, buffer, CL_FALSE, 0, n * sizeof(cl_uint),
                                  second.data(), 0, nullptr, &second_read),
              CL_SUCCESS);
    // It needs nothing of the first read: it completes while that one is still held.
    EXPECT_EQ(clWaitForEvents(1, &second_read), CL_SUCCESS);
    // The premise: the first read is not on the command list yet (the list would have run it
    // before the second).
    cl_int first_status = CL_COMPLETE;
    clGetEventInfo(first_read, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof first_status,
                   &first_status, nullptr);
    EXPECT_EQ(first_status, CL_SUBMITTED) << "the first read was not held before the list";
  }
  gate.release();
  resolver.join();
  EXPECT_EQ(clFinish(unordered_), CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(first[i], current[i]) << "first read, element " << i;
    ASSERT_EQ(second[i], current[i])
        << "second read, element " << i << (second[i] == stale[i] ? " (the GPU's stale copy)" : "");
  }
  if (second_read) clReleaseEvent(second_read);
  clReleaseEvent(first_read);
  clReleaseEvent(gate_event);
  clReleaseMemObject(buffer);
}

}  // namespace
