// Work recorded once, without a queue, and run many times (cl_khr_command_buffer): each recorded
// command is plain data, its type and Operation, the index of the queue it was recorded for
// (several for a multi-device command buffer) and the recorded commands it waits for.
//
// finalize() groups the commands into segments: runs of one queue's commands that one Command
// carries out in order (a SequenceOp), cut where a command waits for another queue's. A replay
// then makes one Command per segment (a single-queue recording: one Command in all, whose event
// is the replay's), so its cost does not grow with a command per recorded command; dependencies
// between segments of different devices are the scheduler's, as for any command.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
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

  // Ends recording: builds the segments replays run.
  void finalize();
  size_t segments() const { return segments_.size(); }
  // Segment i's operations and the index of its queue.
  const OperationList& segment_list(size_t i) const { return *segments_[i].list; }
  uint32_t segment_queue(size_t i) const { return segments_[i].queue; }
  // Replaces recorded operations (mutable dispatch); replays already made keep theirs (a changed
  // segment gets a new operation list). Thread: not during a replay.
  void update(std::span<std::pair<SyncPoint, Operation>> changes);

  // Enqueues the recorded commands on queues[their queue], after `wait_list`, and returns the
  // event of the whole, of type `final_type` (on queues[0]). With `keep_api_reference` the event
  // keeps the reference meant for the application (it hands out the handle). Before finalize()
  // every recorded command is a Command of its own. Thread-safe against other replays.
  Ref<Event> replay(std::span<CommandQueue* const> queues, std::span<Event* const> wait_list,
                    cl_command_type final_type = CL_COMMAND_MARKER,
                    bool keep_api_reference = false) const;
  Ref<Event> replay(CommandQueue& queue, std::span<Event* const> wait_list) const {
    CommandQueue* queues[] = {&queue};
    return replay(queues, wait_list);
  }

 private:
  struct Segment {
    uint32_t queue;
    std::shared_ptr<const OperationList> list;  // its commands' operations, in recorded order
    std::vector<uint32_t> after;                // earlier segments it waits for
  };
  Ref<Event> replay_nodes(std::span<CommandQueue* const> queues, std::span<Event* const> wait_list,
                          cl_command_type final_type, bool keep_api_reference) const;

  std::vector<Node> nodes_;
  // Recorded commands no later one waits for: the final command waits only for these.
  std::vector<SyncPoint> sinks_;
  std::vector<Segment> segments_;
  std::vector<uint32_t> segment_sinks_;
  // Per recorded command: its segment and its place in the segment's list.
  std::vector<std::pair<uint32_t, uint32_t>> place_;
};

}  // namespace manifold
