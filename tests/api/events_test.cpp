// Events: user events, clSetEventCallback for each status (also from other threads), wait lists
// (invalid events, events of other contexts), markers and barriers with wait lists,
// clWaitForEvents, failure propagation, event info, legacy sync commands.
#include <atomic>
#include <thread>

#include "cl_test.h"

using namespace cltest;

namespace {

class EventsApi : public ContextTest {};

TEST_F(EventsApi, UserEventBasics) {
  Event u = makeUserEvent();
  ASSERT_TRUE(u);
  // The spec: the execution status of a newly created user event is CL_SUBMITTED.
  EXPECT_STATUS(CL_SUBMITTED, eventStatus(u));
  EXPECT_EQ(cl_command_type(CL_COMMAND_USER), eventInfo<cl_command_type>(u, CL_EVENT_COMMAND_TYPE));
  EXPECT_EQ(nullptr, eventInfo<cl_command_queue>(u, CL_EVENT_COMMAND_QUEUE));
  EXPECT_EQ(context_.get(), eventInfo<cl_context>(u, CL_EVENT_CONTEXT));
  EXPECT_EQ(1u, refCount(u.get()));
  EXPECT_CL_OK(clSetUserEventStatus(u, CL_COMPLETE));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(u));
  // The spec: CL_INVALID_OPERATION if the execution_status for event has already been changed by
  // a previous call to clSetUserEventStatus.
  EXPECT_CL(CL_INVALID_OPERATION, clSetUserEventStatus(u, CL_COMPLETE));
  EXPECT_CL(CL_INVALID_OPERATION, clSetUserEventStatus(u, -5));
}

TEST_F(EventsApi, UserEventInvalidStatus) {
  Event u = makeUserEvent();
  // The spec: CL_INVALID_VALUE if the execution_status is not CL_COMPLETE or a negative integer
  // value.
  EXPECT_CL(CL_INVALID_VALUE, clSetUserEventStatus(u, CL_SUBMITTED));
  EXPECT_CL(CL_INVALID_VALUE, clSetUserEventStatus(u, CL_RUNNING));
  EXPECT_CL(CL_INVALID_VALUE, clSetUserEventStatus(u, 17));
  EXPECT_STATUS(CL_SUBMITTED, eventStatus(u));
  EXPECT_CL_OK(clSetUserEventStatus(u, -1));
  EXPECT_STATUS(-1, eventStatus(u));
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(nullptr, clCreateUserEvent(nullptr, &err));
  EXPECT_ERR(CL_INVALID_CONTEXT, err);
}

