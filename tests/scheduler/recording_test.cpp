// Recorded work (scheduler/recording.h): commands recorded once, without a queue, replayed as
// often as wanted, in order of their recorded dependencies, on in-order and out-of-order queues.
// The runtime is linked in directly (no API for recordings yet: cl_khr_command_buffer builds
// on this).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "core/context.h"
#include "core/platform.h"
#include "core/queue.h"
#include "scheduler/recording.h"
#include "scheduler/submitter.h"

namespace {

using namespace manifold;

// Objects made as an entry point makes them; the application's reference is dropped at the end.
template <class T>
struct Owned {
  T* object;
  ~Owned() { object->release_api(); }
  T* operator->() const { return object; }
  T& operator*() const { return *object; }
};

class RecordingTest : public ::testing::TestWithParam<bool> {
 protected:
  Device& cpu = *Platform::get().devices_of_type(CL_DEVICE_TYPE_CPU).at(0);
  Owned<Context> context{new Context({&cpu}, {}, nullptr, nullptr)};
  Owned<CommandQueue> queue{new CommandQueue(
      Ref<Context>(context.object), cpu,
      GetParam() ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : cl_command_queue_properties{0}, {},
      make_submitter(cpu.create_native_queue(GetParam()), GetParam()))};

  Owned<MemObject> buffer(size_t size) {
    return {new MemObject(Ref<Context>(context.object), CL_MEM_READ_WRITE, size, nullptr, {})};
  }
};

TEST_P(RecordingTest, ReplaysRunEveryCommandAfterItsRecordedPredecessors) {
  constexpr size_t kSize = 1 << 20;  // big enough that an unordered copy would be seen
  Owned<MemObject> a = buffer(kSize), b = buffer(kSize);
  std::atomic<int> runs{0}, mismatches{0};
  // Fill a, copy a to b, then look at b: on an out-of-order queue only the recorded
  // dependencies order them.
  Recording recording;
  FillOp fill{Location{Ref<MemObject>(a.object), nullptr, 0}, kSize, {}, 4};
  std::memset(fill.pattern.data(), 0x2a, 4);
  const Recording::SyncPoint filled = recording.add(CL_COMMAND_FILL_BUFFER, fill);
  const Recording::SyncPoint copied =
      recording.add(CL_COMMAND_COPY_BUFFER,
                    CopyOp{Location{Ref<MemObject>(a.object), nullptr, 0},
                           Location{Ref<MemObject>(b.object), nullptr, 0}, kSize},
                    std::span(&filled, 1));
  const std::byte* bytes = b->host_data();
  recording.add(CL_COMMAND_USER, HostFunctionOp{[&runs, &mismatches, bytes] {
                  for (size_t i = 0; i < kSize; i += 4093)
                    if (bytes[i] != std::byte{0x2a}) ++mismatches;
                  ++runs;
                }},
                std::span(&copied, 1));
  EXPECT_EQ(recording.size(), 3u);

  for (int round = 0; round < 2; ++round) {
    std::memset(a->host_data(), 0, kSize);
    std::memset(b->host_data(), 0, kSize);
    // One replay, then two chained ones (each after the previous one's marker).
    Ref<Event> first = recording.replay(*queue, {});
    EXPECT_EQ(first->wait(), CL_COMPLETE);
    Event* previous = first.get();
    Ref<Event> second = recording.replay(*queue, std::span(&previous, 1));
    previous = second.get();
    Ref<Event> third = recording.replay(*queue, std::span(&previous, 1));
    EXPECT_EQ(third->wait(), CL_COMPLETE);
    EXPECT_EQ(second->status(), CL_COMPLETE);
  }
  EXPECT_EQ(runs.load(), 6);
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_P(RecordingTest, ASyncPointOfACommandNotRecordedYetIsInvalid) {
  Recording recording;
  const Recording::SyncPoint later = 0;
  try {
    recording.add(CL_COMMAND_MARKER, NoOp{}, std::span(&later, 1));
    ADD_FAILURE() << "a dependency on nothing was recorded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), CL_INVALID_VALUE);
  }
  // An empty recording replays as its marker alone.
  EXPECT_EQ(recording.replay(*queue, {})->wait(), CL_COMPLETE);
}

INSTANTIATE_TEST_SUITE_P(Queues, RecordingTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "OutOfOrder" : "InOrder"; });

}  // namespace
