// Work recorded once, without a queue, and run many times (cl_khr_command_buffer): each recorded
// command is plain data, its type and Operation, the index of the queue it was recorded for
// (several for a multi-device command buffer) and the recorded commands it waits for. replay()
// makes Commands of them on the queues given, as often as wanted; backends see ordinary jobs, and
// dependencies between queues of different devices are the scheduler's, as for any command.
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

  struct Node {
    cl_command_type type;
    Operation op;
    std::vector<SyncPoint> after;
    uint32_t queue = 0;  // index into the queues a replay is given
  };

  // Records a command that runs after the recorded commands `after` (earlier sync points) on
  // the replay's queue `queue`. Returns its own sync point. Thread: one recording thread.
  SyncPoint add(cl_command_type type, Operation op, std::span<const SyncPoint> after = {},
                uint32_t queue = 0);
  size_t size() const { return nodes_.size(); }
  const Node& node(SyncPoint p) const { return nodes_[p]; }
  // A recorded command's operation, to change between replays (mutable dispatch). Thread: not
  // during a replay.
  Operation& operation(SyncPoint p) { return nodes_[p].op; }

  // Enqueues every recorded command on queues[its queue], each after its recorded predecessors
  // (those without any after `wait_list`), then a command of type `final_type` on queues[0]
  // that completes when all have; returns its event. With `keep_api_reference` the event keeps
  // the reference meant for the application (it hands out the handle). Thread-safe against
  // other replays of the same recording.
  Ref<Event> replay(std::span<CommandQueue* const> queues, std::span<Event* const> wait_list,
                    cl_command_type final_type = CL_COMMAND_MARKER,
                    bool keep_api_reference = false) const;
  Ref<Event> replay(CommandQueue& queue, std::span<Event* const> wait_list) const {
    CommandQueue* queues[] = {&queue};
    return replay(queues, wait_list);
  }

 private:
  std::vector<Node> nodes_;
  // Recorded commands no later one waits for: the final command waits only for these.
  std::vector<SyncPoint> sinks_;
};

}  // namespace manifold