TEST_F(EventsApi, SetStatusOnACommandEventIsInvalid) {
  Event m;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(queue_, 0, nullptr, m.out()));
  // The spec: CL_INVALID_EVENT if event is not a valid user event object.
  EXPECT_CL(CL_INVALID_EVENT, clSetUserEventStatus(m, CL_COMPLETE));
  EXPECT_CL(CL_INVALID_EVENT, clSetUserEventStatus(nullptr, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(EventsApi, RetainRelease) {
  Event u = makeUserEvent();
  EXPECT_CL_OK(clRetainEvent(u));
  EXPECT_EQ(2u, refCount(u.get()));
  EXPECT_CL_OK(clReleaseEvent(u));
  EXPECT_EQ(1u, refCount(u.get()));
  EXPECT_CL(CL_INVALID_EVENT, clRetainEvent(nullptr));
  EXPECT_CL(CL_INVALID_EVENT, clReleaseEvent(nullptr));
  EXPECT_CL_OK(clSetUserEventStatus(u, CL_COMPLETE));
}

TEST_F(EventsApi, InfoQueries) {
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(queue_, 0, nullptr, e.out()));
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_EQ(queue_.get(), eventInfo<cl_command_queue>(e, CL_EVENT_COMMAND_QUEUE));
  EXPECT_EQ(context_.get(), eventInfo<cl_context>(e, CL_EVENT_CONTEXT));
  EXPECT_EQ(cl_command_type(CL_COMMAND_MARKER),
            eventInfo<cl_command_type>(e, CL_EVENT_COMMAND_TYPE));
  EXPECT_STATUS(CL_COMPLETE, eventInfo<cl_int>(e, CL_EVENT_COMMAND_EXECUTION_STATUS));
  cl_uint v = 0;
  // The spec: CL_INVALID_VALUE if param_name is not valid, or if size in bytes specified by
  // param_value_size is < size of return type and param_value is not NULL.
  EXPECT_CL(CL_INVALID_VALUE, clGetEventInfo(e, 0x7777, sizeof(v), &v, nullptr));
  char one = 0;
  EXPECT_CL(CL_INVALID_VALUE, clGetEventInfo(e, CL_EVENT_COMMAND_QUEUE, 1, &one, nullptr));
  EXPECT_CL(CL_INVALID_EVENT, clGetEventInfo(nullptr, CL_EVENT_CONTEXT, sizeof(v), &v, nullptr));
}

// ---- callbacks ----

struct CallbackRecord {
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::pair<cl_int, cl_int>> calls;  // (registered type, status passed)
  std::vector<std::thread::id> threads;
  std::vector<cl_event> events;
  void add(cl_int type, cl_event e, cl_int status) {
    std::lock_guard<std::mutex> lock(m);
    calls.emplace_back(type, status);
    threads.push_back(std::this_thread::get_id());
    events.push_back(e);
    cv.notify_all();
  }
  // Waits (bounded) until `n` calls were recorded.
  bool waitFor(size_t n) {
    std::unique_lock<std::mutex> lock(m);
    return cv.wait_for(lock, std::chrono::seconds(20), [&] { return calls.size() >= n; });
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(m);
    return calls.size();
  }
};
struct CallbackTag {
  CallbackRecord* rec;
  cl_int type;
};
void CL_CALLBACK recordCallback(cl_event e, cl_int status, void* user) {
  auto* tag = static_cast<CallbackTag*>(user);
  tag->rec->add(tag->type, e, status);
}

TEST_F(EventsApi, CallbacksForEachStatus) {
  Event gate = makeUserEvent();
  cl_event g = gate;
  Mem m = makeBuffer(64);
  cl_uint pat = 7;
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(queue_, m, &pat, 4, 0, 64, 1, &g, e.out()));
  CallbackRecord rec;
  CallbackTag sub{&rec, CL_SUBMITTED}, run{&rec, CL_RUNNING}, done{&rec, CL_COMPLETE};
  EXPECT_CL_OK(clSetEventCallback(e, CL_COMPLETE, recordCallback, &done));
  EXPECT_CL_OK(clSetEventCallback(e, CL_RUNNING, recordCallback, &run));
  EXPECT_CL_OK(clSetEventCallback(e, CL_SUBMITTED, recordCallback, &sub));
  EXPECT_CL_OK(clFlush(queue_));
  // Nothing can have run yet: the command waits for the user event.
  EXPECT_EQ(0u, rec.count());
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(queue_));
  ASSERT_TRUE(rec.waitFor(3));
  std::lock_guard<std::mutex> lock(rec.m);
  ASSERT_EQ(3u, rec.calls.size());
  // The spec: the callback is called when the event reaches the registered status, with that
  // status as the execution status argument.
  for (auto [type, status] : rec.calls) EXPECT_EQ(type, status);
  // Statuses are reached in order: SUBMITTED, RUNNING, COMPLETE.
  EXPECT_EQ(CL_SUBMITTED, rec.calls[0].first);
  EXPECT_EQ(CL_RUNNING, rec.calls[1].first);
  EXPECT_EQ(CL_COMPLETE, rec.calls[2].first);
  for (cl_event x : rec.events) EXPECT_EQ(e.get(), x);
}

