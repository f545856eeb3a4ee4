// What every device reports of cl_khr_command_buffer and its mutable-dispatch and multi-device
// extensions (core/device_info.cpp); the scheduler's command buffers (scheduler/command_buffer.h)
// implement it.
#pragma once

#include "core/cl_khr_command_buffer.h"

namespace manifold {

// Recorded commands are plain operations, replayed on the device's ordinary queue.
// CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR: printf and simultaneous use work as in any launch,
// several queues per device and devices per command buffer are the scheduler's.
inline constexpr cl_bitfield kCommandBufferCapabilities =
    CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR |
    CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR |
    CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR;
// CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR: every field a recorded launch keeps may change.
inline constexpr cl_bitfield kMutableDispatchCapabilities =
    CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR | CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR |
    CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR | CL_MUTABLE_DISPATCH_ARGUMENTS_KHR |
    CL_MUTABLE_DISPATCH_EXEC_INFO_KHR;
// CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR (none are required).
inline constexpr cl_command_queue_properties kCommandBufferQueueProperties =
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;

}  // namespace manifold
