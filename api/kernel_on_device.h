// What both the kernel queries (api/kernel.cpp) and the NDRange launch (api/kernel_enqueue.cpp)
// ask of a kernel on one device: its launch data, its work-group size limit, the device's size_t
// range and whether the device has SVM.
#pragma once

#include <cstddef>

#include "core/device.h"
#include "core/kernel.h"

namespace manifold::api::impl {

bool device_has_svm(const DeviceInfo& info);

// The launch data of `kernel` for `device`: its own build, else that of the parent device it
// was partitioned from (the spec: a program binary built for a parent device can be used by
// all its sub-devices).
const KernelLaunchInfo* launch_for(const Kernel& kernel, const Device& device);

bool has_reqd_size(const compiler::KernelInfo& info);

// CL_KERNEL_WORK_GROUP_SIZE: the device's limit, or the size the source requires.
size_t kernel_work_group_size(const compiler::KernelInfo& info, const DeviceInfo& dev);

// The largest value representable by size_t on the device.
size_t device_size_max(const DeviceInfo& dev);

}  // namespace manifold::api::impl