TEST_F(EventsApi, CallbackOnAlreadyCompleteEventIsCalled) {
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(queue_, 0, nullptr, e.out()));
  EXPECT_CL_OK(clFinish(queue_));
  CallbackRecord rec;
  CallbackTag sub{&rec, CL_SUBMITTED}, done{&rec, CL_COMPLETE};
  EXPECT_CL_OK(clSetEventCallback(e, CL_SUBMITTED, recordCallback, &sub));
  EXPECT_CL_OK(clSetEventCallback(e, CL_COMPLETE, recordCallback, &done));
  ASSERT_TRUE(rec.waitFor(2));
  std::lock_guard<std::mutex> lock(rec.m);
  for (auto [type, status] : rec.calls) EXPECT_EQ(type, status);
}

TEST_F(EventsApi, CallbacksOnUserEventFromAnotherThread) {
  Event u = makeUserEvent();
  CallbackRecord rec;
  CallbackTag done{&rec, CL_COMPLETE};
  EXPECT_CL_OK(clSetEventCallback(u, CL_COMPLETE, recordCallback, &done));
  std::thread::id setter_id;
  std::thread setter([&] {
    setter_id = std::this_thread::get_id();
    clSetUserEventStatus(u, CL_COMPLETE);
  });
  setter.join();
  ASSERT_TRUE(rec.waitFor(1));
  std::lock_guard<std::mutex> lock(rec.m);
  EXPECT_EQ(CL_COMPLETE, rec.calls[0].second);
  EXPECT_NE(std::this_thread::get_id(), rec.threads[0]);
}

TEST_F(EventsApi, CallbacksOnFailedEventGetTheError) {
  Event gate = makeUserEvent();
  cl_event g = gate;
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(queue_, 1, &g, e.out()));
  CallbackRecord rec;
  CallbackTag sub{&rec, CL_SUBMITTED}, run{&rec, CL_RUNNING}, done{&rec, CL_COMPLETE},
      ud{&rec, 100};
  EXPECT_CL_OK(clSetEventCallback(e, CL_SUBMITTED, recordCallback, &sub));
  EXPECT_CL_OK(clSetEventCallback(e, CL_RUNNING, recordCallback, &run));
  EXPECT_CL_OK(clSetEventCallback(e, CL_COMPLETE, recordCallback, &done));
  EXPECT_CL_OK(clSetEventCallback(gate, CL_COMPLETE, recordCallback, &ud));
  std::thread([&] { clSetUserEventStatus(g, -77); }).join();
  ASSERT_TRUE(rec.waitFor(4));
  EXPECT_CL_OK(clFinish(queue_));
  std::lock_guard<std::mutex> lock(rec.m);
  ASSERT_EQ(4u, rec.calls.size());
  // The spec: if the execution of a command is terminated, the callbacks registered for it are
  // called with the negative error code as execution status.
  for (auto [type, status] : rec.calls) {
    if (type == 100)
      EXPECT_EQ(-77, status);
    else
      EXPECT_EQ(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, status) << "callback type " << type;
  }
}

TEST_F(EventsApi, CallbackMayReleaseItsEventAndEnqueue) {
  struct State {
    cl_command_queue q;
    cl_mem m;
    std::atomic<int> done{0};
    cl_int enqueue_err = 1;
  } st;
  Mem m = makeBuffer(64);
  st.q = queue_;
  st.m = m;
  Event gate = makeUserEvent();
  cl_event g = gate;
  cl_event e = nullptr;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(queue_, 1, &g, &e));
  ASSERT_CL(CL_SUCCESS, clSetEventCallback(
                            e, CL_COMPLETE,
                            [](cl_event ev, cl_int, void* user) {
                              auto* s = static_cast<State*>(user);
                              cl_uint pat = 9;
                              // Non-blocking calls are allowed in a callback.
                              s->enqueue_err = clEnqueueFillBuffer(s->q, s->m, &pat, 4, 0, 64, 0,
                                                                   nullptr, nullptr);
                              clReleaseEvent(ev);
                              s->done = 1;
                            },
                            &st));
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  for (int i = 0; i < 20000 && st.done.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(1, st.done.load());
  EXPECT_CL_OK(st.enqueue_err);
  EXPECT_CL_OK(clFinish(queue_));
  auto got = read(m, 64);
  EXPECT_EQ(9, got[0]);
}

