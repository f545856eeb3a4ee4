// Platform and device entry points.
#include <algorithm>
#include <numeric>
#include <vector>

#include "api/common.h"
#include "api/impl.h"
#include "core/info.h"
#include "core/platform.h"

namespace manifold::api::impl {
namespace {

void list_platforms(cl_uint num_entries, cl_platform_id* platforms, cl_uint* num_platforms) {
  // The spec: CL_INVALID_VALUE if num_entries is 0 and platforms is not NULL, or if both
  // num_platforms and platforms are NULL.
  check(!(num_entries == 0 && platforms), CL_INVALID_VALUE,
        "num_entries is 0 but platforms is not NULL");
  check(platforms || num_platforms, CL_INVALID_VALUE, "platforms and num_platforms are both NULL");
  Platform& p = Platform::get();
  if (platforms) platforms[0] = p.handle();
  if (num_platforms) *num_platforms = 1;
}

Platform& platform_or_default(cl_platform_id id) {
  // A NULL platform selects Manifold's (implementation-defined behaviour the spec allows).
  return id ? *resolve<Platform>(id) : Platform::get();
}

Device* root_or_sub_device(cl_device_id id) { return resolve<Device>(id); }

bool supports_scheme(const DeviceInfo& info, cl_device_partition_property kind) {
  return std::find(info.partition_properties.begin(), info.partition_properties.end(), kind) !=
         info.partition_properties.end();
}

// Makes `count` sub-devices with make(i) into `out`; a failure releases those already made, so
// that a failed clCreateSubDevices leaves nothing behind.
template <class Make>
void create_sub_devices(size_t count, cl_device_id* out, Make make) {
  std::vector<Device*> made;
  try {
    for (size_t i = 0; i < count; ++i) made.push_back(make(i));
  } catch (...) {
    for (Device* d : made) d->release_api();
    throw;
  }
  for (size_t i = 0; i < count; ++i) out[i] = made[i]->handle();
}

// clCreateSubDevices with CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, which the device supports.
void partition_by_affinity(Device& device, const cl_device_partition_property* properties,
                           cl_uint num_devices, cl_device_id* out_devices,
                           cl_uint* num_devices_ret) {
  constexpr cl_device_affinity_domain known =
      CL_DEVICE_AFFINITY_DOMAIN_NUMA | CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE |
      CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE | CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE |
      CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE | CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE;
  const auto requested = static_cast<cl_device_affinity_domain>(properties[1]);
  check(requested != 0 && (requested & (requested - 1)) == 0 && (requested & ~known) == 0,
        CL_INVALID_VALUE, "CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN needs one affinity domain");
  check(properties[2] == 0, CL_INVALID_VALUE,
        "only one partition scheme may be given (the list must end after the affinity domain)");
  check(requested & device.info().partition_affinity_domain, CL_INVALID_VALUE,
        "the device does not support this affinity domain (CL_DEVICE_PARTITION_AFFINITY_DOMAIN)");
  const Device::AffinityPartition split = device.affinity_partition(requested);
  check(split.count > 0, CL_DEVICE_PARTITION_FAILED,
        "the device cannot be split along this affinity domain");
  // The spec: for NEXT_PARTITIONABLE, CL_DEVICE_PARTITION_TYPE names the domain used.
  const std::vector<cl_device_partition_property> partition_type{
      CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, cl_device_partition_property(split.domain), 0};
  // The spec: CL_INVALID_VALUE if out_devices is not NULL and num_devices is less than the
  // number of sub-devices created by the partition scheme.
  check(!out_devices || num_devices >= split.count, CL_INVALID_VALUE, "out_devices is too small");
  if (out_devices)
    create_sub_devices(split.count, out_devices, [&](size_t i) {
      return device.create_affinity_sub_device(cl_uint(i), partition_type);
    });
  if (num_devices_ret) *num_devices_ret = split.count;
}

}  // namespace

void clGetPlatformIDs(cl_uint num_entries, cl_platform_id* platforms, cl_uint* num_platforms) {
  list_platforms(num_entries, platforms, num_platforms);
}

void clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id* platforms,
                            cl_uint* num_platforms) {
  list_platforms(num_entries, platforms, num_platforms);
}

void clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                       size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  Platform& p = platform_or_default(platform);
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_PLATFORM_PROFILE:
      return out.string("FULL_PROFILE");
    case CL_PLATFORM_VERSION:
      return out.string("OpenCL 3.0 Manifold " MANIFOLD_VERSION);
    case CL_PLATFORM_NUMERIC_VERSION:
      return out.value<cl_version>(CL_MAKE_VERSION(3, 0, 0));
    case CL_PLATFORM_NAME:
      return out.string(Platform::kName);
    case CL_PLATFORM_VENDOR:
      return out.string(Platform::kVendor);
    case CL_PLATFORM_EXTENSIONS:
      return out.string(p.extensions_string());
    case CL_PLATFORM_EXTENSIONS_WITH_VERSION:
      return out.array(p.extensions());
    case CL_PLATFORM_HOST_TIMER_RESOLUTION:
      return out.value<cl_ulong>(1);
    case CL_PLATFORM_ICD_SUFFIX_KHR:
      return out.string(Platform::kIcdSuffix);
    case CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR:
      // cl_khr_command_buffer_multi_device: devices of different backends in one command
      // buffer (the scheduler joins them), explicit and automatic remapping.
      return out.value<cl_platform_command_buffer_capabilities_khr>(
          CL_COMMAND_BUFFER_PLATFORM_UNIVERSAL_SYNC_KHR |
          CL_COMMAND_BUFFER_PLATFORM_REMAP_QUEUES_KHR |
          CL_COMMAND_BUFFER_PLATFORM_AUTOMATIC_REMAP_KHR);
    default:
      unknown_param("platform");
  }
}

void clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type, cl_uint num_entries,
                    cl_device_id* devices, cl_uint* num_devices) {
  Platform& p = platform_or_default(platform);
  constexpr cl_device_type known = CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU |
                                   CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR |
                                   CL_DEVICE_TYPE_CUSTOM;
  check(device_type == CL_DEVICE_TYPE_ALL || (device_type != 0 && (device_type & ~known) == 0),
        CL_INVALID_DEVICE_TYPE, "unknown device type");
  check(!(num_entries == 0 && devices), CL_INVALID_VALUE,
        "num_entries is 0 but devices is not NULL");
  check(devices || num_devices, CL_INVALID_VALUE, "devices and num_devices are both NULL");
  std::vector<Device*> found = p.devices_of_type(device_type);
  check(!found.empty(), CL_DEVICE_NOT_FOUND, "no device of the requested type");
  if (devices)
    for (cl_uint i = 0; i < std::min<size_t>(num_entries, found.size()); ++i)
      devices[i] = found[i]->handle();
  if (num_devices) *num_devices = static_cast<cl_uint>(found.size());
}

void clGetDeviceInfo(cl_device_id device, cl_device_info param_name, size_t param_value_size,
                     void* param_value, size_t* param_value_size_ret) {
  get_device_info(*root_or_sub_device(device), param_name, param_value_size, param_value,
                  param_value_size_ret);
}

