#include "core/context.h"

#include <algorithm>

#include "core/log.h"

namespace manifold {

Context::Context(std::vector<Device*> devices, std::vector<cl_context_properties> properties,
                 ContextNotify notify, void* user_data)
    : properties_(std::move(properties)), notify_(notify), notify_user_data_(user_data) {
  const auto add_executing = [this](Device* d) {
    if (std::find(executing_devices_.begin(), executing_devices_.end(), d) ==
        executing_devices_.end())
      executing_devices_.push_back(d);
  };
  for (Device* d : devices) {
    devices_.emplace_back(d);
    if (!d->is_group()) add_executing(d);
    for (const Ref<Device>& member : d->members()) add_executing(member.get());
  }
  for (Device* d : executing_devices_)
    tracks_residency_ = tracks_residency_ || d->memory_place() != kHostPlace;
}

Context::~Context() {
  // The spec: callbacks are called in the reverse order of registration, when the context
  // and every object created in it are gone.
  for (auto it = destructor_callbacks_.rbegin(); it != destructor_callbacks_.rend(); ++it)
    it->first(handle(), it->second);
}

bool Context::has_device(const Device* d) const {
  return std::any_of(devices_.begin(), devices_.end(),
                     [d](const Ref<Device>& x) { return x.get() == d; });
}

bool Context::any_device(bool (*predicate)(const DeviceInfo&)) const {
  return std::any_of(devices_.begin(), devices_.end(),
                     [predicate](const Ref<Device>& x) { return predicate(x->info()); });
}

void Context::notify(const char* message) const {
  log_debug("context %p: %s", static_cast<const void*>(this), message);
  if (notify_) notify_(message, nullptr, 0, notify_user_data_);
}

void Context::add_destructor_callback(ContextDestructorCallback fn, void* user_data) {
  std::lock_guard lock(mutex_);
  destructor_callbacks_.emplace_back(fn, user_data);
}

}  // namespace manifold