TEST_F(EventsApi, CallbackMayReleaseUserEventItWasSetOn) {
  std::atomic<int> calls{0};
  cl_int err = -1;
  cl_event u = clCreateUserEvent(context_, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clSetEventCallback(
                            u, CL_COMPLETE,
                            [](cl_event ev, cl_int, void* user) {
                              clReleaseEvent(ev);  // drops the application's only reference
                              static_cast<std::atomic<int>*>(user)->fetch_add(1);
                            },
                            &calls));
  EXPECT_CL_OK(clSetUserEventStatus(u, CL_COMPLETE));
  EXPECT_EQ(1, calls.load());
}

// The event may complete on another thread while clSetEventCallback registers, and the callback
// may drop the last reference there: clSetEventCallback must not touch the event afterwards
// (ASan sees it where it does).
TEST_F(EventsApi, CallbackReleasesTheEventWhileItIsBeingRegistered) {
  for (int round = 0; round < 2000; ++round) {
    cl_int err = -1;
    cl_event u = clCreateUserEvent(context_, &err);
    ASSERT_ERR(CL_SUCCESS, err);
    ASSERT_CL(CL_SUCCESS, clRetainEvent(u));  // the setting thread's reference
    std::atomic<bool> go{false};
    std::atomic<int> calls{0};
    std::thread setter([&] {
      while (!go.load(std::memory_order_acquire)) {
      }
      clSetUserEventStatus(u, CL_COMPLETE);
      clReleaseEvent(u);
    });
    go.store(true, std::memory_order_release);
    EXPECT_CL_OK(clSetEventCallback(
        u, CL_COMPLETE,
        [](cl_event ev, cl_int, void* user) {
          clReleaseEvent(ev);  // the application's reference
          static_cast<std::atomic<int>*>(user)->fetch_add(1);
        },
        &calls));
    setter.join();
    ASSERT_EQ(1, calls.load()) << "round " << round;
  }
}

TEST_F(EventsApi, SetEventCallbackValidation) {
  Event u = makeUserEvent();
  CallbackRecord rec;
  CallbackTag t{&rec, 0};
  // The spec: CL_INVALID_VALUE if pfn_event_notify is NULL or if command_exec_callback_type is
  // not CL_SUBMITTED, CL_RUNNING, or CL_COMPLETE.
  EXPECT_CL(CL_INVALID_VALUE, clSetEventCallback(u, CL_COMPLETE, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clSetEventCallback(u, CL_QUEUED, recordCallback, &t));
  EXPECT_CL(CL_INVALID_VALUE, clSetEventCallback(u, -1, recordCallback, &t));
  EXPECT_CL(CL_INVALID_EVENT, clSetEventCallback(nullptr, CL_COMPLETE, recordCallback, &t));
  EXPECT_CL_OK(clSetUserEventStatus(u, CL_COMPLETE));
  EXPECT_EQ(0u, rec.count());
}

// ---- wait lists ----

TEST_F(EventsApi, WaitListValidation) {
  Event u = makeUserEvent();
  cl_event ev = u;
  Event m;
  // The spec: CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and num_events_in_wait_list
  // > 0, or event_wait_list is not NULL and num_events_in_wait_list is 0, or if event objects in
  // event_wait_list are not valid events.
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST, clEnqueueMarkerWithWaitList(queue_, 1, nullptr, m.out()));
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST, clEnqueueMarkerWithWaitList(queue_, 0, &ev, m.out()));
  cl_event with_null[] = {ev, nullptr};
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST,
            clEnqueueBarrierWithWaitList(queue_, 2, with_null, m.out()));
  cl_event wrong_type[] = {reinterpret_cast<cl_event>(queue_.get())};
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST,
            clEnqueueBarrierWithWaitList(queue_, 1, wrong_type, m.out()));
  // The spec: CL_INVALID_CONTEXT if the context associated with command_queue and events in
  // event_wait_list are not the same.
  Context other = makeOtherContext(device_);
  cl_int err = -1;
  Event foreign(clCreateUserEvent(other, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  cl_event mixed[] = {ev, foreign};
  EXPECT_CL(CL_INVALID_CONTEXT, clEnqueueMarkerWithWaitList(queue_, 2, mixed, m.out()));
  EXPECT_EQ(nullptr, m.get());
  EXPECT_CL_OK(clSetUserEventStatus(u, CL_COMPLETE));
  EXPECT_CL_OK(clSetUserEventStatus(foreign, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(EventsApi, WaitListAcrossQueues) {
  Queue q2 = makeQueue(0);
  Mem m = makeBuffer(64);
  Event gate = makeUserEvent();
  cl_event g = gate;
  std::vector<unsigned char> a(64, 1), b(64, 2);
  Event first, second;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(queue_, m, CL_FALSE, 0, 64, a.data(), 1, &g, first.out()));
  cl_event f = first;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(q2, m, CL_FALSE, 0, 64, b.data(), 1, &f, second.out()));
  EXPECT_CL_OK(clFlush(q2));
  EXPECT_GT(eventStatus(second), CL_COMPLETE);
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(q2));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(first));
  EXPECT_EQ(b, read(m, 64));
}

