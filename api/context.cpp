// Context entry points.
#include <algorithm>

#include "api/common.h"
#include "api/impl.h"
#include "core/info.h"
#include "core/platform.h"

namespace manifold::api::impl {
namespace {

std::vector<cl_context_properties> read_context_properties(
    const cl_context_properties* properties) {
  bool seen_platform = false, seen_sync = false;
  return read_properties(properties, [&](cl_context_properties name, cl_context_properties value) {
    switch (name) {
      case CL_CONTEXT_PLATFORM:
        // The spec: CL_INVALID_PLATFORM if the platform value is not a valid platform;
        // CL_INVALID_PROPERTY if a property name is given more than once.
        check(!seen_platform, CL_INVALID_PROPERTY, "CL_CONTEXT_PLATFORM given twice");
        seen_platform = true;
        resolve<Platform>(reinterpret_cast<cl_platform_id>(value));
        break;
      case CL_CONTEXT_INTEROP_USER_SYNC:
        check(!seen_sync, CL_INVALID_PROPERTY, "CL_CONTEXT_INTEROP_USER_SYNC given twice");
        seen_sync = true;
        // The spec: CL_INVALID_PROPERTY if the value specified for a supported property name is
        // not valid (a cl_bool here).
        check(value == CL_TRUE || value == CL_FALSE, CL_INVALID_PROPERTY,
              "CL_CONTEXT_INTEROP_USER_SYNC is not CL_TRUE or CL_FALSE");
        break;
      default:
        fail(CL_INVALID_PROPERTY, "unknown or unsupported context property");
    }
  });
}

cl_context make_context(std::vector<Device*> devices, const cl_context_properties* properties,
                        ContextNotify pfn_notify, void* user_data) {
  auto props = read_context_properties(properties);
  return make_api_object<Context>(std::move(devices), std::move(props), pfn_notify, user_data)
      ->handle();
}

}  // namespace

cl_context clCreateContext(const cl_context_properties* properties, cl_uint num_devices,
                           const cl_device_id* devices, ContextNotify pfn_notify, void* user_data) {
  // The spec: CL_INVALID_VALUE if devices is NULL or num_devices is 0, or if pfn_notify is
  // NULL but user_data is not.
  check(devices && num_devices > 0, CL_INVALID_VALUE, "no devices given");
  check(pfn_notify || !user_data, CL_INVALID_VALUE, "user_data without pfn_notify");
  std::vector<Device*> list;
  for (cl_uint i = 0; i < num_devices; ++i) {
    Device* d = resolve<Device>(devices[i]);
    // The spec: CL_DEVICE_NOT_AVAILABLE if a device in devices is currently not available even
    // though the device was returned by clGetDeviceIDs.
    if (!d->info().available)
      fail(CL_DEVICE_NOT_AVAILABLE, "device '" + d->info().name + "' is not available");
    // Duplicate devices are ignored (the spec: "duplicate devices ... are ignored").
    if (std::find(list.begin(), list.end(), d) == list.end()) list.push_back(d);
  }
  return make_context(std::move(list), properties, pfn_notify, user_data);
}

cl_context clCreateContextFromType(const cl_context_properties* properties,
                                   cl_device_type device_type, ContextNotify pfn_notify,
                                   void* user_data) {
  check(pfn_notify || !user_data, CL_INVALID_VALUE, "user_data without pfn_notify");
  constexpr cl_device_type known = CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU |
                                   CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR |
                                   CL_DEVICE_TYPE_CUSTOM;
  check(device_type == CL_DEVICE_TYPE_ALL || (device_type != 0 && (device_type & ~known) == 0),
        CL_INVALID_DEVICE_TYPE, "unknown device type");
  read_context_properties(properties);  // validate before looking for devices
  std::vector<Device*> found = Platform::get().devices_of_type(device_type);
  check(!found.empty(), CL_DEVICE_NOT_FOUND, "no device of the requested type");
  // Devices listed but not available cannot be in a context.
  std::erase_if(found, [](Device* d) { return !d->info().available; });
  check(!found.empty(), CL_DEVICE_NOT_AVAILABLE, "no available device of the requested type");
  return make_context(std::move(found), properties, pfn_notify, user_data);
}

void clRetainContext(cl_context context) { resolve<Context>(context)->retain_api(); }
void clReleaseContext(cl_context context) { resolve<Context>(context)->release_api(); }

void clGetContextInfo(cl_context context, cl_context_info param_name, size_t param_value_size,
                      void* param_value, size_t* param_value_size_ret) {
  Context& c = *resolve<Context>(context);
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_CONTEXT_REFERENCE_COUNT:
      return out.value(c.api_reference_count());
    case CL_CONTEXT_NUM_DEVICES:
      return out.value(static_cast<cl_uint>(c.devices().size()));
    case CL_CONTEXT_DEVICES: {
      std::vector<cl_device_id> ids;
      for (const auto& d : c.devices()) ids.push_back(d->handle());
      return out.array(ids);
    }
    case CL_CONTEXT_PROPERTIES:
      return out.array(c.properties());
    default:
      unknown_param("context");
  }
}

void clSetContextDestructorCallback(cl_context context,
                                    void(CL_CALLBACK* pfn_notify)(cl_context, void*),
                                    void* user_data) {
  Context& c = *resolve<Context>(context);
  check(pfn_notify, CL_INVALID_VALUE, "pfn_notify is NULL");
  c.add_destructor_callback(pfn_notify, user_data);
}

}  // namespace manifold::api::impl
