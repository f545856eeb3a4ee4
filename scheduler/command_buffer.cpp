#include "scheduler/command_buffer.h"

#include <algorithm>

#include "core/event.h"

namespace manifold {

CommandBuffer::CommandBuffer(std::vector<Ref<CommandQueue>> queues, cl_bitfield flags,
                             std::vector<cl_command_buffer_properties_khr> properties)
    : queues_(std::move(queues)),
      flags_(flags),
      properties_(std::move(properties)),
      order_(queues_.size()) {}

CommandBuffer::~CommandBuffer() = default;

bool CommandBuffer::mutable_commands() const { return flags_ & CL_COMMAND_BUFFER_MUTABLE_KHR; }

cl_command_buffer_state_khr CommandBuffer::state() const {
  if (!finalized_) return CL_COMMAND_BUFFER_STATE_RECORDING_KHR;
  // The spec (mutable dispatch): Finalized while a command's arguments are not all set.
  return incomplete_ ? CL_COMMAND_BUFFER_STATE_FINALIZED_KHR
                     : CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR;
}

void CommandBuffer::set_launch(SyncPoint node, RecordedLaunch launch) {
  auto it = launches_.find(node);
  if (it != launches_.end() && !it->second.args->complete()) --incomplete_;
  if (!launch.args->complete()) ++incomplete_;
  launches_[node] = std::move(launch);
}

std::optional<uint32_t> CommandBuffer::queue_index(const CommandQueue& queue) const {
  for (size_t i = 0; i < queues_.size(); ++i)
    if (queues_[i].get() == &queue) return static_cast<uint32_t>(i);
  return std::nullopt;
}

CommandBuffer::SyncPoint CommandBuffer::record(uint32_t queue, cl_command_type type, Operation op,
                                               std::span<const cl_sync_point_khr> wait,
                                               bool barrier) {
  QueueOrder& order = order_[queue];
  std::vector<SyncPoint> after(wait.begin(), wait.end());
  // The spec: an in-order queue adds a dependency on the last command recorded for it; a
  // barrier blocks every command recorded after it; a barrier without a wait list waits for
  // every command recorded before it (for its queue).
  if (!queues_[queue]->out_of_order() && order.last) after.push_back(*order.last);
  if (order.last_barrier) after.push_back(*order.last_barrier);
  if (barrier && wait.empty())
    after.insert(after.end(), order.since_barrier.begin(), order.since_barrier.end());
  std::sort(after.begin(), after.end());
  after.erase(std::unique(after.begin(), after.end()), after.end());
  return copy(queue, type, std::move(op), after, barrier);
}

CommandBuffer::SyncPoint CommandBuffer::copy(uint32_t queue, cl_command_type type, Operation op,
                                             std::span<const SyncPoint> after, bool barrier) {
  const SyncPoint self = recording_.add(type, std::move(op), after, queue);
  barriers_.push_back(barrier);
  QueueOrder& order = order_[queue];
  order.last = self;
  if (barrier) {
    order.last_barrier = self;
    order.since_barrier.clear();
  } else {
    order.since_barrier.push_back(self);
  }
  return self;
}

MutableCommand* CommandBuffer::add_mutable(SyncPoint node, cl_command_type type,
                                           std::vector<cl_properties> properties,
                                           cl_bitfield updatable) {
  mutables_.push_back(
      std::make_unique<MutableCommand>(*this, node, type, std::move(properties), updatable));
  return mutables_.back().get();
}

Ref<Event> CommandBuffer::enqueue(std::span<CommandQueue* const> queues,
                                  std::span<Event* const> wait_list, bool publish) {
  std::lock_guard lock(mutex_);
  return recording_.replay(queues, wait_list, CL_COMMAND_COMMAND_BUFFER_KHR, publish);
}

void CommandBuffer::finalize() {
  recording_.finalize();
  // Devices that run recorded work natively make it now (CUDA: the graphs), not at the first
  // enqueue.
  for (size_t i = 0; i < recording_.segments(); ++i)
    queues_[recording_.segment_queue(i)]->device().prepare_recorded(recording_.segment_list(i));
  finalized_ = true;
}

void CommandBuffer::apply(std::vector<Update> updates) {
  std::vector<std::pair<SyncPoint, Operation>> changes;
  changes.reserve(updates.size());
  for (Update& u : updates) changes.emplace_back(u.command->node(), std::move(u.op));
  std::lock_guard lock(mutex_);
  recording_.update(changes);
  for (Update& u : updates) set_launch(u.command->node(), std::move(u.launch));
}

}  // namespace manifold
