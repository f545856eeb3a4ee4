// split_equally (core/device.h): a device split into a given number of equal sub-devices, for the
// platform's partitioned GPUs and the members of device groups.
#include <algorithm>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/error.h"

namespace manifold {

std::vector<Device*> split_equally(Device& device, unsigned parts, bool report_partition_type,
                                   std::string* why) {
  const DeviceInfo& info = device.info();
  const auto& schemes = info.partition_properties;
  if (std::find(schemes.begin(), schemes.end(), CL_DEVICE_PARTITION_EQUALLY) == schemes.end()) {
    *why = "it cannot be partitioned equally";
    return {};
  }
  if (parts < 2 || parts > info.partition_max_sub_devices || parts > info.max_compute_units) {
    *why = "it partitions into 2 to " +
           std::to_string(std::min(info.partition_max_sub_devices, info.max_compute_units)) +
           " sub-devices, not " + std::to_string(parts);
    return {};
  }
  for (cl_uint each = info.max_compute_units / parts; each > 0; --each) {
    if (device.partition_units(CL_DEVICE_PARTITION_EQUALLY, {each}).size() < parts) continue;
    std::vector<cl_device_partition_property> type;
    if (report_partition_type)
      type = {CL_DEVICE_PARTITION_EQUALLY, cl_device_partition_property(each), 0};
    std::vector<Device*> made;
    try {
      made = device.create_sub_devices(CL_DEVICE_PARTITION_EQUALLY, {each}, type);
    } catch (const Error& e) {
      *why = e.what();
      return {};
    }
    // An equal partition makes as many as fit: the ones beyond `parts` give their units back.
    while (made.size() > parts) {
      made.back()->release_api();
      made.pop_back();
    }
    if (made.size() == parts) return made;
    for (Device* d : made) d->release_api();
    *why = "the device made fewer sub-devices than it planned";
    return {};
  }
  *why = "no equal partition gives " + std::to_string(parts) + " sub-devices";
  return {};
}

}  // namespace manifold
