// Sub-devices of a driver GPU (driver_device.h), by the vendor's mechanism (V::kPartitioning).
// What a sub-device shares with its root device whatever the mechanism: memory (one memory place,
// no copies), modules (a module loaded for the GPU serves all its sub-devices), and events (a
// stream of one waits natively for an event of another).
//
// Green contexts (CUDA): each sub-device a green context on a group of the GPU's SMs. The driver
// splits an SM resource into groups of at least a minimum size and a multiple of an alignment
// (cuDevSmResourceSplitByCount; on sm_90 both are 8, so counts round to multiples of 8); each
// group becomes a descriptor (cuDevResourceGenerateDesc) and a green context (cuGreenCtxCreate)
// whose streams (cuGreenCtxStreamCreate) run kernels on those SMs only.
//   CL_DEVICE_PARTITION_EQUALLY n: one split into groups of n SMs (rounded): the driver lays
//     them out over the GPU's clusters and says how many fit.
//   CL_DEVICE_PARTITION_BY_COUNTS: one group after another: a group of the first count split off
//     the whole, the rest made a green context of its own (the driver splits a split's output
//     only through one) and split again for the next count. Later groups round to that green
//     context's own granularity.
//
// CU masks (HIP): each sub-device a set of the GPU's compute units, its streams made with their
// mask (hipExtStreamCreateWithCUMask) in the GPU's own context. A CU is the granule, so counts are
// exact: EQUALLY n makes as many sub-devices of n CUs as fit, BY_COUNTS takes its counts one after
// another. CUs keep the GPU's numbering: a sub-device's sub-devices take parts of its mask.
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
  std::vector<cl_uint> units;                  // compute units (SMs or CUs) per sub-device
  std::vector<CUdevResourceDesc> descriptors;  // green contexts: per group, where asked for
  std::vector<std::vector<uint32_t>> masks;    // CU masks: per sub-device
  std::shared_ptr<GreenPartition<V>> keep;     // green contexts: what the groups came from
};

// The scheme's front, the same for both mechanisms.
template <class V>
void DriverDevice<V>::set_partition_limits() {
  info_.partition_properties.clear();
  info_.partition_max_sub_devices = 0;
  if constexpr (V::kPartitioning == Partitioning::CuMasks)
    set_cu_mask_limits();
  else
    set_green_limits();
}

template <class V>
bool DriverDevice<V>::plan(cl_device_partition_property kind, const std::vector<cl_uint>& requested,
                           bool make, Plan& out) const {
  if (requested.empty() || info_.partition_properties.empty()) return false;
  if constexpr (V::kPartitioning == Partitioning::CuMasks)
    return plan_cu_masks(kind, requested, out);
  else
    return plan_green(kind, requested, make, out);
}

template <class V>
std::vector<cl_uint> DriverDevice<V>::partition_units(cl_device_partition_property kind,
                                                      const std::vector<cl_uint>& requested) const {
  Plan p;
  if (!plan(kind, requested, /*make=*/false, p)) return {};
  return p.units;
}

template <class V>
std::vector<Device*> DriverDevice<V>::create_sub_devices(
    cl_device_partition_property kind, const std::vector<cl_uint>& requested,
    const std::vector<cl_device_partition_property>& partition_type) {
  Plan p;
  if (!plan(kind, requested, /*make=*/true, p))
    fail(CL_DEVICE_PARTITION_FAILED,
         std::string("the ") + V::kDisplay + " driver cannot split the GPU's compute units so");
  std::vector<Device*> made;
  try {
    for (size_t i = 0; i < p.units.size(); ++i)
      made.push_back(new DriverDevice(*this, p, i, partition_type));
  } catch (...) {
    for (Device* d : made) d->release_api();
    throw;
  }
  return made;
}

