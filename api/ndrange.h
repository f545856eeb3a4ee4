// An ND-range launch of a kernel on one device, checked with clEnqueueNDRangeKernel's errors and
// planned (work-group sizes chosen where the application gave none): shared by the enqueue and
// by command buffers, which plan again when a recorded launch changes (mutable dispatch) or
// moves to another device (clRemapCommandBufferKHR).
#pragma once

#include <memory>

#include "core/device.h"
#include "core/kernel.h"
#include "core/operations.h"

namespace manifold::api::impl {

// A KernelOp, or NoOp where the range is empty. `args`: the arguments to launch with; null: a
// snapshot of the kernel's (CL_INVALID_KERNEL_ARGS when one is not set).
Operation ndrange_operation(const Device& device, Kernel& kernel, cl_uint work_dim,
                            const size_t* global_work_offset, const size_t* global_work_size,
                            const size_t* local_work_size, std::shared_ptr<const KernelArgs> args);

}  // namespace manifold::api::impl
