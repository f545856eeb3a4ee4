// Event entry points, and the synchronisation commands (markers, barriers).
#include "api/common.h"
#include "api/impl.h"
#include "core/info.h"

namespace manifold::api::impl {

void clWaitForEvents(cl_uint num_events, const cl_event* event_list) {
  // The spec: CL_INVALID_VALUE if num_events is zero or event_list is NULL; CL_INVALID_CONTEXT
  // if the events do not all belong to one context; CL_INVALID_EVENT if one is not valid.
  check(num_events > 0 && event_list, CL_INVALID_VALUE, "no events given");
  // References for the wait: another thread may release an event (even a user event nobody
  // will set any more) while this one sleeps on it.
  std::vector<Ref<Event>> events;
  events.reserve(num_events);
  for (cl_uint i = 0; i < num_events; ++i) {
    events.emplace_back(resolve<Event>(event_list[i]));
    check(&events.back()->context() == &events.front()->context(), CL_INVALID_CONTEXT,
          "the events belong to different contexts");
  }
  bool failed = false;
  for (const Ref<Event>& e : events) {
    // clWaitForEvents flushes the queues of the events it waits for.
    const cl_int status = e->queue() ? e->queue()->wait_for(*e) : e->wait();
    failed = failed || status < 0;
  }
  check(!failed, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "an event ended in an error");
}

void clGetEventInfo(cl_event event, cl_event_info param_name, size_t param_value_size,
                    void* param_value, size_t* param_value_size_ret) {
  Event& e = *resolve<Event>(event);
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_EVENT_COMMAND_QUEUE:
      return out.value(e.queue() ? e.queue()->handle() : cl_command_queue{});
    case CL_EVENT_CONTEXT:
      return out.value(e.context().handle());
    case CL_EVENT_COMMAND_TYPE:
      return out.value(e.command_type());
    case CL_EVENT_COMMAND_EXECUTION_STATUS: {
      // An application polling the status must see it change without calling clFlush.
      const cl_int status = e.status();
      if (status > CL_COMPLETE) e.want_completion();
      return out.value(status);
    }
    case CL_EVENT_REFERENCE_COUNT:
      return out.value(e.api_reference_count());
    default:
      unknown_param("event");
  }
}

void clRetainEvent(cl_event event) { resolve<Event>(event)->retain_api(); }
void clReleaseEvent(cl_event event) { resolve<Event>(event)->release_api(); }

cl_event clCreateUserEvent(cl_context context) {
  Context& c = *resolve<Context>(context);
  return make_api_object<Event>(Ref<Context>(&c), Ref<CommandQueue>(), CL_COMMAND_USER)->handle();
}

void clSetUserEventStatus(cl_event event, cl_int execution_status) {
  Event& e = *resolve<Event>(event);
  // The spec: CL_INVALID_EVENT if event is not a user event; CL_INVALID_VALUE if the status is
  // neither CL_COMPLETE nor negative; CL_INVALID_OPERATION if it was already set.
  check(e.is_user_event(), CL_INVALID_EVENT, "not a user event");
  check(execution_status <= CL_COMPLETE, CL_INVALID_VALUE,
        "the status must be CL_COMPLETE or negative");
  check(!e.is_terminal(), CL_INVALID_OPERATION, "the user event's status was already set");
  // A callback may release the application's last reference to the event: keep it alive until
  // set_status has finished with it.
  Ref<Event> keep(&e);
  e.set_status(execution_status);
}

void clSetEventCallback(cl_event event, cl_int command_exec_callback_type,
                        void(CL_CALLBACK* pfn_notify)(cl_event, cl_int, void*), void* user_data) {
  Event& e = *resolve<Event>(event);
  check(pfn_notify, CL_INVALID_VALUE, "pfn_notify is NULL");
  check(command_exec_callback_type == CL_SUBMITTED || command_exec_callback_type == CL_RUNNING ||
            command_exec_callback_type == CL_COMPLETE,
        CL_INVALID_VALUE, "the callback type must be CL_SUBMITTED, CL_RUNNING or CL_COMPLETE");
  e.add_callback(command_exec_callback_type, pfn_notify, user_data);
}

void clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name, size_t param_value_size,
                             void* param_value, size_t* param_value_size_ret) {
  Event& e = *resolve<Event>(event);
  // The spec: CL_PROFILING_INFO_NOT_AVAILABLE if the queue lacks CL_QUEUE_PROFILING_ENABLE, the
  // event is a user event, or the command has not completed.
  check(e.queue() && e.queue()->profiling(), CL_PROFILING_INFO_NOT_AVAILABLE,
        "profiling is not enabled");
  check(e.status() == CL_COMPLETE, CL_PROFILING_INFO_NOT_AVAILABLE,
        "the command has not completed");
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_PROFILING_COMMAND_QUEUED:
      return out.value<cl_ulong>(e.stamp(Event::kQueued));
    case CL_PROFILING_COMMAND_SUBMIT:
      return out.value<cl_ulong>(e.stamp(Event::kSubmit));
    case CL_PROFILING_COMMAND_START:
      return out.value<cl_ulong>(e.stamp(Event::kStart));
    case CL_PROFILING_COMMAND_END:
    case CL_PROFILING_COMMAND_COMPLETE:
      return out.value<cl_ulong>(e.stamp(Event::kEnd));
    default:
      unknown_param("profiling");
  }
}

namespace {

void enqueue_sync(cl_command_queue command_queue, cl_command_type type, SyncKind sync,
                  cl_uint num_events, const cl_event* events, cl_event* event) {
  CommandQueue& q = *resolve<CommandQueue>(command_queue);
  std::vector<Event*> waits = resolve_wait_list(q.context(), num_events, events);
  submit_command(Command::make(q, type, NoOp{}), waits, event, false, sync);
}

}  // namespace

void clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint num_events_in_wait_list,
                                 const cl_event* event_wait_list, cl_event* event) {
  enqueue_sync(q, CL_COMMAND_MARKER, SyncKind::Marker, num_events_in_wait_list, event_wait_list,
               event);
}

void clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint num_events_in_wait_list,
                                  const cl_event* event_wait_list, cl_event* event) {
  enqueue_sync(q, CL_COMMAND_BARRIER, SyncKind::Barrier, num_events_in_wait_list, event_wait_list,
               event);
}

void clEnqueueMarker(cl_command_queue q, cl_event* event) {
  resolve<CommandQueue>(q);
  check(event != nullptr, CL_INVALID_VALUE, "event is NULL");
  enqueue_sync(q, CL_COMMAND_MARKER, SyncKind::Marker, 0, nullptr, event);
}

void clEnqueueBarrier(cl_command_queue q) {
  enqueue_sync(q, CL_COMMAND_BARRIER, SyncKind::Barrier, 0, nullptr, nullptr);
}

void clEnqueueWaitForEvents(cl_command_queue q, cl_uint num_events, const cl_event* event_list) {
  resolve<CommandQueue>(q);
  check(num_events > 0 && event_list, CL_INVALID_VALUE, "no events given");
  // A barrier on those events: later commands wait for them.
  enqueue_sync(q, CL_COMMAND_BARRIER, SyncKind::Barrier, num_events, event_list, nullptr);
}

}  // namespace manifold::api::impl
