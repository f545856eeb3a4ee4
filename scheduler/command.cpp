#include "scheduler/command.h"

#include <cstdio>

#include "core/error.h"
#include "core/platform.h"

namespace manifold {

Command::Command(CommandQueue& queue, cl_command_type type)
    : Job(queue.device().backend_name()),
      event_(new Event(nullptr, Ref<CommandQueue>(&queue), type)) {  // the event holds the queue
  // The event was born with one API reference: the entry point hands it to the application,
  // or drops it when the application asked for no event. event_ holds the command's own.
  if (queue.profiling()) event_->set_stamp(Event::kQueued, host_time_ns());
}

void Command::finish(cl_int status) {
  // The operation's objects go first: a buffer released by the application meanwhile is
  // deleted here (its destructor callbacks run), before the event completes and before clFinish or
  // a wait for this event returns.
  drop_work();
  event_->set_status(status);
  // A command that failed by itself (not because of its wait list) is reported to the
  // context's pfn_notify.
  if (status < 0 && status != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
    char message[128];
    std::snprintf(message, sizeof(message), "command 0x%x failed: %s",
                  static_cast<unsigned>(event_->command_type()), error_name(status));
    queue().context().notify(message);
  }
  queue().submitter().retire(*event_);
}

}  // namespace manifold