TEST_F(EventsApi, FailedUserEventFailsDependents) {
  Event gate = makeUserEvent();
  cl_event g = gate;
  Mem m = makeBuffer(64);
  cl_uint pat = 1;
  Event a, b, c;
  ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(queue_, m, &pat, 4, 0, 64, 1, &g, a.out()));
  cl_event ae = a;
  // A dependent of a dependent, on another (out-of-order) queue.
  Queue ooo = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(ooo, 1, &ae, b.out()));
  // A command of the same in-order queue that does not list the event: ordering only.
  std::vector<unsigned char> d(64, 5);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(queue_, m, CL_FALSE, 0, 64, d.data(), 0, nullptr, c.out()));
  EXPECT_CL_OK(clSetUserEventStatus(gate, -3));
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_CL_OK(clFinish(ooo));
  // The spec: if the execution status of an event in a command's wait list is a negative
  // integer, the command is not executed: its status becomes
  // CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
  EXPECT_STATUS(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, eventStatus(a));
  EXPECT_STATUS(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, eventStatus(b));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(c));
  EXPECT_EQ(d, read(m, 64));
  cl_event both[] = {a, b};
  // The spec: CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the execution status of any of
  // the events in event_list is a negative integer value.
  EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, clWaitForEvents(2, both));
}

TEST_F(EventsApi, AlreadyFailedEventInWaitList) {
  Event gate = makeUserEvent();
  EXPECT_CL_OK(clSetUserEventStatus(gate, -9));
  cl_event g = gate;
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(queue_, 1, &g, e.out()));
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_STATUS(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, eventStatus(e));
}

TEST_F(EventsApi, ReleasedUnsetUserEventDoesNotHangDependents) {
  cl_int err = -1;
  cl_event u = clCreateUserEvent(context_, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(queue_, 1, &u, e.out()));
  // The spec calls this an application error (the event can no longer be set). Manifold fails
  // the waiting commands instead of leaving them (and clFinish) waiting forever.
  EXPECT_CL_OK(clReleaseEvent(u));
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_LT(eventStatus(e), 0);
}

// ---- clWaitForEvents ----

