// The one executor of every backend: a command's transfers, then its operation, each as the
// DeviceOps call that carries it out (core/backend.h). Backends call it from Job::run; the
// scheduler's jobs (commands, the parts of a device group's launch) hand it plain data.
#pragma once

#include <span>

#include "core/operations.h"

namespace manifold {

// CL_SUCCESS, or the status of the first step that failed (nothing after it was put into the
// stream); `backend` names the device in the message of an unexpected failure.
cl_int execute(DeviceOps& ops, std::span<const Transfer> transfers, const Operation& op,
               const char* backend) noexcept;

}  // namespace manifold
