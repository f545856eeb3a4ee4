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

}  // namespace manifold::api
