#include "scheduler/recording.h"

#include "core/error.h"
#include "scheduler/command.h"

namespace manifold {

Recording::SyncPoint Recording::add(cl_command_type type, Operation op,
                                    std::span<const SyncPoint> after) {
  for (SyncPoint p : after)
    check(p < nodes_.size(), CL_INVALID_VALUE, "a sync point of a command not recorded yet");
  nodes_.push_back({type, std::move(op), {after.begin(), after.end()}});
  return static_cast<SyncPoint>(nodes_.size() - 1);
}

namespace {
// Enqueues `command` after `dependencies`; the event stays only ours (no application reference).
Ref<Event> enqueue(CommandQueue& queue, Ref<Command> command, std::span<Event* const> dependencies,
                   SyncKind sync) {
  Ref<Event> event = command->event_ref();
  event->drop_unpublished_api_reference();
  queue.enqueue(std::move(command), dependencies, sync);
  return event;
}
}  // namespace

Ref<Event> Recording::replay(CommandQueue& queue, std::span<Event* const> wait_list) const {
  std::vector<Ref<Event>> events;
  events.reserve(nodes_.size());
  std::vector<Event*> dependencies;
  for (const Node& node : nodes_) {
    dependencies.assign(wait_list.begin(), wait_list.end());
    for (SyncPoint p : node.after) dependencies.push_back(events[p].get());
    // The operation is copied: its memory operands and kernel arguments are shared, read only.
    events.push_back(enqueue(queue, Command::make(queue, node.type, Operation(node.op)),
                             dependencies, SyncKind::None));
  }
  dependencies.assign(wait_list.begin(), wait_list.end());
  for (const Ref<Event>& e : events) dependencies.push_back(e.get());
  return enqueue(queue, Command::make(queue, CL_COMMAND_MARKER, NoOp{}), dependencies,
                 SyncKind::Marker);
}

}  // namespace manifold
