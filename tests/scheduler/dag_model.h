// Pieces of the scheduler's random-DAG tests (random_dag_test.cpp, fault_campaign_test.cpp):
// a fixed-size bit set for the ancestry of a node, a thread that sets user events after short
// random delays, and a callback that records the status it was called with.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "cl_test.h"

namespace schedtest {

class Bits {
 public:
  explicit Bits(size_t n = 0) : words_((n + 63) / 64, 0) {}
  void set(size_t i) { words_[i / 64] |= uint64_t(1) << (i % 64); }
  bool test(size_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  void merge(const Bits& o) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= o.words_[w];
  }
  bool intersects(const Bits& o) const {
    for (size_t w = 0; w < words_.size(); ++w)
      if (words_[w] & o.words_[w]) return true;
    return false;
  }
  void clear(size_t i) { words_[i / 64] &= ~(uint64_t(1) << (i % 64)); }

 private:
  std::vector<uint64_t> words_;
};

// Sets user events from its own thread, each after a short random delay, in the order handed.
class UserEventSetter {
 public:
  explicit UserEventSetter(uint64_t seed) : rng_(seed), thread_([this] { run(); }) {}
  ~UserEventSetter() { close(); }
  void hand(cl_event e, cl_int status) {
    clRetainEvent(e);
    std::lock_guard lock(mutex_);
    work_.push_back({e, status});
    cv_.notify_one();
  }
  // Sets everything handed, then stops.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      cv_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }
  int errors() const { return errors_.load(); }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return closed_ || !work_.empty(); });
      if (work_.empty()) return;
      auto [event, status] = work_.front();
      work_.pop_front();
      const int delay_us = static_cast<int>(rng_() % 400);
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
      if (clSetUserEventStatus(event, status) != CL_SUCCESS) errors_++;
      clReleaseEvent(event);
      lock.lock();
    }
  }
  std::mt19937_64 rng_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<cl_event, cl_int>> work_;
  bool closed_ = false;
  std::atomic<int> errors_{0};
  std::thread thread_;
};

struct CallbackRecord {
  std::atomic<int> calls{0};
  std::atomic<cl_int> status{1};
};
inline void CL_CALLBACK recordCallback(cl_event, cl_int status, void* user) {
  auto* r = static_cast<CallbackRecord*>(user);
  r->status.store(status);
  r->calls.fetch_add(1);
}

}  // namespace schedtest
