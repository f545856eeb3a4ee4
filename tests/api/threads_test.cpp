// Multi-threaded use of the host API: several threads enqueueing into one queue and into
// separate queues, concurrent retain/release, callbacks arriving on other threads, user events
// set while other threads wait. Run under ThreadSanitizer too (label "threads").
#include "cl_test.h"

using namespace cltest;

namespace {

class Threads : public ContextTest {
 protected:
  static int threadCount() { return 4; }
};

// Runs `fn(i)` on `n` threads that start together; returns when all are done.
template <class F>
void runThreads(int n, F fn) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i)
    ts.emplace_back([&, i] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      fn(i);
    });
  while (ready.load() < n) std::this_thread::yield();
  go = true;
  for (auto& t : ts) t.join();
}

TEST_F(Threads, ManyThreadsOneInOrderQueue) {
  const int n = threadCount();
  constexpr size_t kChunk = 4096;
  constexpr int kIters = 50;
  Mem m = makeBuffer(kChunk * n);
  std::atomic<int> failures{0};
  runThreads(n, [&](int t) {
    std::vector<unsigned char> src(kChunk), dst(kChunk);
    for (int it = 0; it < kIters; ++it) {
      std::fill(src.begin(), src.end(), static_cast<unsigned char>(t * 16 + it % 16));
      // Each thread owns one region of the shared buffer.
      if (clEnqueueWriteBuffer(queue_, m, CL_FALSE, t * kChunk, kChunk, src.data(), 0, nullptr,
                               nullptr) != CL_SUCCESS)
        failures++;
      cl_event e = nullptr;
      if (clEnqueueReadBuffer(queue_, m, CL_FALSE, t * kChunk, kChunk, dst.data(), 0, nullptr,
                              &e) != CL_SUCCESS) {
        failures++;
        continue;
      }
      if (clWaitForEvents(1, &e) != CL_SUCCESS) failures++;
      clReleaseEvent(e);
      // The in-order queue ran this thread's write before its read.
      if (dst != src) failures++;
    }
  });
  EXPECT_EQ(0, failures.load());
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(Threads, ManyThreadsOneOutOfOrderQueue) {
  Queue q = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  ASSERT_TRUE(q);
  const int n = threadCount();
  constexpr size_t kChunk = 2048;
  constexpr int kIters = 40;
  Mem m = makeBuffer(kChunk * n);
  std::atomic<int> failures{0};
  runThreads(n, [&](int t) {
    std::vector<unsigned char> dst(kChunk);
    for (int it = 0; it < kIters; ++it) {
      const cl_uchar value = static_cast<cl_uchar>(t + it);
      cl_event fill = nullptr, rd = nullptr;
      if (clEnqueueFillBuffer(q, m, &value, 1, t * kChunk, kChunk, 0, nullptr, &fill) !=
          CL_SUCCESS) {
        failures++;
        continue;
      }
      // Out of order: the read must list the fill.
      if (clEnqueueReadBuffer(q, m, CL_TRUE, t * kChunk, kChunk, dst.data(), 1, &fill, &rd) !=
          CL_SUCCESS)
        failures++;
      else if (std::any_of(dst.begin(), dst.end(), [&](unsigned char c) { return c != value; }))
        failures++;
      clReleaseEvent(fill);
      if (rd) clReleaseEvent(rd);
      // Now and then a barrier or marker from some thread.
      if (it % 10 == t % 10) {
        if (clEnqueueBarrierWithWaitList(q, 0, nullptr, nullptr) != CL_SUCCESS) failures++;
        if (clEnqueueMarkerWithWaitList(q, 0, nullptr, nullptr) != CL_SUCCESS) failures++;
      }
    }
  });
  EXPECT_EQ(0, failures.load());
  EXPECT_CL_OK(clFinish(q));
}

TEST_F(Threads, SeparateQueuesPerThread) {
  const int n = threadCount();
  constexpr size_t kSize = 1 << 14;
  std::atomic<int> failures{0};
  runThreads(n, [&](int t) {
    cl_int err = CL_SUCCESS;
    cl_queue_properties props[] = {
        CL_QUEUE_PROPERTIES,
        t % 2 ? cl_queue_properties(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) : 0, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(context_, device_, props, &err);
    cl_mem a = clCreateBuffer(context_, 0, kSize, nullptr, &err);
    cl_mem b = clCreateBuffer(context_, 0, kSize, nullptr, &err);
    if (!q || !a || !b) {
      failures++;
      return;
    }
    std::vector<unsigned char> src(kSize), dst(kSize);
    for (int it = 0; it < 30; ++it) {
      for (size_t i = 0; i < kSize; ++i) src[i] = static_cast<unsigned char>(i + t + it);
      cl_event w = nullptr, c = nullptr;
      if (clEnqueueWriteBuffer(q, a, CL_FALSE, 0, kSize, src.data(), 0, nullptr, &w) != CL_SUCCESS)
        failures++;
      if (clEnqueueCopyBuffer(q, a, b, 0, 0, kSize, 1, &w, &c) != CL_SUCCESS) failures++;
      if (clEnqueueReadBuffer(q, b, CL_TRUE, 0, kSize, dst.data(), 1, &c, nullptr) != CL_SUCCESS)
        failures++;
      if (dst != src) failures++;
      clReleaseEvent(w);
      clReleaseEvent(c);
    }
    if (clFinish(q) != CL_SUCCESS) failures++;
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseCommandQueue(q);
  });
  EXPECT_EQ(0, failures.load());
}

TEST_F(Threads, ConcurrentRetainRelease) {
  Mem m = makeBuffer(64);
  Event u = makeUserEvent();
  const int n = threadCount();
  constexpr int kIters = 2000;
  runThreads(n, [&](int) {
    for (int i = 0; i < kIters; ++i) {
      clRetainMemObject(m);
      clRetainEvent(u);
      clRetainContext(context_);
      clRetainCommandQueue(queue_);
      clReleaseCommandQueue(queue_);
      clReleaseContext(context_);
      clReleaseEvent(u);
      clReleaseMemObject(m);
    }
  });
  EXPECT_EQ(1u, refCount(m.get()));
  EXPECT_EQ(1u, refCount(u.get()));
  EXPECT_EQ(1u, refCount(queue_.get()));
  EXPECT_CL_OK(clSetUserEventStatus(u, CL_COMPLETE));
}

TEST_F(Threads, ObjectsCreatedAndReleasedConcurrently) {
  struct Counter {
    std::atomic<int> n{0};
  } destroyed;
  const int n = threadCount();
  constexpr int kIters = 100;
  runThreads(n, [&](int) {
    for (int i = 0; i < kIters; ++i) {
      cl_int err = CL_SUCCESS;
      cl_mem m = clCreateBuffer(context_, 0, 128, nullptr, &err);
      if (!m) continue;
      clSetMemObjectDestructorCallback(
          m, [](cl_mem, void* u) { static_cast<Counter*>(u)->n++; }, &destroyed);
      cl_uchar v = 1;
      clEnqueueFillBuffer(queue_, m, &v, 1, 0, 128, 0, nullptr, nullptr);
      cl_event e = clCreateUserEvent(context_, &err);
      clSetUserEventStatus(e, CL_COMPLETE);
      clReleaseEvent(e);
      clReleaseMemObject(m);  // the fill may still be queued
    }
  });
  EXPECT_CL_OK(clFinish(queue_));
  for (int i = 0; i < 2000 && destroyed.n.load() < n * kIters; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(n * kIters, destroyed.n.load());
}

TEST_F(Threads, CallbacksFromManyCommands) {
  struct Counter {
    std::atomic<int> complete{0}, other{0};
  } counter;
  Queue ooo = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  ASSERT_TRUE(ooo);
  Event gate = makeUserEvent();
  cl_event g = gate;
  const int n = threadCount();
  constexpr int kIters = 50;
  runThreads(n, [&](int t) {
    for (int i = 0; i < kIters; ++i) {
      cl_event e = nullptr;
      cl_command_queue q = (t + i) % 2 ? ooo.get() : queue_.get();
      if (clEnqueueMarkerWithWaitList(q, 1, &g, &e) != CL_SUCCESS) continue;
      clSetEventCallback(
          e, CL_COMPLETE,
          [](cl_event, cl_int status, void* u) {
            auto* c = static_cast<Counter*>(u);
            if (status == CL_COMPLETE)
              c->complete++;
            else
              c->other++;
          },
          &counter);
      clReleaseEvent(e);
    }
  });
  EXPECT_EQ(0, counter.complete.load());
  // Completing the gate from another thread releases every command; their callbacks run on
  // whichever threads complete them.
  std::thread([&] { clSetUserEventStatus(g, CL_COMPLETE); }).join();
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_CL_OK(clFinish(ooo));
  for (int i = 0; i < 2000 && counter.complete.load() < n * kIters; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(n * kIters, counter.complete.load());
  EXPECT_EQ(0, counter.other.load());
}

TEST_F(Threads, WaitersOnOneUserEvent) {
  Event u = makeUserEvent();
  cl_event ev = u;
  const int n = threadCount();
  std::atomic<int> woke{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < n; ++i) {
    waiters.emplace_back([&, i] {
      cl_event m = nullptr;
      if (i % 2) {
        if (clWaitForEvents(1, &ev) == CL_SUCCESS) woke++;
      } else if (clEnqueueMarkerWithWaitList(queue_, 1, &ev, &m) == CL_SUCCESS) {
        if (clWaitForEvents(1, &m) == CL_SUCCESS) woke++;
        clReleaseEvent(m);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_CL_OK(clSetUserEventStatus(u, CL_COMPLETE));
  for (auto& t : waiters) t.join();
  EXPECT_EQ(n, woke.load());
}

TEST_F(Threads, FinishFromSeveralThreads) {
  Mem m = makeBuffer(1 << 16);
  std::atomic<int> failures{0};
  runThreads(threadCount(), [&](int t) {
    for (int i = 0; i < 20; ++i) {
      cl_uint pat = static_cast<cl_uint>(t * 1000 + i);
      if (clEnqueueFillBuffer(queue_, m, &pat, 4, 0, 1 << 16, 0, nullptr, nullptr) != CL_SUCCESS)
        failures++;
      if (clFinish(queue_) != CL_SUCCESS) failures++;
    }
  });
  EXPECT_EQ(0, failures.load());
}

TEST_F(Threads, ReleaseQueueWhileOtherThreadsUseTheContext) {
  std::atomic<int> failures{0};
  runThreads(threadCount(), [&](int) {
    for (int i = 0; i < 20; ++i) {
      cl_int err = CL_SUCCESS;
      cl_command_queue q = clCreateCommandQueueWithProperties(context_, device_, nullptr, &err);
      if (!q) {
        failures++;
        continue;
      }
      for (int k = 0; k < 5; ++k) clEnqueueMarkerWithWaitList(q, 0, nullptr, nullptr);
      clReleaseCommandQueue(q);  // no finish: the release flushes and the queue goes when done
    }
  });
  EXPECT_EQ(0, failures.load());
}

}  // namespace