void clCreateSubDevices(cl_device_id in_device, const cl_device_partition_property* properties,
                        cl_uint num_devices, cl_device_id* out_devices, cl_uint* num_devices_ret) {
  Device& device = *resolve<Device>(in_device);
  const DeviceInfo& info = device.info();
  check(properties && properties[0] != 0, CL_INVALID_VALUE, "no partition scheme given");
  const cl_device_partition_property kind = properties[0];
  check(kind == CL_DEVICE_PARTITION_EQUALLY || kind == CL_DEVICE_PARTITION_BY_COUNTS ||
            kind == CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
        CL_INVALID_VALUE, "unknown partition scheme");
  if (!supports_scheme(info, kind)) {
    // The spec: CL_DEVICE_PARTITION_FAILED if the partition name is supported by the
    // implementation but in_device could not be further partitioned (a sub-device made by a
    // scheme of its parent that cannot be split again, e.g. one Level Zero tile).
    check(!(device.visible_parent() && supports_scheme(device.visible_parent()->info(), kind)),
          CL_DEVICE_PARTITION_FAILED, "the sub-device cannot be partitioned further");
    fail(CL_INVALID_VALUE, "the device does not support this partition scheme");
  }
  // The spec: CL_DEVICE_PARTITION_FAILED if the partition name is supported by the
  // implementation but in_device could not be further partitioned.
  check(info.max_compute_units > 1, CL_DEVICE_PARTITION_FAILED,
        "the device has one compute unit: it cannot be partitioned further");
  if (kind == CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN)
    return partition_by_affinity(device, properties, num_devices, out_devices, num_devices_ret);
  std::vector<cl_uint> requested;
  std::vector<cl_device_partition_property> partition_type{kind};
  if (kind == CL_DEVICE_PARTITION_EQUALLY) {
    const auto n = static_cast<cl_uint>(properties[1]);
    check(n > 0, CL_INVALID_VALUE, "CL_DEVICE_PARTITION_EQUALLY needs a non-zero count");
    // The spec: CL_INVALID_DEVICE_PARTITION_COUNT if the total number of compute units
    // requested exceeds CL_DEVICE_MAX_COMPUTE_UNITS.
    check(n <= info.max_compute_units, CL_INVALID_DEVICE_PARTITION_COUNT,
          "CL_DEVICE_PARTITION_EQUALLY asks for more compute units than the device has");
    check(n < info.max_compute_units, CL_DEVICE_PARTITION_FAILED,
          "CL_DEVICE_PARTITION_EQUALLY by every compute unit would give the device itself");
    requested.push_back(n);
    partition_type.push_back(properties[1]);
  } else {
    const cl_device_partition_property* p = properties + 1;
    for (; *p != CL_DEVICE_PARTITION_BY_COUNTS_LIST_END; ++p) {
      check(*p > 0, CL_INVALID_DEVICE_PARTITION_COUNT, "a partition count is zero or negative");
      requested.push_back(static_cast<cl_uint>(*p));
      partition_type.push_back(*p);
    }
    partition_type.push_back(CL_DEVICE_PARTITION_BY_COUNTS_LIST_END);
    check(!requested.empty(), CL_INVALID_DEVICE_PARTITION_COUNT, "no partition counts given");
    check(requested.size() <= info.partition_max_sub_devices, CL_INVALID_DEVICE_PARTITION_COUNT,
          "more sub-devices than CL_DEVICE_PARTITION_MAX_SUB_DEVICES");
    check(std::accumulate(requested.begin(), requested.end(), 0ull) <= info.max_compute_units,
          CL_INVALID_DEVICE_PARTITION_COUNT,
          "the counts add up to more compute units than the device has");
  }
  partition_type.push_back(0);
  // What the device makes of the request: a GPU rounds counts up to its SM granule, so that a
  // valid request may still not fit (CL_DEVICE_PARTITION_FAILED: the device cannot be
  // partitioned so).
  const std::vector<cl_uint> units = device.partition_units(kind, requested);
  check(!units.empty(), CL_DEVICE_PARTITION_FAILED,
        "the device cannot be partitioned so (counts rounded up to its granularity do not fit)");
  // The spec: CL_INVALID_VALUE if out_devices is not NULL and num_devices is less than the
  // number of sub-devices created by the partition scheme.
  check(!out_devices || num_devices >= units.size(), CL_INVALID_VALUE, "out_devices is too small");
  if (out_devices) {
    const std::vector<Device*> made = device.create_sub_devices(kind, requested, partition_type);
    if (made.size() != units.size()) {  // the device's resources changed in between
      for (Device* d : made) d->release_api();
      fail(CL_DEVICE_PARTITION_FAILED, "the device could not make the partition it planned");
    }
    for (size_t i = 0; i < made.size(); ++i) out_devices[i] = made[i]->handle();
  }
  if (num_devices_ret) *num_devices_ret = static_cast<cl_uint>(units.size());
}

void clCreateSubDevicesEXT(cl_device_id, const cl_device_partition_property_ext*, cl_uint,
                           cl_device_id*, cl_uint*) {
  fail(CL_INVALID_OPERATION, "cl_ext_device_fission is not supported; use clCreateSubDevices");
}

void clRetainDevice(cl_device_id device) {
  Device* d = resolve<Device>(device);
  if (d->reference_counted()) d->retain_api();
}

void clReleaseDevice(cl_device_id device) {
  Device* d = resolve<Device>(device);
  if (d->reference_counted()) d->release_api();
}

void clRetainDeviceEXT(cl_device_id device) { impl::clRetainDevice(device); }
void clReleaseDeviceEXT(cl_device_id device) { impl::clReleaseDevice(device); }

void clGetDeviceAndHostTimer(cl_device_id device, cl_ulong* device_timestamp,
                             cl_ulong* host_timestamp) {
  resolve<Device>(device);
  check(device_timestamp && host_timestamp, CL_INVALID_VALUE, "a timestamp pointer is NULL");
  // Profiling times are host-clock nanoseconds on every device, so the two clocks coincide.
  *host_timestamp = *device_timestamp = host_time_ns();
}

void clGetHostTimer(cl_device_id device, cl_ulong* host_timestamp) {
  resolve<Device>(device);
  check(host_timestamp, CL_INVALID_VALUE, "host_timestamp is NULL");
  *host_timestamp = host_time_ns();
}

void clUnloadCompiler() {}
void clUnloadPlatformCompiler(cl_platform_id platform) { resolve<Platform>(platform); }

void* clGetExtensionFunctionAddress(const char* func_name) { return extension_function(func_name); }

void* clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char* func_name) {
  resolve<Platform>(platform);
  return extension_function(func_name);
}

}  // namespace manifold::api::impl
