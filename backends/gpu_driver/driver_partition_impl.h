// Sub-devices of a driver GPU (driver_device.h): green contexts, each on a group of the GPU's SMs.
// The driver splits an SM resource into groups of at least a minimum size and a multiple of an
// alignment (cuDevSmResourceSplitByCount; on sm_90 both are 8, so counts round up to multiples
// of 8); each group becomes a descriptor (cuDevResourceGenerateDesc) and a green context
// (cuGreenCtxCreate) whose streams (cuGreenCtxStreamCreate) run kernels on those SMs only.
// What the driver shares among the green contexts of one GPU, sub-devices share with their root
// device: memory (one memory place, no copies), modules (a module loaded in any of them serves
// all), and events (a stream of one waits natively for an event of another).
//
//   CL_DEVICE_PARTITION_EQUALLY n: one split into groups of n SMs (rounded up): the driver lays
//     them out over the GPU's clusters and says how many fit.
//   CL_DEVICE_PARTITION_BY_COUNTS: one group after another: a group of the first count split off
//     the whole, the rest made a green context of its own (the driver splits a split's output
//     only through one) and split again for the next count. Later groups round to that green
//     context's own granularity.
// Included once per vendor by the file that instantiates DriverDevice.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "backends/gpu_driver/driver_device.h"
#include "core/error.h"
#include "core/log.h"

