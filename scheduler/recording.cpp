#include "scheduler/recording.h"

#include <algorithm>

#include "core/error.h"
#include "scheduler/command.h"

namespace manifold {

Recording::SyncPoint Recording::add(cl_command_type type, Operation op,
                                    std::span<const SyncPoint> after, uint32_t queue) {
  for (SyncPoint p : after)
    check(p < nodes_.size(), CL_INVALID_VALUE, "a sync point of a command not recorded yet");
  const auto self = static_cast<SyncPoint>(nodes_.size());
  nodes_.push_back({type, std::move(op), {after.begin(), after.end()}, queue});
  // The new command covers the sinks it waits for (they are earlier, so sinks_ stays sorted).
  std::erase_if(
      sinks_, [&](SyncPoint s) { return std::find(after.begin(), after.end(), s) != after.end(); });
  sinks_.push_back(self);
  return self;
}

namespace {
// Enqueues `command` after `dependencies`.
Ref<Event> enqueue(CommandQueue& queue, Ref<Command> command, std::span<Event* const> dependencies,
                   SyncKind sync, bool keep_api_reference) {
  Ref<Event> event = command->event_ref();
  if (!keep_api_reference) event->drop_unpublished_api_reference();
  queue.enqueue(std::move(command), dependencies, sync);
  return event;
}
}  // namespace

Ref<Event> Recording::replay(std::span<CommandQueue* const> queues,
                             std::span<Event* const> wait_list, cl_command_type final_type,
                             bool keep_api_reference) const {
  std::vector<Ref<Event>> events;
  events.reserve(nodes_.size());
  std::vector<Event*> dependencies;
  for (const Node& node : nodes_) {
    // A command with recorded predecessors waits for the wait list through them.
    if (node.after.empty())
      dependencies.assign(wait_list.begin(), wait_list.end());
    else
      dependencies.clear();
    for (SyncPoint p : node.after) dependencies.push_back(events[p].get());
    CommandQueue& queue = *queues[node.queue];
    // The operation is copied: its memory operands and kernel arguments are shared, read only.
    events.push_back(enqueue(queue, Command::make(queue, node.type, Operation(node.op)),
                             dependencies, SyncKind::None, false));
  }
  dependencies.assign(wait_list.begin(), wait_list.end());
  for (SyncPoint s : sinks_) dependencies.push_back(events[s].get());
  // Not a marker of the queue: it waits for the recorded commands only, not for every command
  // enqueued before it on an out-of-order queue.
  return enqueue(*queues[0], Command::make(*queues[0], final_type, NoOp{}), dependencies,
                 SyncKind::None, keep_api_reference);
}

}  // namespace manifold