TEST_F(EventsApi, WaitForEventsValidation) {
  Event u = makeUserEvent();
  cl_event ev = u;
  // The spec: CL_INVALID_VALUE if num_events is zero or event_list is NULL.
  EXPECT_CL(CL_INVALID_VALUE, clWaitForEvents(0, &ev));
  EXPECT_CL(CL_INVALID_VALUE, clWaitForEvents(1, nullptr));
  // The spec: CL_INVALID_EVENT if event objects specified in event_list are not valid event
  // objects.
  cl_event with_null[] = {ev, nullptr};
  EXPECT_CL(CL_INVALID_EVENT, clWaitForEvents(2, with_null));
  cl_event wrong_type[] = {reinterpret_cast<cl_event>(context_.get())};
  EXPECT_CL(CL_INVALID_EVENT, clWaitForEvents(1, wrong_type));
  // The spec: CL_INVALID_CONTEXT if events specified in event_list do not belong to the same
  // context.
  Context other = makeOtherContext(device_);
  cl_int err = -1;
  Event foreign(clCreateUserEvent(other, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  cl_event mixed[] = {ev, foreign};
  EXPECT_CL(CL_INVALID_CONTEXT, clWaitForEvents(2, mixed));
  EXPECT_CL_OK(clSetUserEventStatus(u, CL_COMPLETE));
  EXPECT_CL_OK(clSetUserEventStatus(foreign, CL_COMPLETE));
  EXPECT_CL_OK(clWaitForEvents(1, &ev));
}

TEST_F(EventsApi, WaitForEventsSleepsUntilAnotherThreadSetsTheEvent) {
  Event u = makeUserEvent();
  cl_event ev = u;
  Event m;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(queue_, 1, &ev, m.out()));
  std::atomic<bool> set{false};
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    set = true;
    clSetUserEventStatus(ev, CL_COMPLETE);
  });
  cl_event both[] = {ev, m};
  EXPECT_CL_OK(clWaitForEvents(2, both));
  EXPECT_TRUE(set.load());
  EXPECT_STATUS(CL_COMPLETE, eventStatus(m));
  setter.join();
}

// ---- markers and barriers ----

TEST_F(EventsApi, MarkerWithWaitListOnOutOfOrderQueue) {
  Queue q = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Event g1 = makeUserEvent(), g2 = makeUserEvent();
  cl_event e1 = g1, e2 = g2;
  Event a, b, marker;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 1, &e1, a.out()));
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 1, &e2, b.out()));
  cl_event ae = a;
  // A marker with a wait list waits only for the listed events.
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 1, &ae, marker.out()));
  EXPECT_EQ(cl_command_type(CL_COMMAND_MARKER),
            eventInfo<cl_command_type>(marker, CL_EVENT_COMMAND_TYPE));
  EXPECT_CL_OK(clSetUserEventStatus(g1, CL_COMPLETE));
  EXPECT_STATUS(CL_COMPLETE, waitStatus(marker));
  EXPECT_GT(eventStatus(b), CL_COMPLETE);
  EXPECT_CL_OK(clSetUserEventStatus(g2, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(q));
}

TEST_F(EventsApi, MarkerWithoutWaitListWaitsForEverythingBefore) {
  for (cl_command_queue_properties p :
       {cl_command_queue_properties(0),
        cl_command_queue_properties(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)}) {
    Queue q = makeQueue(p);
    Event g1 = makeUserEvent(), g2 = makeUserEvent();
    cl_event e1 = g1, e2 = g2;
    Event a, b, marker;
    ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 1, &e1, a.out()));
    ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 1, &e2, b.out()));
    ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 0, nullptr, marker.out()));
    EXPECT_CL_OK(clFlush(q));
    EXPECT_CL_OK(clSetUserEventStatus(g2, CL_COMPLETE));
    if (p) {
      EXPECT_STATUS(CL_COMPLETE, waitStatus(b));
    }
    // The spec: if event_wait_list is NULL, the marker waits for all commands previously
    // enqueued in command_queue to complete.
    EXPECT_GT(eventStatus(marker), CL_COMPLETE);
    EXPECT_CL_OK(clSetUserEventStatus(g1, CL_COMPLETE));
    EXPECT_CL_OK(clFinish(q));
    EXPECT_STATUS(CL_COMPLETE, eventStatus(marker));
  }
}

TEST_F(EventsApi, BarrierBlocksLaterCommandsOnOutOfOrderQueue) {
  Queue q = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Event g = makeUserEvent();
  cl_event ge = g;
  Event a, barrier, after;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 1, &ge, a.out()));
  ASSERT_CL(CL_SUCCESS, clEnqueueBarrierWithWaitList(q, 0, nullptr, barrier.out()));
  EXPECT_EQ(cl_command_type(CL_COMMAND_BARRIER),
            eventInfo<cl_command_type>(barrier, CL_EVENT_COMMAND_TYPE));
  Mem m = makeBuffer(64);
  cl_uint pat = 3;
  ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(q, m, &pat, 4, 0, 64, 0, nullptr, after.out()));
  EXPECT_CL_OK(clFlush(q));
  // The spec: the barrier blocks command execution: any following commands enqueued after it
  // do not execute until it completes.
  EXPECT_GT(eventStatus(after), CL_COMPLETE);
  EXPECT_CL_OK(clSetUserEventStatus(g, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(q));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(after));
}

