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
  // The new command covers the sinks it waits for.
  std::erase_if(
      sinks_, [&](SyncPoint s) { return std::find(after.begin(), after.end(), s) != after.end(); });
  sinks_.push_back(self);
  return self;
}

void Recording::finalize() {
  // One open segment per queue. A command joins its queue's open segment unless it waits for
  // another queue's command: then it opens a new one, which waits for the segments holding
  // those commands (and for the queue's previous segment). A segment's only waits on other
  // queues come from its first command and point at segments that began earlier, so segments
  // never wait for each other in a cycle.
  std::vector<std::vector<Operation>> lists;
  std::vector<std::vector<std::vector<uint32_t>>> lists_after;
  std::vector<int64_t> open;
  place_.clear();
  segments_.clear();
  for (const Node& node : nodes_) {
    if (open.size() <= node.queue) open.resize(node.queue + 1, -1);
    const bool waits_elsewhere =
        std::any_of(node.after.begin(), node.after.end(),
                    [&](SyncPoint p) { return nodes_[p].queue != node.queue; });
    if (open[node.queue] < 0 || waits_elsewhere) {
      Segment s{node.queue, nullptr, {}};
      if (open[node.queue] >= 0) s.after.push_back(static_cast<uint32_t>(open[node.queue]));
      open[node.queue] = static_cast<int64_t>(segments_.size());
      segments_.push_back(std::move(s));
      lists.emplace_back();
      lists_after.emplace_back();
    }
    const auto index = static_cast<uint32_t>(open[node.queue]);
    Segment& segment = segments_[index];
    for (SyncPoint p : node.after) {
      const uint32_t other = place_[p].first;
      if (other != index &&
          std::find(segment.after.begin(), segment.after.end(), other) == segment.after.end())
        segment.after.push_back(other);
    }
    std::vector<uint32_t> within;  // the waits inside this segment, as list indexes
    for (SyncPoint p : node.after)
      if (place_[p].first == index) within.push_back(place_[p].second);
    place_.emplace_back(index, static_cast<uint32_t>(lists[index].size()));
    lists[index].push_back(node.op);
    lists_after[index].push_back(std::move(within));
  }
  std::vector<bool> waited_for(segments_.size(), false);
  for (size_t i = 0; i < segments_.size(); ++i) {
    auto list = std::make_shared<OperationList>();
    list->ops = std::move(lists[i]);
    list->after = std::move(lists_after[i]);
    segments_[i].list = std::move(list);
    for (uint32_t a : segments_[i].after) waited_for[a] = true;
  }
  segment_sinks_.clear();
  for (size_t i = 0; i < segments_.size(); ++i)
    if (!waited_for[i]) segment_sinks_.push_back(static_cast<uint32_t>(i));
}

void Recording::update(std::span<std::pair<SyncPoint, Operation>> changes) {
  std::vector<std::shared_ptr<OperationList>> copies(segments_.size());
  for (auto& [p, op] : changes) {
    if (!segments_.empty()) {
      const auto [segment, index] = place_[p];
      // In-flight replays hold the old list: the changed segment gets a new one.
      if (!copies[segment])
        copies[segment] = std::make_shared<OperationList>(*segments_[segment].list);
      copies[segment]->ops[index] = op;
    }
    nodes_[p].op = std::move(op);
  }
  for (size_t i = 0; i < copies.size(); ++i)
    if (copies[i]) segments_[i].list = std::move(copies[i]);
}

namespace {
// Enqueues `command` after `dependencies`.
Ref<Event> enqueue(CommandQueue& queue, Ref<Command> command, std::span<Event* const> dependencies,
                   bool keep_api_reference) {
  Ref<Event> event = command->event_ref();
  if (!keep_api_reference) event->drop_unpublished_api_reference();
  queue.submitter().enqueue(*command, dependencies, SyncKind::None);
  return event;
}
}  // namespace

Ref<Event> Recording::replay(std::span<CommandQueue* const> queues,
                             std::span<Event* const> wait_list, cl_command_type final_type,
                             bool keep_api_reference) const {
  if (segments_.empty() && !nodes_.empty())
    return replay_nodes(queues, wait_list, final_type, keep_api_reference);
  // One segment on the first queue: its command is the whole replay.
  if (segments_.size() == 1 && segments_[0].queue == 0)
    return enqueue(*queues[0], Command::make(*queues[0], final_type, SequenceOp{segments_[0].list}),
                   wait_list, keep_api_reference);
  std::vector<Ref<Event>> events;
  events.reserve(segments_.size());
  std::vector<Event*> dependencies;
  for (const Segment& s : segments_) {
    // A segment that waits for others waits for the wait list through them.
    if (s.after.empty())
      dependencies.assign(wait_list.begin(), wait_list.end());
    else
      dependencies.clear();
    for (uint32_t a : s.after) dependencies.push_back(events[a].get());
    CommandQueue& queue = *queues[s.queue];
    events.push_back(
        enqueue(queue, Command::make(queue, final_type, SequenceOp{s.list}), dependencies, false));
  }
  dependencies.assign(wait_list.begin(), wait_list.end());
  for (uint32_t s : segment_sinks_) dependencies.push_back(events[s].get());
  return enqueue(*queues[0], Command::make(*queues[0], final_type, NoOp{}), dependencies,
                 keep_api_reference);
}

Ref<Event> Recording::replay_nodes(std::span<CommandQueue* const> queues,
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
    events.push_back(
        enqueue(queue, Command::make(queue, node.type, Operation(node.op)), dependencies, false));
  }
  dependencies.assign(wait_list.begin(), wait_list.end());
  for (SyncPoint s : sinks_) dependencies.push_back(events[s].get());
  // Not a marker of the queue: it waits for the recorded commands only, not for every command
  // enqueued before it on an out-of-order queue.
  return enqueue(*queues[0], Command::make(*queues[0], final_type, NoOp{}), dependencies,
                 keep_api_reference);
}

}  // namespace manifold
