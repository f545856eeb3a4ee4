#pragma once

#include <functional>
#include <mutex>
#include <vector>

#include "core/device.h"
#include "core/object.h"

namespace manifold {

using ContextNotify = void(CL_CALLBACK*)(const char*, const void*, size_t, void*);
using ContextDestructorCallback = void(CL_CALLBACK*)(cl_context, void*);

class Context : public ApiObject<_cl_context, ObjectKind::Context, CL_INVALID_CONTEXT> {
 public:
  Context(std::vector<Device*> devices, std::vector<cl_context_properties> properties,
          ContextNotify notify, void* user_data);
  ~Context() override;

  const std::vector<Ref<Device>>& devices() const { return devices_; }
  // The devices that run the context's commands: its devices with each group replaced by its
  // members, no device twice. Memory every device must reach in place is mapped on these.
  const std::vector<Device*>& executing_devices() const { return executing_devices_; }
  const std::vector<cl_context_properties>& properties() const { return properties_; }
  bool has_device(const Device* d) const;
  bool any_device(bool (*predicate)(const DeviceInfo&)) const;
  // Some device keeps buffers in memory of its own: the scheduler must track where buffer
  // contents are current and move them (scheduler/migration.h). False for CPU-only contexts.
  bool tracks_residency() const { return tracks_residency_; }

  // Reports an error to the application's pfn_notify (and the debug log).
  void notify(const char* message) const;

  void add_destructor_callback(ContextDestructorCallback fn, void* user_data);

 private:
  std::vector<Ref<Device>> devices_;
  std::vector<Device*> executing_devices_;  // held by devices_ (groups hold their members)
  bool tracks_residency_ = false;
  std::vector<cl_context_properties> properties_;
  ContextNotify notify_;
  void* notify_user_data_;
  std::mutex mutex_;
  std::vector<std::pair<ContextDestructorCallback, void*>> destructor_callbacks_;
};

}  // namespace manifold
