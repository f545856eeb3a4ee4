#include "core/queue.h"

#include "core/backend.h"
#include "core/event.h"

namespace manifold {

CommandQueue::CommandQueue(Ref<Context> context, Device& device,
                           cl_command_queue_properties properties,
                           std::vector<cl_queue_properties> property_list,
                           std::unique_ptr<Submitter> submitter)
    : context_(std::move(context)),
      device_(&device),
      properties_(properties),
      property_list_(std::move(property_list)),
      submitter_(std::move(submitter)) {}

CommandQueue::~CommandQueue() = default;

void CommandQueue::flush() { submitter_->native().flush(); }

cl_int CommandQueue::wait_for(Event& event) {
  if (event.is_terminal()) return event.status();
  submitter_->native().help_until_idle();
  // Event::wait flushes this queue when the event is still pending.
  return event.wait();
}

void CommandQueue::on_last_api_release() {
  // The spec: clReleaseCommandQueue performs an implicit flush. Queued commands hold their own
  // references, so they still run.
  flush();
}

}  // namespace manifold
