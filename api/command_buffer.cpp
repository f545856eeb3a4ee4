// cl_khr_command_buffer (0.9.8) and cl_khr_command_buffer_multi_device (0.9.2): creating,
// finalizing, enqueuing, querying and remapping command buffers. Recording commands is in
// api/command_record.cpp, changing them (mutable dispatch) in api/mutable_dispatch.cpp.
#include "scheduler/command_buffer.h"

#include <algorithm>

#include "api/common.h"
#include "api/impl.h"
#include "api/ndrange.h"
#include "core/info.h"

namespace manifold::api::impl {
namespace {

// Devices sync natively with devices of their own backend (CPU worker queues, CUDA streams);
// across backends the scheduler resolves the dependency (universal sync).
bool sync_natively(const Device& a, const Device& b) {
  return std::string_view(a.backend_name()) == b.backend_name();
}

std::vector<Ref<CommandQueue>> resolve_queues(cl_uint num_queues, const cl_command_queue* queues) {
  std::vector<Ref<CommandQueue>> out;
  for (cl_uint i = 0; i < num_queues; ++i) {
    // The spec: CL_INVALID_COMMAND_QUEUE if any command-queue in queues is not a valid
    // command-queue.
    out.emplace_back(resolve<CommandQueue>(queues[i]));
  }
  return out;
}

}  // namespace

cl_command_buffer_khr clCreateCommandBufferKHR(cl_uint num_queues, const cl_command_queue* queues,
                                               const cl_command_buffer_properties_khr* properties) {
  // The spec: CL_INVALID_VALUE if queues is NULL.
  check(queues != nullptr, CL_INVALID_VALUE, "queues is NULL");
  // The spec: CL_INVALID_VALUE if the cl_khr_command_buffer_multi_device extension is supported
  // and num_queues is zero.
  check(num_queues > 0, CL_INVALID_VALUE, "num_queues is 0");
  std::vector<Ref<CommandQueue>> list = resolve_queues(num_queues, queues);
  // The spec: CL_INVALID_CONTEXT if all the command-queues in queues do not have the same
  // OpenCL context.
  for (const Ref<CommandQueue>& q : list)
    check(&q->context() == &list.front()->context(), CL_INVALID_CONTEXT,
          "the queues belong to different contexts");

  cl_command_buffer_flags_khr flags = 0;
  bool flags_seen = false, asserts_seen = false;
  std::vector<cl_command_buffer_properties_khr> copy = read_properties(
      properties,
      [&](cl_command_buffer_properties_khr name, cl_command_buffer_properties_khr value) {
        switch (name) {
          case CL_COMMAND_BUFFER_FLAGS_KHR:
            // The spec: CL_INVALID_VALUE if values specified in properties are not valid, or
            // if the same property name is specified more than once.
            check(!flags_seen, CL_INVALID_VALUE, "CL_COMMAND_BUFFER_FLAGS_KHR given twice");
            flags_seen = true;
            check((value &
                   ~cl_command_buffer_properties_khr(CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR |
                                                     CL_COMMAND_BUFFER_MUTABLE_KHR |
                                                     CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR)) == 0,
                  CL_INVALID_VALUE, "unknown command-buffer flags");
            flags = value;
            break;
          case CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR:
            check(!asserts_seen, CL_INVALID_VALUE,
                  "CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR given twice");
            asserts_seen = true;
            check((value & ~cl_command_buffer_properties_khr(
                               CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR)) == 0,
                  CL_INVALID_VALUE, "unknown mutable-dispatch asserts");
            break;
          default:
            fail(CL_INVALID_VALUE, "unknown command-buffer property");
        }
      });
  // The spec: CL_INVALID_PROPERTY if values specified in properties are valid but are not
  // supported by all the devices: every device supports simultaneous use and mutable commands
  // (CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR), so nothing more is refused here.

  // The spec (multi_device): CL_INCOMPATIBLE_COMMAND_QUEUE_KHR if the
  // CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR flag is set, and any device associated with a
  // command-queue in queues cannot natively synchronize with the other devices. Without the
  // flag the platform's universal sync joins them.
  if (flags & CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR)
    for (const Ref<CommandQueue>& a : list)
      for (const Ref<CommandQueue>& b : list)
        check(sync_natively(a->device(), b->device()), CL_INCOMPATIBLE_COMMAND_QUEUE_KHR,
              "CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR with devices of different backends");
  auto* cb = make_api_object<CommandBuffer>(std::move(list), flags, std::move(copy));
  return cb->handle();
}

void clRetainCommandBufferKHR(cl_command_buffer_khr command_buffer) {
  // The spec: CL_INVALID_COMMAND_BUFFER_KHR if command_buffer is not a valid command-buffer.
  resolve<CommandBuffer>(command_buffer)->retain_api();
}

void clReleaseCommandBufferKHR(cl_command_buffer_khr command_buffer) {
  // The spec: CL_INVALID_COMMAND_BUFFER_KHR if command_buffer is not a valid command-buffer.
  // Enqueued instances hold copies of what they run: the command buffer may go at once.
  resolve<CommandBuffer>(command_buffer)->release_api();
}

void clFinalizeCommandBufferKHR(cl_command_buffer_khr command_buffer) {
  CommandBuffer& cb = *resolve<CommandBuffer>(command_buffer);
  // The spec: CL_INVALID_OPERATION if command_buffer is not in the Recording state.
  check(!cb.finalized(), CL_INVALID_OPERATION, "the command-buffer is already finalized");
  cb.finalize();
}

void clEnqueueCommandBufferKHR(cl_uint num_queues, cl_command_queue* queues,
                               cl_command_buffer_khr command_buffer,
                               cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
                               cl_event* event) {
  CommandBuffer& cb = *resolve<CommandBuffer>(command_buffer);
  // The spec: CL_INVALID_OPERATION if command_buffer is not in the Executable state.
  check(cb.state() == CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR, CL_INVALID_OPERATION,
        cb.finalized() ? "a recorded kernel's arguments are not all set"
                       : "the command-buffer is not finalized");
  // The spec: CL_INVALID_VALUE if queues is NULL and num_queues is > 0, or queues is not NULL
  // and num_queues is 0.
  check((queues == nullptr) == (num_queues == 0), CL_INVALID_VALUE,
        "queues and num_queues disagree");
  // The spec: CL_INVALID_VALUE if num_queues is > 0 and not the same value as num_queues set
  // on command_buffer creation.
  check(num_queues == 0 || num_queues == cb.queues().size(), CL_INVALID_VALUE,
        "num_queues differs from the command-buffer's");
  std::vector<CommandQueue*> targets;
  targets.reserve(cb.queues().size());
  for (size_t i = 0; i < cb.queues().size(); ++i) {
    CommandQueue& recorded = *cb.queues()[i];
    // The spec: CL_INVALID_COMMAND_QUEUE if any element of queues is not a valid command-queue.
    CommandQueue& q = queues ? *resolve<CommandQueue>(queues[i]) : recorded;
    // The spec: CL_INCOMPATIBLE_COMMAND_QUEUE_KHR if the properties of any command-queue in
    // queues contain a property not specified by
    // CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR (the required ones are none).
    check((q.properties() & ~kCommandBufferQueueProperties) == 0, CL_INCOMPATIBLE_COMMAND_QUEUE_KHR,
          "the queue has properties command buffers do not support");
    // The spec: CL_INVALID_CONTEXT if any element of queues does not have the same context as
    // the command-queue set on command_buffer creation at the same list index.
    check(&q.context() == &recorded.context(), CL_INVALID_CONTEXT,
          "a queue belongs to another context than the command-buffer's");
    // The spec: CL_INVALID_DEVICE if any element of queues does not have the same device as
    // the command-queue set on command_buffer creation at the same list index.
    check(&q.device() == &recorded.device(), CL_INVALID_DEVICE,
          "a queue's device differs from the command-buffer's queue at that index");
    targets.push_back(&q);
  }
  // The spec: CL_INVALID_EVENT_WAIT_LIST for a bad wait list; CL_INVALID_CONTEXT if the
  // context associated with command_buffer and events in event_wait_list are not the same.
  const std::vector<Event*> waits =
      resolve_wait_list(cb.context(), num_events_in_wait_list, event_wait_list);
  Ref<Event> done = cb.enqueue(targets, waits, /*publish=*/event != nullptr);
  if (event) *event = done->handle();
}

void clGetCommandBufferInfoKHR(cl_command_buffer_khr command_buffer,
                               cl_command_buffer_info_khr param_name, size_t param_value_size,
                               void* param_value, size_t* param_value_size_ret) {
  CommandBuffer& cb = *resolve<CommandBuffer>(command_buffer);
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_COMMAND_BUFFER_NUM_QUEUES_KHR:
      return out.value(static_cast<cl_uint>(cb.queues().size()));
    case CL_COMMAND_BUFFER_QUEUES_KHR: {
      std::vector<cl_command_queue> handles;
      for (const Ref<CommandQueue>& q : cb.queues()) handles.push_back(q->handle());
      return out.array(handles);
    }
    case CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR:
      return out.value(cb.api_reference_count());
    case CL_COMMAND_BUFFER_STATE_KHR:
      return out.value(cb.state());
    case CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR:
      // The spec: the values given at creation; none given: a size of 0.
      return out.array(cb.properties());
    case CL_COMMAND_BUFFER_CONTEXT_KHR:
      return out.value(cb.context().handle());
    default:
      // The spec: CL_INVALID_VALUE if param_name is not one of the supported values.
      unknown_param("command-buffer");
  }
}