namespace manifold::gpu {

// The green contexts that a BY_COUNTS partition's later groups were split from, destroyed with the
// last sub-device of the partition.
template <class V>
struct GreenPartition {
  std::vector<CUgreenCtx> rests;
  GreenPartition() = default;
  GreenPartition(const GreenPartition&) = delete;
  GreenPartition& operator=(const GreenPartition&) = delete;
  ~GreenPartition() {
    for (CUgreenCtx g : rests) V::api().cuGreenCtxDestroy(g);
  }
};

template <class V>
struct DriverDevice<V>::Plan {
  std::vector<cl_uint> units;                  // SMs per group
  std::vector<CUdevResourceDesc> descriptors;  // per group, where asked for
  std::shared_ptr<GreenPartition<V>> keep = std::make_shared<GreenPartition<V>>();
};

template <class V>
bool DriverDevice<V>::sm_resource(CUdevResource& resource) const {
  const Api& a = api();
  if (!a.has_green_contexts) return false;
  resource = {};
  const CUresult r =
      green_ ? (a.cuGreenCtxGetDevResource
                    ? a.cuGreenCtxGetDevResource(green_, &resource, CU_DEV_RESOURCE_TYPE_SM)
                    : CUDA_ERROR_NOT_READY)
             : a.cuDeviceGetDevResource(device_, &resource, CU_DEV_RESOURCE_TYPE_SM);
  return r == CUDA_SUCCESS && resource.type == CU_DEV_RESOURCE_TYPE_SM && resource.sm.smCount > 0;
}

// Partition schemes where the driver splits this device's SMs into two groups or more.
// CL_DEVICE_PARTITION_MAX_SUB_DEVICES is the SM count, the spec's bound (the CTS takes a single
// BY_COUNTS count above it for an invalid count, as on devices whose units all split): a request
// for more sub-devices than the driver's groups of the smallest size (the log names them) fails
// with CL_DEVICE_PARTITION_FAILED.
template <class V>
void DriverDevice<V>::set_partition_limits() {
  info_.partition_properties.clear();
  info_.partition_max_sub_devices = 0;
  CUdevResource all;
  if (!sm_resource(all)) return;
  const unsigned granule = std::max({all.sm.minSmPartitionSize, all.sm.smCoscheduledAlignment, 1u});
  unsigned groups = 0;
  if (api().cuDevSmResourceSplitByCount(nullptr, &groups, &all, nullptr, 0, granule) !=
          CUDA_SUCCESS ||
      groups < 2)
    return;
  info_.partition_max_sub_devices = all.sm.smCount;
  info_.partition_properties = {CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS};
  log_debug("%s: '%s' partitions into at most %u SM groups of %u SMs", V::kName, info_.name.c_str(),
            groups, granule);
}

template <class V>
bool DriverDevice<V>::plan(cl_device_partition_property kind, const std::vector<cl_uint>& requested,
                           bool descriptors, Plan& out) const {
  const Api& a = api();
  CUdevResource input;
  if (requested.empty() || !sm_resource(input)) return false;
  const auto describe = [&](CUdevResource& group) {
    CUdevResourceDesc desc = nullptr;
    if (a.cuDevResourceGenerateDesc(&desc, &group, 1) != CUDA_SUCCESS) return false;
    out.descriptors.push_back(desc);
    return true;
  };
  // A count the driver cannot make exactly becomes the nearest it can below (one group at least):
  // halves of a GPU whose SMs are not a multiple of twice the granule are still two.
  const auto fit = [](const CUdevResource& from, unsigned wanted) {
    const unsigned granule =
        std::max({from.sm.minSmPartitionSize, from.sm.smCoscheduledAlignment, 1u});
    return std::max(granule, wanted / granule * granule);
  };
  if (kind == CL_DEVICE_PARTITION_EQUALLY) {
    unsigned count = 0;
    const unsigned each = fit(input, requested[0]);
    if (a.cuDevSmResourceSplitByCount(nullptr, &count, &input, nullptr, 0, each) != CUDA_SUCCESS ||
        count == 0)
      return false;
    count = std::min(count, std::max(info_.partition_max_sub_devices, 1u));
    std::vector<CUdevResource> groups(count);
    if (a.cuDevSmResourceSplitByCount(groups.data(), &count, &input, nullptr, 0, each) !=
            CUDA_SUCCESS ||
        count == 0)
      return false;
    for (unsigned i = 0; i < count; ++i) {
      out.units.push_back(groups[i].sm.smCount);
      if (descriptors && !describe(groups[i])) return false;
    }
    return true;
  }
  for (size_t i = 0; i < requested.size(); ++i) {
    CUdevResource group{}, rest{};
    unsigned one = 1;
    // Counts that add up to the whole device: the last takes what the ones before left.
    unsigned wanted = fit(input, requested[i]);
    if (i + 1 == requested.size()) wanted = std::min(wanted, input.sm.smCount);
    if (a.cuDevSmResourceSplitByCount(&group, &one, &input, &rest, 0, wanted) != CUDA_SUCCESS ||
        one != 1 || group.sm.smCount < wanted)
      return false;
    out.units.push_back(group.sm.smCount);
    if (descriptors && !describe(group)) return false;
    if (i + 1 == requested.size()) break;
    // The rest, split again through a green context of its own.
    if (rest.type != CU_DEV_RESOURCE_TYPE_SM || rest.sm.smCount == 0 || !a.cuGreenCtxGetDevResource)
      return false;
    CUdevResourceDesc rest_desc = nullptr;
    CUgreenCtx rest_context = nullptr;
    if (a.cuDevResourceGenerateDesc(&rest_desc, &rest, 1) != CUDA_SUCCESS ||
        a.cuGreenCtxCreate(&rest_context, rest_desc, device_, CU_GREEN_CTX_DEFAULT_STREAM) !=
            CUDA_SUCCESS)
      return false;
    out.keep->rests.push_back(rest_context);
    input = {};
    if (a.cuGreenCtxGetDevResource(rest_context, &input, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS ||
        input.type != CU_DEV_RESOURCE_TYPE_SM)
      return false;
  }
  return true;
}

template <class V>
std::vector<cl_uint> DriverDevice<V>::partition_units(cl_device_partition_property kind,
                                                      const std::vector<cl_uint>& requested) const {
  Plan p;
  if (!plan(kind, requested, /*descriptors=*/false, p)) return {};
  return p.units;
}

template <class V>
std::vector<Device*> DriverDevice<V>::create_sub_devices(
    cl_device_partition_property kind, const std::vector<cl_uint>& requested,
    const std::vector<cl_device_partition_property>& partition_type) {
  Plan p;
  if (!plan(kind, requested, /*descriptors=*/true, p))
    fail(CL_DEVICE_PARTITION_FAILED,
         std::string("the ") + V::kDisplay + " driver cannot split the GPU's SMs so");
  std::vector<Device*> made;
  try {
    for (size_t i = 0; i < p.units.size(); ++i)
      made.push_back(new DriverDevice(*this, p.descriptors[i], p.units[i], partition_type, p.keep));
  } catch (...) {
    for (Device* d : made) d->release_api();
    throw;
  }
  return made;
}

template <class V>
DriverDevice<V>::DriverDevice(DriverDevice& parent, CUdevResourceDesc desc, cl_uint sms,
                              std::vector<cl_device_partition_property> partition_type,
                              std::shared_ptr<GreenPartition<V>> partition)
    : device_(parent.device_) {
  const Api& a = api();
  if (CUresult r = a.cuGreenCtxCreate(&green_, desc, device_, CU_GREEN_CTX_DEFAULT_STREAM);
      r != CUDA_SUCCESS)
    fail(CL_DEVICE_PARTITION_FAILED, "cuGreenCtxCreate: " + V::error_text(r));
  if (CUresult r = a.cuCtxFromGreenCtx(&context_, green_); r != CUDA_SUCCESS) {
    a.cuGreenCtxDestroy(green_);
    fail(CL_DEVICE_PARTITION_FAILED, "cuCtxFromGreenCtx: " + V::error_text(r));
  }
  root_ = parent.root_;
  partition_ = std::move(partition);
  max_shared_optin_ = parent.max_shared_optin_;
  default_shared_ = parent.default_shared_;
  max_grid_ = parent.max_grid_;
  target_ = parent.target_;
  info_ = parent.info_;
  info_.max_compute_units = sms;
  parent_ = Ref<Device>(&parent);
  partition_type_ = std::move(partition_type);
  set_partition_limits();  // sub-devices of it, where the driver splits a green context's SMs
  log_debug("%s: sub-device of '%s' with %u SMs", V::kName, info_.name.c_str(), sms);
}

}  // namespace manifold::gpu
