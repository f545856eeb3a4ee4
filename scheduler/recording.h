// Work recorded once, without a queue, and run many times (what cl_khr_command_buffer needs):
// each recorded command is plain data, its type and Operation, with the recorded commands it
// waits for. replay() makes Commands of them on a queue, as often as wanted; backends see
// ordinary jobs (a backend that can record natively, e.g. CUDA graphs by stream capture of its
// DeviceOps, can later take a whole recording at once).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/operations.h"
#include "core/queue.h"

namespace manifold {

class Recording {
 public:
  using SyncPoint = uint32_t;

  // Records a command that runs after the recorded commands `after` (earlier sync points).
  // Returns its own sync point. Thread: one recording thread at a time.
  SyncPoint add(cl_command_type type, Operation op, std::span<const SyncPoint> after = {});
  size_t size() const { return nodes_.size(); }

  // Enqueues every recorded command on `queue`, each after `wait_list` and its recorded
  // predecessors; returns the event of a marker that completes when all have. Thread-safe
  // against other replays of the same recording.
  Ref<Event> replay(CommandQueue& queue, std::span<Event* const> wait_list) const;

 private:
  struct Node {
    cl_command_type type;
    Operation op;
    std::vector<SyncPoint> after;
  };
  std::vector<Node> nodes_;
};

}  // namespace manifold
