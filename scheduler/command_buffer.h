// A command buffer (cl_khr_command_buffer): commands recorded once for a list of queues (of one
// device or several: cl_khr_command_buffer_multi_device), finalized, then enqueued as often as
// wanted. The recorded work is a Recording (scheduler/recording.h); this class keeps the state
// machine, the order the queues imply between recorded commands, and the mutable-command handles
// (cl_khr_command_buffer_mutable_dispatch) that let the application change recorded launches.
#pragma once

#include "core/cl_khr_command_buffer.h"

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/command_buffer_capabilities.h"
#include "core/kernel.h"
#include "core/queue.h"
#include "scheduler/recording.h"

namespace manifold {

class CommandBuffer;

// What an ND-range was recorded with: enough to plan it again when the application changes it
// (mutable dispatch) or when the command buffer is remapped to another device.
struct RecordedLaunch {
  std::shared_ptr<const KernelArgs> args;  // holds the kernel
  cl_uint work_dim = 1;
  std::array<size_t, 3> global_offset{}, global_size{}, local_size{};
  bool offset_given = false, global_given = false, local_given = false;
};

// A cl_mutable_command_khr: one recorded command of a command buffer that owns it; it lives as
// long as its command buffer (the spec gives it no reference count).
class MutableCommand : public _cl_mutable_command_khr {
 public:
  static constexpr cl_int kInvalidHandle = CL_INVALID_MUTABLE_COMMAND_KHR;
  using Handle = cl_mutable_command_khr;
  MutableCommand(CommandBuffer& owner, Recording::SyncPoint node, cl_command_type type,
                 std::vector<cl_properties> properties, cl_bitfield updatable)
      : _cl_mutable_command_khr(ObjectKind::MutableCommand),
        owner_(owner),
        node_(node),
        type_(type),
        properties_(std::move(properties)),
        updatable_(updatable) {}
  MutableCommand(const MutableCommand&) = delete;
  ~MutableCommand() { kind = ObjectKind::Dead; }
  Handle handle() { return this; }
  static MutableCommand* checked(Handle h) {
    if (h == nullptr || h->dispatch != &kIcdDispatch || h->kind != ObjectKind::MutableCommand)
      fail(kInvalidHandle, "invalid mutable-command handle");
    return static_cast<MutableCommand*>(h);
  }

  CommandBuffer& owner() const { return owner_; }
  Recording::SyncPoint node() const { return node_; }
  cl_command_type type() const { return type_; }
  const std::vector<cl_properties>& properties() const { return properties_; }
  // cl_mutable_dispatch_fields_khr the command was recorded with.
  cl_bitfield updatable() const { return updatable_; }

 private:
  CommandBuffer& owner_;
  const Recording::SyncPoint node_;
  const cl_command_type type_;
  const std::vector<cl_properties> properties_;
  const cl_bitfield updatable_;
};

class CommandBuffer : public ApiObject<_cl_command_buffer_khr, ObjectKind::CommandBuffer,
                                       CL_INVALID_COMMAND_BUFFER_KHR> {
 public:
  using SyncPoint = Recording::SyncPoint;

  // `properties`: as the application gave them (empty: none given).
  CommandBuffer(std::vector<Ref<CommandQueue>> queues, cl_bitfield flags,
                std::vector<cl_command_buffer_properties_khr> properties);
  ~CommandBuffer() override;

  Context& context() const { return queues_.front()->context(); }
  const std::vector<Ref<CommandQueue>>& queues() const { return queues_; }
  cl_bitfield flags() const { return flags_; }
  bool mutable_commands() const;
  const std::vector<cl_command_buffer_properties_khr>& properties() const { return properties_; }
  bool finalized() const { return finalized_; }
  cl_command_buffer_state_khr state() const;

  // ---- Recording (thread: the application's, one at a time) ----
  // The index of `queue` among the queues, or none.
  std::optional<uint32_t> queue_index(const CommandQueue& queue) const;
  bool valid_sync_point(cl_sync_point_khr p) const { return p < recording_.size(); }
  // Records a command for queue `queue` after `wait` and after what the queue's ordering asks
  // (an in-order queue: its previous command; any queue: its last barrier). A barrier with an
  // empty `wait` waits for every command recorded for its queue. Returns its sync point.
  SyncPoint record(uint32_t queue, cl_command_type type, Operation op,
                   std::span<const cl_sync_point_khr> wait, bool barrier = false);
  // A copy of a recorded command of another command buffer (clRemapCommandBufferKHR): its
  // dependencies as they were, on queue `queue` of this one.
  SyncPoint copy(uint32_t queue, cl_command_type type, Operation op,
                 std::span<const SyncPoint> after, bool barrier);
  bool is_barrier(SyncPoint node) const { return barriers_[node]; }
  // What an ND-range command was recorded with (kept for every one of them).
  void set_launch(SyncPoint node, RecordedLaunch launch);
  const RecordedLaunch* launch(SyncPoint node) const {
    auto it = launches_.find(node);
    return it == launches_.end() ? nullptr : &it->second;
  }
  // Keeps a mutable-command handle for the recorded command `node`.
  MutableCommand* add_mutable(SyncPoint node, cl_command_type type,
                              std::vector<cl_properties> properties, cl_bitfield updatable);
  bool owns(const MutableCommand& command) const { return &command.owner() == this; }
  const std::vector<std::unique_ptr<MutableCommand>>& mutable_commands_list() const {
    return mutables_;
  }
  const Recording& recording() const { return recording_; }
  // Ends recording (the recording groups its commands into what replays run).
  void finalize();
  void set_state_from(const CommandBuffer& other) {
    if (other.finalized_) finalize();
  }

  // ---- Executable ----
  // Enqueues the recorded work on `queues` (one per queue of the command buffer, same order);
  // returns the event of the whole (the application's reference kept when `publish`).
  Ref<Event> enqueue(std::span<CommandQueue* const> queues, std::span<Event* const> wait_list,
                     bool publish);
  // Replaces recorded operations and launch records together (one clUpdateMutableCommandsKHR).
  struct Update {
    MutableCommand* command;
    Operation op;
    RecordedLaunch launch;
  };
  void apply(std::vector<Update> updates);

 private:
  struct QueueOrder {
    std::optional<SyncPoint> last;          // the latest command recorded for the queue
    std::optional<SyncPoint> last_barrier;  // every later command waits for it
    std::vector<SyncPoint> since_barrier;   // what a barrier without wait list waits for
  };

  const std::vector<Ref<CommandQueue>> queues_;
  const cl_bitfield flags_;
  const std::vector<cl_command_buffer_properties_khr> properties_;
  bool finalized_ = false;
  std::vector<QueueOrder> order_;
  std::vector<bool> barriers_;  // per recorded command
  size_t incomplete_ = 0;       // launches with arguments not set yet (mutable dispatch)
  std::unordered_map<SyncPoint, RecordedLaunch> launches_;
  // Replays copy operations while updates replace them.
  std::mutex mutex_;
  Recording recording_;
  std::vector<std::unique_ptr<MutableCommand>> mutables_;
};

}  // namespace manifold
