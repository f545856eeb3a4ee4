// Shared pieces of the entry points: wait lists, handing out events, property lists.
#pragma once

#include <span>
#include <vector>

#include "core/context.h"
#include "core/event.h"
#include "core/queue.h"
#include "scheduler/command.h"
#include "scheduler/submitter.h"

namespace manifold::api {

// Resolves an event wait list. The spec: CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL
// and num_events_in_wait_list > 0, or not NULL and num_events_in_wait_list is 0, or if event
// objects in it are not valid events; CL_INVALID_CONTEXT if the context of the queue and of
// the events differ.
std::vector<Event*> resolve_wait_list(const Context& context, cl_uint count, const cl_event* list);

// Walks a zero-terminated (name, value) property list; `visit(name, value)`.
template <class T, class Visit>
std::vector<T> read_properties(const T* properties, Visit visit) {
  std::vector<T> copy;
  if (!properties) return copy;
  for (const T* p = properties; *p != 0; p += 2) {
    visit(p[0], p[1]);
    copy.push_back(p[0]);
    copy.push_back(p[1]);
  }
  copy.push_back(0);
  return copy;
}

void* extension_function(const char* name);

}  // namespace manifold::api
