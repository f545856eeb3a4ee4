#include "api/common.h"

namespace manifold::api {

std::vector<Event*> resolve_wait_list(const Context& context, cl_uint count, const cl_event* list) {
  check((count == 0) == (list == nullptr), CL_INVALID_EVENT_WAIT_LIST,
        "num_events_in_wait_list and event_wait_list disagree");
  std::vector<Event*> events;
  events.reserve(count);
  for (cl_uint i = 0; i < count; ++i) {
    Event* e = nullptr;
    try {
      e = resolve<Event>(list[i]);
    } catch (const Error&) {
      fail(CL_INVALID_EVENT_WAIT_LIST, "the wait list holds an invalid event");
    }
    check(&e->context() == &context, CL_INVALID_CONTEXT,
          "a waited-for event belongs to another context");
    events.push_back(e);
  }
  return events;
}

void submit(CommandQueue& queue, Ref<Command> command, std::span<Event* const> wait_list,
            cl_event* event_out, bool blocking, SyncKind sync) {
  // The command's event was created with one API reference, meant for the application; that
  // reference keeps it alive here. Not wanted: it goes before the command is shared (no atomic
  // operation), and only a blocking call keeps the event alive for its wait.
  Event& event = command->event();
  Ref<Event> waited;
  if (!event_out) {
    if (blocking) waited = command->event_ref();
    event.drop_unpublished_api_reference();
  }
  queue.enqueue(std::move(command), wait_list, sync);
  if (event_out) *event_out = event.handle();
  if (blocking && queue.wait_for(event) < 0)
    fail(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "the command did not complete");
}

}  // namespace manifold::api
