// Failure propagation, lifetime and waiting across queues and devices of one context
// (MANIFOLD_TEST_DEVICE_TYPE=all puts the CPU and the GPUs in it; the queues below then sit on
// different devices, in CI they are several queues of the CPU device):
// - a user event set to a negative status fails its dependents with
//   CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, transitively, across queues, and they have no
//   effect; commands that only follow a failed one in an in-order queue still run; nothing hangs;
// - releasing queues, events, kernels and buffers while their commands wait for a user event is
//   safe, and the commands still run;
// - event callbacks and clWaitForEvents over events of several queues and devices.
#include <thread>

#include "sched_test.h"

namespace {

using namespace schedtest;

constexpr const char* kSource = R"CLC(
kernel void step(global uint* x, uint salt) {
  size_t i = get_global_id(0);
  x[i] = x[i] * 1664525u + salt;
}
kernel void add(global const uint* a, global uint* out) {
  size_t i = get_global_id(0);
  out[i] += a[i];
}
)CLC";

constexpr size_t kElems = 1024;
constexpr size_t kBytes = kElems * 4;

uint32_t stepped(uint32_t x, uint32_t salt) { return x * 1664525u + salt; }

class Failure : public MultiDeviceTest {
 protected:
  void SetUp() override {
    MultiDeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // first_: the first device (the CPU with "all"), other_: the last one (a GPU with "all").
    first_ = devices_.front();
    other_ = devices_.back();
    qa_ = makeQueue(first_, CL_QUEUE_PROFILING_ENABLE);
    qb_ = makeQueue(other_, 0);
    qc_ = makeQueue(devices_[devices_.size() / 2], supportsOutOfOrder(devices_[devices_.size() / 2])
                                                       ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
                                                       : 0);
    ASSERT_TRUE(qa_ && qb_ && qc_);
    program_ = build(kSource);
    ASSERT_FALSE(HasFailure());
    step_ = kernel(program_, "step");
    add_ = kernel(program_, "add");
    ASSERT_FALSE(HasFailure());
  }
  void TearDown() override {
    for (cl_command_queue q : {qa_.get(), qb_.get(), qc_.get()})
      if (q) clFinish(q);
  }

  Mem bufferWith(uint32_t base) {
    std::vector<uint32_t> v(kElems);
    for (size_t i = 0; i < kElems; ++i) v[i] = base + static_cast<uint32_t>(i);
    return makeBuffer(kBytes, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, v.data());
  }
  std::vector<uint32_t> readAll(cl_command_queue q, cl_mem m) {
    std::vector<uint32_t> v(kElems);
    EXPECT_CL_OK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, kBytes, v.data(), 0, nullptr, nullptr));
    return v;
  }
  cl_int enqueueStep(cl_command_queue q, cl_kernel k, cl_mem m, cl_uint salt,
                     std::vector<cl_event> waits, cl_event* out) {
    setArg(k, 0, m);
    setArg(k, 1, salt);
    const size_t global = kElems;
    return clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr,
                                  static_cast<cl_uint>(waits.size()),
                                  waits.empty() ? nullptr : waits.data(), out);
  }

  cl_device_id first_ = nullptr, other_ = nullptr;
  Queue qa_, qb_, qc_;
  Program program_;
  Kernel step_, add_;
};

TEST_F(Failure, NegativeUserEventFailsDependentsTransitivelyAcrossQueues) {
  Mem x = bufferWith(100), y = bufferWith(5000);
  Event gate = makeUserEvent();
  std::vector<uint32_t> src(kElems, 7), sink(kElems, 0xabababab);
  Event write, kern, marker, copy, read, barrier;
  cl_event g = gate;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(qa_, x, CL_FALSE, 0, kBytes, src.data(), 1, &g, write.out()));
  ASSERT_CL(CL_SUCCESS, enqueueStep(qb_, step_, x, 3, {write}, kern.out()));
  cl_event k = kern;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(qc_, 1, &k, marker.out()));
  cl_event mk = marker;
  ASSERT_CL(CL_SUCCESS, clEnqueueCopyBuffer(qa_, x, y, 0, 0, kBytes, 1, &mk, copy.out()));
  cl_event cp = copy;
  ASSERT_CL(CL_SUCCESS, clEnqueueBarrierWithWaitList(qb_, 1, &cp, barrier.out()));
  cl_event br = barrier;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(qc_, y, CL_FALSE, 0, kBytes, sink.data(), 1, &br, read.out()));
  for (cl_command_queue q : {qa_.get(), qb_.get(), qc_.get()}) EXPECT_CL_OK(clFlush(q));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  for (cl_event e : {write.get(), kern.get(), marker.get(), copy.get(), barrier.get(), read.get()})
    EXPECT_GT(eventStatus(e), CL_COMPLETE) << "ran before its gate was set";

  EXPECT_CL_OK(clSetUserEventStatus(gate, -42));
  for (cl_command_queue q : {qa_.get(), qb_.get(), qc_.get()}) EXPECT_CL_OK(clFinish(q));
  EXPECT_STATUS(-42, eventStatus(gate));
  for (cl_event e : {write.get(), kern.get(), marker.get(), copy.get(), barrier.get(), read.get()})
    EXPECT_STATUS(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, eventStatus(e));
  cl_event all[] = {write, kern, marker, copy, barrier, read};
  EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, clWaitForEvents(6, all));
  // None of them ran: both buffers keep their initial content, the host sink is untouched.
  std::vector<uint32_t> x0(kElems), y0(kElems);
  for (size_t i = 0; i < kElems; ++i) {
    x0[i] = 100 + static_cast<uint32_t>(i);
    y0[i] = 5000 + static_cast<uint32_t>(i);
  }
  EXPECT_EQ(x0, readAll(qb_, x));
  EXPECT_EQ(y0, readAll(qa_, y));
  EXPECT_EQ(std::vector<uint32_t>(kElems, 0xabababab), sink);
}

