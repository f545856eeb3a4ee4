// cl_mfld_device_group (include/CL/cl_manifold.h): devices made of several of the platform's.
#include "api/common.h"
#include "api/impl.h"
#include "core/platform.h"
#include "scheduler/groups/group_device.h"

namespace manifold::api::impl {

cl_device_id clCreateDeviceGroupMFLD(cl_platform_id platform,
                                     const cl_device_group_properties_mfld* properties,
                                     cl_uint num_devices, const cl_device_id* devices) {
  if (platform) resolve<Platform>(platform);
  check(devices && num_devices > 0, CL_INVALID_VALUE, "no devices given");
  std::vector<Device*> members;
  for (cl_uint i = 0; i < num_devices; ++i) members.push_back(resolve<Device>(devices[i]));
  std::vector<double> shares;
  read_properties(properties, [&](cl_device_group_properties_mfld name,
                                  cl_device_group_properties_mfld value) {
    switch (name) {
      case CL_DEVICE_GROUP_SHARES_MFLD: {
        check(shares.empty(), CL_INVALID_VALUE, "CL_DEVICE_GROUP_SHARES_MFLD given twice");
        const auto* values = reinterpret_cast<const cl_float*>(value);
        check(values != nullptr, CL_INVALID_VALUE, "CL_DEVICE_GROUP_SHARES_MFLD without values");
        shares.assign(values, values + num_devices);
        break;
      }
      default:
        fail(CL_INVALID_VALUE, "unknown device group property");
    }
  });
  return make_application_group(std::move(members), std::move(shares))->handle();
}

}  // namespace manifold::api::impl