TEST_F(EventsApi, BarrierWithWaitListThenBarrierWithout) {
  Queue q = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Event g1 = makeUserEvent(), g2 = makeUserEvent();
  cl_event e1 = g1, e2 = g2;
  Event a, b1, b2;
  // `a` waits on g1. The first barrier lists only g2.
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 1, &e1, a.out()));
  ASSERT_CL(CL_SUCCESS, clEnqueueBarrierWithWaitList(q, 1, &e2, b1.out()));
  // The spec: a barrier with no wait list waits for all commands previously enqueued in
  // command_queue, `a` included, even though the barrier between them did not list it.
  ASSERT_CL(CL_SUCCESS, clEnqueueBarrierWithWaitList(q, 0, nullptr, b2.out()));
  EXPECT_CL_OK(clSetUserEventStatus(g2, CL_COMPLETE));
  EXPECT_STATUS(CL_COMPLETE, waitStatus(b1));
  EXPECT_CL_OK(clFlush(q));
  EXPECT_GT(eventStatus(a), CL_COMPLETE);
  EXPECT_GT(eventStatus(b2), CL_COMPLETE);
  EXPECT_CL_OK(clSetUserEventStatus(g1, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(q));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(b2));
}

TEST_F(EventsApi, MarkerAfterBarrierWithWaitList) {
  Queue q = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  Event g1 = makeUserEvent(), g2 = makeUserEvent();
  cl_event e1 = g1, e2 = g2;
  Event a, b1, m;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 1, &e1, a.out()));
  ASSERT_CL(CL_SUCCESS, clEnqueueBarrierWithWaitList(q, 1, &e2, b1.out()));
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(q, 0, nullptr, m.out()));
  EXPECT_CL_OK(clSetUserEventStatus(g2, CL_COMPLETE));
  EXPECT_STATUS(CL_COMPLETE, waitStatus(b1));
  // The spec: a marker with no wait list waits for all previously enqueued commands.
  EXPECT_GT(eventStatus(m), CL_COMPLETE);
  EXPECT_CL_OK(clSetUserEventStatus(g1, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(q));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(m));
}

TEST_F(EventsApi, LegacySyncCommands) {
  Event gate = makeUserEvent();
  cl_event g = gate;
  Event marker;
  // The spec (1.1): clEnqueueMarker returns CL_INVALID_VALUE if event is a NULL value.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueMarker(queue_, nullptr));
  // The spec (1.1): clEnqueueWaitForEvents returns CL_INVALID_VALUE if num_events is 0 or
  // event_list is NULL.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueWaitForEvents(queue_, 0, &g));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueWaitForEvents(queue_, 1, nullptr));
  Queue q = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  ASSERT_CL(CL_SUCCESS, clEnqueueWaitForEvents(q, 1, &g));
  ASSERT_CL(CL_SUCCESS, clEnqueueBarrier(q));
  ASSERT_CL(CL_SUCCESS, clEnqueueMarker(q, marker.out()));
  EXPECT_CL_OK(clFlush(q));
  EXPECT_GT(eventStatus(marker), CL_COMPLETE);
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(q));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(marker));
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clEnqueueBarrier(nullptr));
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clEnqueueMarker(nullptr, marker.out()));
}

TEST_F(EventsApi, StatusesProgress) {
  Event gate = makeUserEvent();
  cl_event g = gate;
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(queue_, 1, &g, e.out()));
  const cl_int before = eventStatus(e);
  // Waiting for its wait list: queued (or submitted), not running or complete.
  EXPECT_TRUE(before == CL_QUEUED || before == CL_SUBMITTED) << statusName(before);
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_STATUS(CL_COMPLETE, waitStatus(e));
}

}  // namespace