cl_command_buffer_khr clRemapCommandBufferKHR(cl_command_buffer_khr command_buffer,
                                              cl_bool automatic, cl_uint num_queues,
                                              const cl_command_queue* queues, cl_uint num_handles,
                                              const cl_mutable_command_khr* handles,
                                              cl_mutable_command_khr* handles_ret) {
  CommandBuffer& cb = *resolve<CommandBuffer>(command_buffer);
  // The spec: CL_INVALID_VALUE if num_queues is 0, or if queues is NULL.
  check(num_queues > 0 && queues != nullptr, CL_INVALID_VALUE, "no queues");
  // The spec: CL_INVALID_VALUE if automatic is CL_FALSE and num_queues is not equal to the
  // number of queues used on creation of command_buffer.
  check(automatic || num_queues == cb.queues().size(), CL_INVALID_VALUE,
        "num_queues differs from the command-buffer's");
  // The spec: CL_INVALID_VALUE if handles or handles_ret is NULL and num_handles is > 0, or
  // either is not NULL and num_handles is 0.
  if (num_handles > 0)
    check(handles && handles_ret, CL_INVALID_VALUE, "handles or handles_ret is NULL");
  else
    check(!handles && !handles_ret, CL_INVALID_VALUE, "handles given with num_handles 0");
  // The spec: CL_INVALID_VALUE if any handle in handles is not a valid command handle
  // belonging to command_buffer.
  std::vector<const MutableCommand*> wanted;
  for (cl_uint i = 0; i < num_handles; ++i) {
    const MutableCommand* m = nullptr;
    try {
      m = MutableCommand::checked(handles[i]);
    } catch (const Error&) {
      fail(CL_INVALID_VALUE, "a handle is not a valid command handle");
    }
    check(cb.owns(*m), CL_INVALID_VALUE, "a handle belongs to another command-buffer");
    wanted.push_back(m);
  }
  std::vector<Ref<CommandQueue>> list = resolve_queues(num_queues, queues);
  // The spec: CL_INVALID_CONTEXT if command_buffer and all the command-queues in queues do not
  // have the same OpenCL context.
  for (const Ref<CommandQueue>& q : list)
    check(&q->context() == &cb.context(), CL_INVALID_CONTEXT,
          "a queue belongs to another context than the command-buffer's");

  // Where each queue's commands go. Explicit: the queue at the same index. Automatic
  // (CL_COMMAND_BUFFER_PLATFORM_AUTOMATIC_REMAP_KHR): a queue of the same device where there
  // is one (nothing moves), else the queues in turn.
  std::vector<uint32_t> target(cb.queues().size());
  for (size_t i = 0; i < target.size(); ++i) {
    target[i] = static_cast<uint32_t>(i % list.size());
    if (automatic)
      for (size_t j = 0; j < list.size(); ++j)
        if (&list[j]->device() == &cb.queues()[i]->device()) {
          target[i] = static_cast<uint32_t>(j);
          break;
        }
  }
  auto copy = Ref<CommandBuffer>::adopt(
      make_api_object<CommandBuffer>(std::move(list), cb.flags(), cb.properties()));
  const Recording& recording = cb.recording();
  for (Recording::SyncPoint p = 0; p < recording.size(); ++p) {
    const Recording::Node& node = recording.node(p);
    const uint32_t queue = target[node.queue];
    Operation op = node.op;
    if (const RecordedLaunch* l = cb.launch(p)) {
      // The spec: any error relating to device support that a recording entry point returns:
      // the launch is planned again for the new device (its build, its work-group limits).
      Kernel& kernel = *l->args->kernel;
      op = ndrange_operation(copy->queues()[queue]->device(), kernel, l->work_dim,
                             l->offset_given ? l->global_offset.data() : nullptr,
                             l->global_given ? l->global_size.data() : nullptr,
                             l->local_given ? l->local_size.data() : nullptr, l->args);
      copy->set_launch(p, *l);
    }
    copy->copy(queue, node.type, std::move(op), node.after, cb.is_barrier(p));
  }
  for (const auto& m : cb.mutable_commands_list()) {
    MutableCommand* twin = copy->add_mutable(m->node(), m->type(), m->properties(), m->updatable());
    for (cl_uint i = 0; i < num_handles; ++i)
      if (wanted[i] == m.get()) handles_ret[i] = twin->handle();
  }
  // The spec: the returned command-buffer has the same state as the input command-buffer.
  copy->set_state_from(cb);
  return copy.detach()->handle();
}

}  // namespace manifold::api::impl
