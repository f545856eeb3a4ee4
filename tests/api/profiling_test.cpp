// clGetEventProfilingInfo: ordered timestamps with CL_QUEUE_PROFILING_ENABLE,
// CL_PROFILING_INFO_NOT_AVAILABLE without it, for user events and before completion.
#include "cl_test.h"

using namespace cltest;

namespace {

class ProfilingApi : public ContextTest {};

struct Stamps {
  cl_ulong queued = 0, submit = 0, start = 0, end = 0, complete = 0;
};

Stamps stamps(cl_event e) {
  Stamps s;
  EXPECT_CL_OK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED, sizeof(s.queued), &s.queued,
                                       nullptr));
  EXPECT_CL_OK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_SUBMIT, sizeof(s.submit), &s.submit,
                                       nullptr));
  EXPECT_CL_OK(
      clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof(s.start), &s.start, nullptr));
  EXPECT_CL_OK(
      clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof(s.end), &s.end, nullptr));
  EXPECT_CL_OK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_COMPLETE, sizeof(s.complete),
                                       &s.complete, nullptr));
  return s;
}

void expectOrdered(const Stamps& s) {
  EXPECT_GT(s.queued, 0u);
  EXPECT_LE(s.queued, s.submit);
  EXPECT_LE(s.submit, s.start);
  EXPECT_LE(s.start, s.end);
  // The spec (2.0+): CL_PROFILING_COMMAND_COMPLETE is >= CL_PROFILING_COMMAND_END.
  EXPECT_LE(s.end, s.complete);
}

TEST_F(ProfilingApi, TimestampsAreOrdered) {
  for (cl_command_queue_properties mode :
       {cl_command_queue_properties(0),
        cl_command_queue_properties(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)}) {
    Queue q = makeQueue(CL_QUEUE_PROFILING_ENABLE | mode);
    ASSERT_TRUE(q);
    const size_t n = 1 << 20;
    Mem m = makeBuffer(n);
    std::vector<unsigned char> d(n, 1);
    Event w, r, f, mk;
    ASSERT_CL(CL_SUCCESS, clEnqueueWriteBuffer(q, m, CL_TRUE, 0, n, d.data(), 0, nullptr, w.out()));
    cl_uint pat = 2;
    cl_event we = w;
    ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(q, m, &pat, 4, 0, n, 1, &we, f.out()));
    cl_event fe = f;
    ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(q, m, CL_TRUE, 0, n, d.data(), 1, &fe, r.out()));
    ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 0, nullptr, mk.out()));
    EXPECT_CL_OK(clFinish(q));
    Stamps sw = stamps(w), sf = stamps(f), sr = stamps(r), sm = stamps(mk);
    expectOrdered(sw);
    expectOrdered(sf);
    expectOrdered(sr);
    expectOrdered(sm);
    // Dependent commands run one after the other.
    EXPECT_LE(sw.end, sf.start);
    EXPECT_LE(sf.end, sr.start);
    EXPECT_LE(sw.queued, sf.queued);
    EXPECT_LE(sf.queued, sr.queued);
  }
}

TEST_F(ProfilingApi, TimestampsOfACommandThatWaited) {
  Queue q = makeQueue(CL_QUEUE_PROFILING_ENABLE);
  Event gate = makeUserEvent();
  cl_event g = gate;
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 1, &g, e.out()));
  cl_ulong t = 0;
  // The spec: CL_PROFILING_INFO_NOT_AVAILABLE if the execution status of the command identified
  // by event is not CL_COMPLETE.
  EXPECT_CL(CL_PROFILING_INFO_NOT_AVAILABLE,
            clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED, sizeof(t), &t, nullptr));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(q));
  Stamps s = stamps(e);
  expectOrdered(s);
  // It waited for the user event before it was submitted.
  EXPECT_LT(s.queued, s.submit);
}