TEST_F(Failure, InOrderCommandsAfterAFailedOneStillRun) {
  Mem x = bufferWith(0), y = bufferWith(1000);
  Event gate = makeUserEvent();
  cl_event g = gate;
  std::vector<uint32_t> src(kElems, 9);
  Event failed, fill, kern, other;
  // qa_ is in-order: the fill and the kernel follow the failing write by queue order only.
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(qa_, x, CL_FALSE, 0, kBytes, src.data(), 1, &g, failed.out()));
  const uint32_t pattern = 77;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueFillBuffer(qa_, y, &pattern, 4, 0, kBytes, 0, nullptr, fill.out()));
  ASSERT_CL(CL_SUCCESS, enqueueStep(qa_, step_, y, 11, {}, kern.out()));
  // A command of another queue (device) that lists the kernel: runs too.
  ASSERT_CL(CL_SUCCESS, enqueueStep(qb_, step_, y, 13, {kern}, other.out()));
  EXPECT_CL_OK(clFlush(qa_));
  EXPECT_CL_OK(clSetUserEventStatus(gate, -1));
  EXPECT_CL_OK(clFinish(qb_));
  EXPECT_CL_OK(clFinish(qa_));
  EXPECT_STATUS(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, eventStatus(failed));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(fill));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(kern));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(other));
  EXPECT_EQ(std::vector<uint32_t>(kElems, stepped(stepped(77, 11), 13)), readAll(qc_, y));
  std::vector<uint32_t> x0(kElems);
  for (size_t i = 0; i < kElems; ++i) x0[i] = static_cast<uint32_t>(i);
  EXPECT_EQ(x0, readAll(qc_, x));
}

TEST_F(Failure, OutOfOrderBarrierOnAFailedEventDoesNotBlockLaterCommands) {
  Mem y = bufferWith(0);
  Event gate = makeUserEvent();
  cl_event g = gate;
  Event barrier, later;
  ASSERT_CL(CL_SUCCESS, clEnqueueBarrierWithWaitList(qc_, 1, &g, barrier.out()));
  const uint32_t pattern = 5;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueFillBuffer(qc_, y, &pattern, 4, 0, kBytes, 0, nullptr, later.out()));
  EXPECT_CL_OK(clFlush(qc_));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GT(eventStatus(later), CL_COMPLETE) << "ran before the barrier ended";
  EXPECT_CL_OK(clSetUserEventStatus(gate, -3));
  EXPECT_CL_OK(clFinish(qc_));
  EXPECT_STATUS(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, eventStatus(barrier));
  // The fill follows the barrier by queue order, not by its wait list.
  EXPECT_STATUS(CL_COMPLETE, eventStatus(later));
  EXPECT_EQ(std::vector<uint32_t>(kElems, 5), readAll(qa_, y));
}

TEST_F(Failure, WaitersOnOtherThreadsWakeWhenAGateFails) {
  Mem x = bufferWith(0);
  Event gate = makeUserEvent();
  cl_event g = gate;
  Event a, b;
  ASSERT_CL(CL_SUCCESS, enqueueStep(qa_, step_, x, 1, {g}, a.out()));
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(qb_, 1, &g, b.out()));
  cl_event both[] = {a, b};
  std::atomic<int> woke{0};
  std::vector<std::thread> waiters;
  std::vector<cl_int> results(4, 1);
  for (int t = 0; t < 4; ++t)
    waiters.emplace_back([&, t] {
      results[t] = t % 2 ? clWaitForEvents(2, both) : clFinish(t == 0 ? qa_.get() : qb_.get());
      woke++;
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(0, woke.load()) << "a waiter returned before the gate was set";
  EXPECT_CL_OK(clSetUserEventStatus(gate, -8));
  for (auto& t : waiters) t.join();
  EXPECT_CL_OK(results[0]);
  EXPECT_CL_OK(results[2]);
  EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, results[1]);
  EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, results[3]);
}

