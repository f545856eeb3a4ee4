// Sub-devices of a Level Zero device: one per tile (zeDeviceGetSubDevices), made by
// clCreateSubDevices with CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN (NUMA or NEXT_PARTITIONABLE:
// each tile has its own memory, so tiles are the device's NUMA nodes). A tile is a
// LevelZeroDevice of its own, with the tile's true properties, in its root's Level Zero context:
// a buffer allocated by the root in that context is usable by every tile, so the root and its
// tiles share one memory place and nothing migrates between them.
#include <string>

#include "backends/level_zero/ze_device.h"
#include "core/error.h"
#include "core/log.h"

namespace manifold::level_zero {

void LevelZeroDevice::init_context(LevelZeroDevice* parent) {
  if (parent) {
    parent_ = Ref<Device>(parent);
    context_ = parent->context_;
    return;
  }
  ze_context_desc_t desc;
  check_ze(api_.zeContextCreate(driver_, &desc, &context_), CL_DEVICE_NOT_AVAILABLE,
           "zeContextCreate");
}

void LevelZeroDevice::init_partitions() {
  uint32_t count = 0;
  if (api_.zeDeviceGetSubDevices(device_, &count, nullptr) == ZE_RESULT_SUCCESS && count > 1) {
    tiles_.resize(count);
    if (api_.zeDeviceGetSubDevices(device_, &count, tiles_.data()) != ZE_RESULT_SUCCESS) count = 0;
    tiles_.resize(count);
  }
  // The spec: a device that no scheme splits into at least two sub-devices reports none.
  if (tiles_.size() < 2) {
    tiles_.clear();
    return;
  }
  info_.partition_max_sub_devices = static_cast<cl_uint>(tiles_.size());
  info_.partition_properties = {CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN};
  info_.partition_affinity_domain =
      CL_DEVICE_AFFINITY_DOMAIN_NUMA | CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE;
}

Device::AffinityPartition LevelZeroDevice::affinity_partition(
    cl_device_affinity_domain requested) const {
  if (tiles_.size() < 2) return {};
  if (requested != CL_DEVICE_AFFINITY_DOMAIN_NUMA &&
      requested != CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE)
    return {};
  return {CL_DEVICE_AFFINITY_DOMAIN_NUMA, static_cast<cl_uint>(tiles_.size())};
}

Device* LevelZeroDevice::create_affinity_sub_device(
    cl_uint index, std::vector<cl_device_partition_property> partition_type) {
  check(index < tiles_.size(), CL_DEVICE_PARTITION_FAILED, "no such tile");
  auto* tile = new LevelZeroDevice(api_, driver_, tiles_[index], this);
  tile->partition_type_ = std::move(partition_type);
  log_debug("level_zero: sub-device %u of '%s': '%s', %u EUs", index, info_.name.c_str(),
            tile->info_.name.c_str(), tile->info_.max_compute_units);
  return tile;
}

LevelZeroDevice& LevelZeroDevice::root_device() {
  LevelZeroDevice* device = this;
  while (!device->is_root()) device = static_cast<LevelZeroDevice*>(device->parent());
  return *device;
}

}  // namespace manifold::level_zero
