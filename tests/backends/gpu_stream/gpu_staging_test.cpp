// backends/gpu_stream/staging.h without a GPU: a simulated vendor API whose "device memory" is
// host memory and whose stream runs each copy on a thread of its own, later, in order (as a
// copy engine does). Checks every byte of chunked transfers of awkward sizes, in every mode, and
// that a pinned staging slot is never refilled while a DMA still reads it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "backends/gpu_stream/staging.h"

namespace {

// One in-order stream executed by a worker thread; events are sequence numbers.
struct SimStream {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::pair<uint64_t, std::function<void()>>> work;
  uint64_t submitted = 0, completed = 0;
  bool stop = false;
  std::thread worker{[this] {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stop || !work.empty(); });
      if (work.empty()) return;
      auto item = std::move(work.front());
      work.pop_front();
      lock.unlock();
      std::this_thread::yield();  // let the host side run ahead, as it does against a GPU
      item.second();
      lock.lock();
      completed = item.first;
      changed.notify_all();
    }
  }};
  ~SimStream() {
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    changed.notify_all();
    worker.join();
  }
  uint64_t push(std::function<void()> fn) {
    std::lock_guard lock(mutex);
    work.emplace_back(++submitted, std::move(fn));
    changed.notify_all();
    return submitted;
  }
  void wait_for(uint64_t seq) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return completed >= seq; });
  }
};

struct SimEvent {
  SimStream* stream = nullptr;
  uint64_t seq = 0;
};

struct SimDevice {
  // Pinned ranges (staging slots, registered ranges): a DMA touching one must not overlap a
  // host write to it.
  std::mutex mutex;
  std::vector<std::pair<std::byte*, size_t>> pinned;
  int registrations = 0;
  bool refuse_registration = false;
};

struct SimApi {
  using Device = SimDevice;
  using Stream = SimStream*;
  using Event = SimEvent*;
  using DevicePtr = std::byte*;

  static void make_current(Device&) {}
  static Event create_event(Device&, bool, bool) { return new SimEvent; }
  static void record(Event e, Stream s) {
    e->stream = s;
    e->seq = s->push([] {});
  }
  static cl_int synchronize_event(Event e) {
    if (e->stream) e->stream->wait_for(e->seq);
    return CL_SUCCESS;
  }
  static void* alloc_pinned(Device& d, size_t size) {
    auto* p = static_cast<std::byte*>(std::malloc(size));
    std::memset(p, 0xEE, size);
    std::lock_guard lock(d.mutex);
    d.pinned.emplace_back(p, size);
    return p;
  }
  static void free_pinned(Device&, void* p) { std::free(p); }
  static bool register_host(Device& d, void*, size_t) {
    if (d.refuse_registration) return false;
    ++d.registrations;
    return true;
  }
  static void unregister_host(Device&, void*) {}
  // Async copies read their source when the stream gets to them, as a DMA from pinned memory
  // does: a source overwritten too early shows up as wrong bytes at the destination.
  static cl_int copy_to_device_async(DevicePtr dst, const void* src, size_t n, Stream s) {
    s->push([=] { std::memcpy(dst, src, n); });
    return CL_SUCCESS;
  }
  static cl_int copy_to_host_async(void* dst, DevicePtr src, size_t n, Stream s) {
    s->push([=] { std::memcpy(dst, src, n); });
    return CL_SUCCESS;
  }
};

std::vector<std::byte> random_bytes(size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  std::mt19937 random(seed);
  for (auto& b : v) b = std::byte(random());
  return v;
}

class StagingTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    setenv("MANIFOLD_GPU_STAGING", GetParam(), 1);
    setenv("MANIFOLD_GPU_STAGING_CHUNK_MB", "1", 1);  // many chunks per copy
    setenv("MANIFOLD_GPU_STAGING_SLOTS", "3", 1);     // slots reused several times
    setenv("MANIFOLD_GPU_STAGING_THREADS", "3", 1);   // the parallel host copy
  }
};

TEST_P(StagingTest, EveryByteArrivesBothWays) {
  SimDevice device;
  manifold::gpu::Staging<SimApi> staging(device, manifold::settings_from_environment().staging);
  SimStream stream;
  for (size_t size : {size_t{300} << 10, (size_t{5} << 20) + 3, (size_t{40} << 20) + 4097}) {
    const std::vector<std::byte> source = random_bytes(size, static_cast<unsigned>(size));
    std::vector<std::byte> device_memory(size), back(size);
    ASSERT_TRUE(staging.wants(size));
    ASSERT_EQ(CL_SUCCESS, staging.to_device(device_memory.data(), source.data(), size, &stream));
    // Host-to-device may return before the DMA: the stream orders the read-back after it.
    ASSERT_EQ(CL_SUCCESS, staging.to_host(back.data(), device_memory.data(), size, &stream));
    EXPECT_TRUE(device_memory == source) << "size " << size;
    EXPECT_TRUE(back == source) << "size " << size;
  }
  if (std::string_view(GetParam()) == "register") {
    EXPECT_GT(device.registrations, 0);
  }
}

TEST_P(StagingTest, BackToBackUploadsDoNotOverwriteSlotsInFlight) {
  SimDevice device;
  manifold::gpu::Staging<SimApi> staging(device, manifold::settings_from_environment().staging);
  SimStream stream;
  const size_t size = (size_t{7} << 20) + 100;
  std::vector<std::vector<std::byte>> sources, targets;
  for (unsigned i = 0; i < 4; ++i) {
    sources.push_back(random_bytes(size, 100 + i));
    targets.emplace_back(size);
  }
  for (unsigned i = 0; i < 4; ++i) {
    ASSERT_EQ(CL_SUCCESS, staging.to_device(targets[i].data(), sources[i].data(), size, &stream));
  }
  SimEvent done;
  SimApi::record(&done, &stream);
  SimApi::synchronize_event(&done);
  for (unsigned i = 0; i < 4; ++i) EXPECT_TRUE(targets[i] == sources[i]) << "upload " << i;
}

TEST_P(StagingTest, RegistrationRefusedFallsBackToChunks) {
  SimDevice device;
  device.refuse_registration = true;
  manifold::gpu::Staging<SimApi> staging(device, manifold::settings_from_environment().staging);
  SimStream stream;
  const size_t size = size_t{33} << 20;
  const std::vector<std::byte> source = random_bytes(size, 9);
  std::vector<std::byte> device_memory(size), back(size);
  ASSERT_EQ(CL_SUCCESS, staging.to_device(device_memory.data(), source.data(), size, &stream));
  ASSERT_EQ(CL_SUCCESS, staging.to_host(back.data(), device_memory.data(), size, &stream));
  EXPECT_TRUE(back == source);
}

INSTANTIATE_TEST_SUITE_P(Modes, StagingTest, ::testing::Values("chunks", "register"));

TEST(ParallelCopy, CopiesEveryByteOfOddSizes) {
  setenv("MANIFOLD_GPU_STAGING_THREADS", "3", 1);
  for (size_t size :
       {size_t{0}, size_t{1}, size_t{1} << 20, (size_t{3} << 20) + 17, (size_t{9} << 20) + 4095}) {
    const std::vector<std::byte> source = random_bytes(size + 1, 7);
    std::vector<std::byte> target(size + 1, std::byte{0x11});
    manifold::gpu::ParallelCopy::instance().copy(target.data(), source.data() + 1, size);
    EXPECT_EQ(0, std::memcmp(target.data(), source.data() + 1, size)) << "size " << size;
    EXPECT_EQ(std::byte{0x11}, target[size]) << "wrote past the end, size " << size;
  }
}

}  // namespace