template <class V>
DriverDevice<V>::DriverDevice(DriverDevice& parent, const Plan& plan, size_t part,
                              std::vector<cl_device_partition_property> partition_type)
    : device_(parent.device_) {
  const Api& a = api();
  const char* unit = "SMs";
  if constexpr (V::kPartitioning == Partitioning::CuMasks) {
    unit = "CUs";
    context_ = parent.context_;  // the GPU's: only the streams are the sub-device's own
    cu_mask_ = plan.masks.at(part);
  } else {
    if (CUresult r = a.cuGreenCtxCreate(&green_, plan.descriptors.at(part), device_,
                                        CU_GREEN_CTX_DEFAULT_STREAM);
        r != CUDA_SUCCESS)
      fail(CL_DEVICE_PARTITION_FAILED, "cuGreenCtxCreate: " + V::error_text(r));
    if (CUresult r = a.cuCtxFromGreenCtx(&context_, green_); r != CUDA_SUCCESS) {
      a.cuGreenCtxDestroy(green_);
      fail(CL_DEVICE_PARTITION_FAILED, "cuCtxFromGreenCtx: " + V::error_text(r));
    }
    partition_ = plan.keep;
  }
  root_ = parent.root_;
  max_shared_optin_ = parent.max_shared_optin_;
  default_shared_ = parent.default_shared_;
  max_grid_ = parent.max_grid_;
  target_ = parent.target_;
  info_ = parent.info_;
  info_.max_compute_units = plan.units.at(part);
  parent_ = Ref<Device>(&parent);
  partition_type_ = std::move(partition_type);
  set_partition_limits();  // its own sub-devices, where its units split again
  log_debug("%s: sub-device of '%s' with %u %s", V::kName, info_.name.c_str(),
            info_.max_compute_units, unit);
}

// ---- Green contexts ----

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
void DriverDevice<V>::set_green_limits() {
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
bool DriverDevice<V>::plan_green(cl_device_partition_property kind,
                                 const std::vector<cl_uint>& requested, bool descriptors,
                                 Plan& out) const {
  const Api& a = api();
  CUdevResource input;
  if (!sm_resource(input)) return false;
  out.keep = std::make_shared<GreenPartition<V>>();
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

// ---- CU masks ----

template <class V>
std::vector<cl_uint> DriverDevice<V>::compute_unit_indices() const {
  std::vector<cl_uint> cus;
  if (cu_mask_.empty()) {  // the GPU: all of them
    for (cl_uint i = 0; i < info_.max_compute_units; ++i) cus.push_back(i);
    return cus;
  }
  for (size_t word = 0; word < cu_mask_.size(); ++word)
    for (unsigned bit = 0; bit < 32; ++bit)
      if (cu_mask_[word] >> bit & 1u) cus.push_back(cl_uint(word * 32 + bit));
  return cus;
}

// Partition schemes where the runtime makes streams on a mask of CUs. The GPU makes one with all
// of its CUs to find out: a runtime may have the call and refuse it (HIP on NVIDIA answers
// hipErrorNotSupported). A sub-device's CUs split again as long as it has two.
template <class V>
void DriverDevice<V>::set_cu_mask_limits() {
  const Api& a = api();
  if (!a.hipExtStreamCreateWithCUMask || info_.max_compute_units < 2) return;
  if (root_ == this) {
    std::vector<uint32_t> all((info_.max_compute_units + 31) / 32, 0);
    for (cl_uint i = 0; i < info_.max_compute_units; ++i) all[i / 32] |= 1u << (i % 32);
    make_current();
    CUstream probe = nullptr;
    if (CUresult r = a.hipExtStreamCreateWithCUMask(&probe, uint32_t(all.size()), all.data());
        r != CUDA_SUCCESS) {
      log_debug("%s: '%s' makes no streams on CU masks (%s): no sub-devices", V::kName,
                info_.name.c_str(), V::error_text(r).c_str());
      return;
    }
    a.cuStreamDestroy(probe);
  }
  info_.partition_max_sub_devices = info_.max_compute_units;
  info_.partition_properties = {CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS};
}

template <class V>
bool DriverDevice<V>::plan_cu_masks(cl_device_partition_property kind,
                                    const std::vector<cl_uint>& requested, Plan& out) const {
  const std::vector<cl_uint> cus = compute_unit_indices();
  // Masks as long as the GPU's CUs need, whichever part of them a sub-device has.
  const size_t words = (root().info_.max_compute_units + 31) / 32;
  const auto take = [&](size_t first, cl_uint count) {
    std::vector<uint32_t> mask(words, 0);
    for (size_t i = first; i < first + count; ++i) mask[cus[i] / 32] |= 1u << (cus[i] % 32);
    out.units.push_back(count);
    out.masks.push_back(std::move(mask));
  };
  if (kind == CL_DEVICE_PARTITION_EQUALLY) {
    const cl_uint each = requested[0];
    if (each == 0 || each >= cus.size()) return false;
    const size_t count = std::min<size_t>(cus.size() / each, info_.partition_max_sub_devices);
    for (size_t i = 0; i < count; ++i) take(i * each, each);
    return count > 0;
  }
  size_t first = 0;
  for (cl_uint count : requested) {
    if (count == 0 || first + count > cus.size()) return false;
    take(first, count);
    first += count;
  }
  return true;
}

}  // namespace manifold::gpu