// Everything but the gate and the host-side result is released before the gate is set: the
// commands must still run, and nothing may be freed under them.
TEST_F(Failure, ReleasingHandlesWhilePendingIsSafeAndCommandsStillRun) {
  Event gate = makeUserEvent();
  cl_event g = gate;
  std::vector<uint32_t> src(kElems), result(kElems, 0);
  for (size_t i = 0; i < kElems; ++i) src[i] = static_cast<uint32_t>(i * 3);
  Event done;
  std::atomic<int> callback_calls{0};
  {
    Queue tmp = makeQueue(other_, 0);
    Queue tmp_ooo =
        makeQueue(first_, supportsOutOfOrder(first_) ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0);
    Mem a = makeBuffer(kBytes), acc = bufferWith(1);
    Program p = build(kSource);
    Kernel step = kernel(p, "step"), add = kernel(p, "add");
    ASSERT_FALSE(HasFailure());
    Event w, s, ad, mk;
    ASSERT_CL(CL_SUCCESS,
              clEnqueueWriteBuffer(tmp, a, CL_FALSE, 0, kBytes, src.data(), 1, &g, w.out()));
    ASSERT_CL(CL_SUCCESS, enqueueStep(tmp, step, a, 17, {}, s.out()));
    setArg(add, 0, a.get());
    setArg(add, 1, acc.get());
    const size_t global = kElems;
    cl_event se = s;
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(tmp_ooo, add, 1, nullptr, &global, nullptr, 1, &se, ad.out()));
    cl_event ae = ad;
    ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(tmp_ooo, 1, &ae, mk.out()));
    cl_event me = mk;
    ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(qb_, acc, CL_FALSE, 0, kBytes, result.data(), 1, &me,
                                              done.out()));
    EXPECT_CL_OK(clSetEventCallback(
        ad, CL_COMPLETE,
        [](cl_event, cl_int, void* u) { static_cast<std::atomic<int>*>(u)->fetch_add(1); },
        &callback_calls));
    EXPECT_CL_OK(clFlush(tmp));
    EXPECT_CL_OK(clFlush(tmp_ooo));
    // Leaving the scope releases both queues, both buffers, the program, the kernels and the
    // intermediate events while all of them wait for the gate.
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GT(eventStatus(done), CL_COMPLETE);
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  cl_event d = done;
  EXPECT_CL_OK(clWaitForEvents(1, &d));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(done));
  for (size_t i = 0; i < kElems; ++i)
    ASSERT_EQ(1 + i + stepped(static_cast<uint32_t>(i * 3), 17), result[i]) << "element " << i;
  for (int t = 0; t < 2000 && callback_calls.load() == 0; ++t)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(1, callback_calls.load());
}

// The context itself, every queue and the gate's dependents released; only the gate is kept.
TEST_F(Failure, ReleasingTheContextWhilePendingIsSafe) {
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, static_cast<cl_uint>(devices_.size()), devices_.data(),
                                   nullptr, nullptr, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  cl_event gate = clCreateUserEvent(ctx, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  std::vector<uint32_t> out_a(kElems, 0), out_b(kElems, 0);
  std::atomic<int> completions{0};
  auto count = [](cl_event, cl_int status, void* u) {
    if (status == CL_COMPLETE) static_cast<std::atomic<int>*>(u)->fetch_add(1);
  };
  // Two rounds, on the first and the last device (the same one in CI): two queues, two buffers.
  for (int round = 0; round < 2; ++round) {
    cl_device_id d = round == 0 ? first_ : other_;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d, nullptr, &err);
    ASSERT_ERR(CL_SUCCESS, err);
    uint32_t pattern = round == 0 ? 0x1111u : 0x2222u;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, kBytes, nullptr, &err);
    ASSERT_ERR(CL_SUCCESS, err);
    cl_event fill = nullptr, read = nullptr;
    ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(q, m, &pattern, 4, 0, kBytes, 1, &gate, &fill));
    ASSERT_CL(CL_SUCCESS,
              clEnqueueReadBuffer(q, m, CL_FALSE, 0, kBytes,
                                  round == 0 ? out_a.data() : out_b.data(), 1, &fill, &read));
    EXPECT_CL_OK(clSetEventCallback(read, CL_COMPLETE, count, &completions));
    EXPECT_CL_OK(clFlush(q));
    EXPECT_CL_OK(clReleaseEvent(fill));
    EXPECT_CL_OK(clReleaseEvent(read));
    EXPECT_CL_OK(clReleaseMemObject(m));
    EXPECT_CL_OK(clReleaseCommandQueue(q));
  }
  EXPECT_CL_OK(clReleaseContext(ctx));
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_CL_OK(clReleaseEvent(gate));
  for (int t = 0; t < 10000 && completions.load() < 2; ++t)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(2, completions.load()) << "reads that completed after everything was released";
  EXPECT_EQ(std::vector<uint32_t>(kElems, 0x1111u), out_a);
  EXPECT_EQ(std::vector<uint32_t>(kElems, 0x2222u), out_b);
}

