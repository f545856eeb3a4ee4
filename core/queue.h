// A command queue: OpenCL's view (properties, context, device) over a Submitter from
// scheduler/ that implements the ordering of its mode (in-order or out-of-order).
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <vector>

#include "core/context.h"
#include "core/device.h"
#include "core/object.h"

namespace manifold {

class Command;
class Event;
class Submitter;
// What a command means for the ordering of an out-of-order queue.
enum class SyncKind { None, Marker, Barrier };

class CommandQueue
    : public ApiObject<_cl_command_queue, ObjectKind::Queue, CL_INVALID_COMMAND_QUEUE> {
 public:
  CommandQueue(Ref<Context> context, Device& device, cl_command_queue_properties properties,
               std::vector<cl_queue_properties> property_list);
  ~CommandQueue() override;

  Context& context() const { return *context_; }
  Device& device() const { return *device_; }
  cl_command_queue_properties properties() const { return properties_; }
  const std::vector<cl_queue_properties>& property_list() const { return property_list_; }
  bool profiling() const { return properties_ & CL_QUEUE_PROFILING_ENABLE; }
  bool out_of_order() const { return properties_ & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE; }

  // An entry point's enqueue: puts `command` into the DAG (it runs once `wait_list` and the
  // queue's own ordering allow), gives its event to the application if it asked (`event_out`),
  // and waits for it when `blocking` (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if it
  // failed). Thread: application.
  void submit(Ref<Command> command, std::span<Event* const> wait_list, cl_event* event_out,
              bool blocking = false, SyncKind sync = SyncKind::None);
  // Puts `command` into the DAG (the event stays the caller's). Thread: application.
  void enqueue(Ref<Command> command, std::span<Event* const> wait_list, SyncKind sync);
  void flush();
  void finish();
  // Flushes and sleeps until `event` (a command of this queue) ends; returns its status.
  cl_int wait_for(Event& event);

  // Called by Command when it reaches a terminal state (after its event's status is final).
  void command_done(Event& event);

 private:
  void on_last_api_release() override;

  Ref<Context> context_;
  Ref<Device> device_;
  const cl_command_queue_properties properties_;
  const std::vector<cl_queue_properties> property_list_;
  std::unique_ptr<Submitter> submitter_;
  std::atomic<uint64_t> in_flight_{0};
  std::atomic<uint32_t> finishing_{0};  // threads inside finish()
};

}  // namespace manifold
