// The memory flags buffers and images share (api/memory.cpp, api/memory_images.cpp).
#pragma once

#include "api/common.h"

namespace manifold::api::impl {

inline constexpr cl_mem_flags kAccessFlags =
    CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
inline constexpr cl_mem_flags kHostPtrFlags =
    CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;
inline constexpr cl_mem_flags kHostAccessFlags =
    CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;

// The spec: CL_INVALID_VALUE if values specified in flags are not valid (unknown bits, or
// mutually exclusive ones together).
void check_buffer_flags(cl_mem_flags flags);

}  // namespace manifold::api::impl