struct StatusLog {
  std::mutex mutex;
  std::vector<std::pair<cl_event, cl_int>> calls;
};
void CL_CALLBACK logStatus(cl_event e, cl_int status, void* user) {
  auto* log = static_cast<StatusLog*>(user);
  std::lock_guard lock(log->mutex);
  log->calls.push_back({e, status});
}

TEST_F(Failure, CallbacksAndWaitForEventsAcrossQueuesAndDevices) {
  // One command per queue and device, all gated by one user event; a callback for each status.
  Event gate = makeUserEvent();
  cl_event g = gate;
  std::vector<Queue> queues;
  for (cl_device_id d : devices_) {
    queues.push_back(makeQueue(d, 0));
    queues.push_back(
        makeQueue(d, supportsOutOfOrder(d) ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0));
  }
  std::vector<Mem> buffers;
  std::vector<Event> events;
  StatusLog log;
  for (size_t i = 0; i < queues.size(); ++i) {
    buffers.push_back(bufferWith(static_cast<uint32_t>(i * 10000)));
    Event e;
    ASSERT_CL(CL_SUCCESS,
              enqueueStep(queues[i], step_, buffers[i], static_cast<cl_uint>(i), {g}, e.out()));
    for (cl_int s : {CL_SUBMITTED, CL_RUNNING, CL_COMPLETE})
      EXPECT_CL_OK(clSetEventCallback(e, s, logStatus, &log));
    EXPECT_CL_OK(clFlush(queues[i]));
    events.push_back(std::move(e));
  }
  std::vector<cl_event> list;
  for (auto& e : events) list.push_back(e);
  // The gate is set by another thread while this one sleeps in clWaitForEvents.
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    clSetUserEventStatus(gate, CL_COMPLETE);
  });
  EXPECT_CL_OK(clWaitForEvents(static_cast<cl_uint>(list.size()), list.data()));
  setter.join();
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_STATUS(CL_COMPLETE, eventStatus(events[i]));
    auto v = readAll(qa_, buffers[i]);
    for (size_t j = 0; j < kElems; j += 257)
      EXPECT_EQ(stepped(static_cast<uint32_t>(i * 10000 + j), static_cast<uint32_t>(i)), v[j])
          << "queue " << i;
  }
  // Every callback once, with the status it was registered for.
  for (int t = 0; t < 2000; ++t) {
    {
      std::lock_guard lock(log.mutex);
      if (log.calls.size() >= 3 * events.size()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::lock_guard lock(log.mutex);
  EXPECT_EQ(3 * events.size(), log.calls.size());
  for (cl_event e : list)
    for (cl_int s : {CL_SUBMITTED, CL_RUNNING, CL_COMPLETE})
      EXPECT_EQ(1, std::count(log.calls.begin(), log.calls.end(), std::make_pair(e, s)))
          << "callback for status " << statusName(s);
}

TEST_F(Failure, FailedGateReachesEveryCallbackWithTheError) {
  Event gate = makeUserEvent();
  cl_event g = gate;
  Mem x = bufferWith(0);
  StatusLog log;
  Event a, b, c;
  ASSERT_CL(CL_SUCCESS, enqueueStep(qa_, step_, x, 1, {g}, a.out()));
  cl_event ae = a;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(qb_, 1, &ae, b.out()));
  cl_event be = b;
  ASSERT_CL(CL_SUCCESS, enqueueStep(qc_, step_, x, 2, {be}, c.out()));
  for (cl_event e : {a.get(), b.get(), c.get()})
    for (cl_int s : {CL_SUBMITTED, CL_RUNNING, CL_COMPLETE})
      EXPECT_CL_OK(clSetEventCallback(e, s, logStatus, &log));
  EXPECT_CL_OK(clSetUserEventStatus(gate, -99));
  cl_event all[] = {a, b, c};
  EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, clWaitForEvents(3, all));
  for (int t = 0; t < 2000; ++t) {
    {
      std::lock_guard lock(log.mutex);
      if (log.calls.size() >= 9) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::lock_guard lock(log.mutex);
  // The spec: a callback registered for a status is called when the command reaches it or
  // terminates abnormally, then with the error.
  EXPECT_EQ(9u, log.calls.size());
  for (auto [e, s] : log.calls) EXPECT_STATUS(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, s);
}

}  // namespace
