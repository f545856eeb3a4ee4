#include "core/queue.h"

#include <CL/cl_manifold.h>

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
      submitter_(std::move(submitter)) {
  for (size_t i = 0; i + 1 < property_list_.size(); i += 2) {
    const cl_queue_properties value = property_list_[i + 1];
    if (property_list_[i] == CL_QUEUE_PRINTF_CALLBACK_MFLD)
      printf_sink_.callback = reinterpret_cast<decltype(printf_sink_.callback)>(value);
    if (property_list_[i] == CL_QUEUE_PRINTF_USER_DATA_MFLD)
      printf_sink_.user_data = reinterpret_cast<void*>(value);
  }
}

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
