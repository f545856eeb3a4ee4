// The fault campaign's round (fault_campaign.h): its model of the DAG and the steps that make and
// check it (fault_campaign_round.cpp enqueues, fault_campaign_check.cpp drives and checks).
#pragma once

#include <cstring>
#include <deque>
#include <random>

#include "dag_model.h"
#include "fault_campaign.h"

namespace schedtest::campaign {

inline constexpr cl_int kUserFailure = -7;
inline constexpr int kBuffers = 10;
inline constexpr size_t kElems = 256;

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

enum class Op {
  User,
  Write,
  Read,
  Copy,
  Fill,
  Mix,
  Step,
  Touch,
  MapRead,
  MapWrite,
  Marker,
  Barrier
};
enum class Fault { None, Launch, Alloc };

struct Node {
  Op op = Op::User;
  int queue = -1;  // -1: a user event
  Event event;
  CallbackRecord* record = nullptr;  // the status of an event released early
  std::vector<int> waits, implicit;
  bool fails = false;  // expected to end with a negative status
  Fault fault = Fault::None;
  std::string what;
  Bits trusted, reach;  // as in random_dag_test.cpp
};

struct QueueModel {
  int last = -1, last_barrier = -1;
  std::vector<int> since_full;
};

// What a read (or a mapping for reading: `map`) got, and what the model says it should have.
struct MapRecord;
struct Snapshot {
  int node;  // -1: expected to fail, not compared
  std::vector<uint32_t> got, expected;
  const MapRecord* map = nullptr;
};

// A mapping's bytes move in its event's callback, which then sets the user event that its unmap
// waits for.
struct MapRecord {
  void* pointer = nullptr;
  size_t bytes = 0;
  bool write = false;
  std::vector<uint32_t> data;  // what a read mapping saw, what a write mapping stores
  cl_event gate = nullptr;
};
inline void CL_CALLBACK mapDone(cl_event, cl_int status, void* user) {
  auto* m = static_cast<MapRecord*>(user);
  if (status == CL_COMPLETE) {
    if (m->write)
      std::memcpy(m->pointer, m->data.data(), m->bytes);
    else
      std::memcpy(m->data.data(), m->pointer, m->bytes);
  }
  clSetUserEventStatus(m->gate, CL_COMPLETE);
}

class Round {
 public:
  Round(CampaignEnv& env, uint64_t seed, long index, int commands)
      : env_(env),
        rng_(seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(index)),
        index_(index),
        commands_(commands),
        max_nodes_(static_cast<size_t>(commands) * 2 + 256),
        setter_(rng_()),
        queue_models_(env.queues.size()),
        launch_faulted_(env.devices.size(), false) {
    nodes_.reserve(max_nodes_);
  }
  void run();

 private:
  size_t uniform(size_t n) { return static_cast<size_t>(rng_() % n); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int makeBuffer();
  void checkResidentEverywhere();
  void armFaults();
  int addUser(bool fails, bool handed_to_setter);
  void handUser(size_t k);
  int enqueue(Op op, int queue, int b0, int b1, int b2, size_t off, size_t len, size_t off2,
              std::vector<int> waits, Fault fault = Fault::None);
  void checkAfter(int writer, int buffer, size_t off, size_t len);
  void randomStep();
  void releaseSomething();
  void midRunWait();
  void drain();
  void check();
  int liveBuffer() {
    int b;
    do b = static_cast<int>(uniform(kBuffers));
    while (!buffers_[b]);
    return b;
  }
  const CampaignDevice& deviceOf(int queue) const {
    return env_.devices[env_.queues[queue].device];
  }

  CampaignEnv& env_;
  std::mt19937_64 rng_;
  long index_;
  int commands_;
  size_t max_nodes_;
  UserEventSetter setter_;
  std::vector<QueueModel> queue_models_;
  std::vector<Node> nodes_;
  std::vector<Mem> buffers_;  // the pool, then each fault's own buffer; null: released
  std::vector<std::vector<uint32_t>> model_;
  std::vector<int> last_writer_;
  std::vector<std::vector<int>> readers_;
  std::vector<int> unset_;         // user events not handed to the setter yet
  std::vector<int> failed_roots_;  // failing user events and faulted commands
  // Devices where a refused launch waits for its gate: no other launch may go there this round.
  std::vector<bool> launch_faulted_;
  std::deque<std::vector<uint32_t>> host_sources_;
  std::deque<Snapshot> snapshots_;
  std::deque<CallbackRecord> records_;
  std::deque<MapRecord> maps_;
  std::vector<Event> map_gates_;
  int enqueued_ = 0;
};

}  // namespace schedtest::campaign
