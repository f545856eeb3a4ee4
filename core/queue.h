// A command queue: OpenCL's view (properties, context, device) over a Submitter, which the
// scheduler implements for each mode (in-order or out-of-order) and hands in when the queue is
// made. Commands are the scheduler's: entry points hand them to the submitter directly.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "core/context.h"
#include "core/device.h"
#include "core/object.h"
#include "core/operations.h"

namespace manifold {

class Command;
class Event;
class NativeQueue;
// What a command means for the ordering of an out-of-order queue.
enum class SyncKind { None, Marker, Barrier };

// How a queue orders its commands (scheduler/submitter.h implements one per mode).
class Submitter {
 public:
  virtual ~Submitter() = default;
  // Puts `command` (one of this queue's, which the caller keeps alive for the call) into the
  // DAG: it runs once `wait_list` and the queue's own ordering allow, possibly before this
  // returns (the direct path). Thread: application.
  virtual void enqueue(Command& command, std::span<Event* const> wait_list, SyncKind sync) = 0;
  // The command of `event` reached a terminal state (its event's status is final): the
  // submitter drops what it kept of it, then a clFinish waiting for it may return. Events hold
  // their queue, so an event kept here after its command ended would keep the queue (which owns
  // this submitter) and its context alive for ever. Thread: any.
  virtual void retire(Event& event) = 0;
  // Returns once every command enqueued before the call has ended (clFinish).
  virtual void finish() = 0;
  virtual NativeQueue& native() = 0;
};

class CommandQueue
    : public ApiObject<_cl_command_queue, ObjectKind::Queue, CL_INVALID_COMMAND_QUEUE> {
 public:
  // `submitter` orders the queue's commands in its mode (scheduler/submitter.h: make_submitter).
  CommandQueue(Ref<Context> context, Device& device, cl_command_queue_properties properties,
               std::vector<cl_queue_properties> property_list,
               std::unique_ptr<Submitter> submitter);
  ~CommandQueue() override;

  Context& context() const { return *context_; }
  Device& device() const { return *device_; }
  cl_command_queue_properties properties() const { return properties_; }
  const std::vector<cl_queue_properties>& property_list() const { return property_list_; }
  bool profiling() const { return properties_ & CL_QUEUE_PROFILING_ENABLE; }
  // Where its kernels' printf output goes (CL_QUEUE_PRINTF_CALLBACK_MFLD in the property list).
  const PrintfSink& printf_sink() const { return printf_sink_; }
  bool out_of_order() const { return properties_ & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE; }

  // Orders the queue's commands: the scheduler's entry for every enqueue.
  Submitter& submitter() const { return *submitter_; }
  void flush();
  void finish() { submitter_->finish(); }
  // Flushes and sleeps until `event` (a command of this queue) ends; returns its status.
  cl_int wait_for(Event& event);

 private:
  void on_last_api_release() override;

  Ref<Context> context_;
  Ref<Device> device_;
  const cl_command_queue_properties properties_;
  const std::vector<cl_queue_properties> property_list_;
  PrintfSink printf_sink_;
  std::unique_ptr<Submitter> submitter_;
};

}  // namespace manifold