TEST_F(ProfilingApi, NotAvailableWithoutProperty) {
  Mem m = makeBuffer(64);
  char d[64] = {};
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueWriteBuffer(queue_, m, CL_TRUE, 0, 64, d, 0, nullptr, e.out()));
  cl_ulong t = 0;
  // The spec: CL_PROFILING_INFO_NOT_AVAILABLE if the CL_QUEUE_PROFILING_ENABLE flag is not set
  // for the command-queue.
  for (cl_profiling_info p :
       {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT, CL_PROFILING_COMMAND_START,
        CL_PROFILING_COMMAND_END, CL_PROFILING_COMMAND_COMPLETE})
    EXPECT_CL(CL_PROFILING_INFO_NOT_AVAILABLE,
              clGetEventProfilingInfo(e, p, sizeof(t), &t, nullptr));
}

TEST_F(ProfilingApi, NotAvailableForUserEvents) {
  Event u = makeUserEvent();
  EXPECT_CL_OK(clSetUserEventStatus(u, CL_COMPLETE));
  cl_ulong t = 0;
  // The spec: CL_PROFILING_INFO_NOT_AVAILABLE if event is a user event object.
  EXPECT_CL(CL_PROFILING_INFO_NOT_AVAILABLE,
            clGetEventProfilingInfo(u, CL_PROFILING_COMMAND_END, sizeof(t), &t, nullptr));
}

TEST_F(ProfilingApi, InvalidArguments) {
  Queue q = makeQueue(CL_QUEUE_PROFILING_ENABLE);
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 0, nullptr, e.out()));
  EXPECT_CL_OK(clFinish(q));
  cl_ulong t = 0;
  // The spec: CL_INVALID_VALUE if param_name is not valid, or if size in bytes specified by
  // param_value_size is < size of return type and param_value is not NULL.
  EXPECT_CL(CL_INVALID_VALUE, clGetEventProfilingInfo(e, 0x7777, sizeof(t), &t, nullptr));
  cl_uint small = 0;
  EXPECT_CL(CL_INVALID_VALUE,
            clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof(small), &small, nullptr));
  size_t size = 0;
  EXPECT_CL_OK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, 0, nullptr, &size));
  EXPECT_EQ(sizeof(cl_ulong), size);
  EXPECT_CL(CL_INVALID_EVENT,
            clGetEventProfilingInfo(nullptr, CL_PROFILING_COMMAND_END, sizeof(t), &t, nullptr));
}

TEST_F(ProfilingApi, FailedCommandHasNoProfilingInfo) {
  Queue q = makeQueue(CL_QUEUE_PROFILING_ENABLE);
  Event gate = makeUserEvent();
  cl_event g = gate;
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 1, &g, e.out()));
  EXPECT_CL_OK(clSetUserEventStatus(gate, -1));
  EXPECT_CL_OK(clFinish(q));
  cl_ulong t = 0;
  EXPECT_CL(CL_PROFILING_INFO_NOT_AVAILABLE,
            clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof(t), &t, nullptr));
}

TEST_F(ProfilingApi, HostTimerIsInTheSameClock) {
  Queue q = makeQueue(CL_QUEUE_PROFILING_ENABLE);
  cl_ulong before = 0, after = 0;
  if (clGetHostTimer(device_, &before) != CL_SUCCESS) GTEST_SKIP() << "no host timer";
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 0, nullptr, e.out()));
  EXPECT_CL_OK(clFinish(q));
  ASSERT_CL(CL_SUCCESS, clGetHostTimer(device_, &after));
  cl_ulong device_ts = 0, host_ts = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceAndHostTimer(device_, &device_ts, &host_ts));
  Stamps s = stamps(e);
  // The spec: profiling timestamps are in the device timer's clock; on the CPU device that is the
  // host clock, so the command ran between the two host timer readings.
  if (device_ts == host_ts) {
    EXPECT_LE(before, s.queued);
    EXPECT_LE(s.end, after);
  }
}

}  // namespace
