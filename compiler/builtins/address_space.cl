// get_fence (OpenCL C 2.0+, generic address space) on the CPU: the fence a generic pointer
// needs, from where it points (compiler/cpu_executable.cpp: __manifold_address_space_of;
// 0 private, 1 global, 2 local). A private pointer needs no fence: 0 is a valid answer.
#include "common.h"

int __manifold_address_space_of(const __generic void* pointer);

static cl_mem_fence_flags fence_for(const __generic void* pointer) {
  switch (__manifold_address_space_of(pointer)) {
    case 1:
      return CLK_GLOBAL_MEM_FENCE;
    case 2:
      return CLK_LOCAL_MEM_FENCE;
    default:
      return 0;
  }
}

OVL cl_mem_fence_flags get_fence(const __generic void* pointer) { return fence_for(pointer); }
OVL cl_mem_fence_flags get_fence(__generic void* pointer) { return fence_for(pointer); }
