// How a GPU backend launches a kernel that Manifold's NVPTX or AMDGPU pipeline compiled
// (compiler/nvptx_pipeline.cpp, compiler/amdgpu_pipeline.cpp): the contract between those
// pipelines' shims (compiler/nvptx/shim.cl, compiler/amdgpu/shim.cl) and backends/cuda, hip.
//
// Explicit arguments: the kernel's parameters in source order, each at its natural alignment
// (cuLaunchKernel / hipModuleLaunchKernel kernelParams: one pointer per parameter). A __local
// pointer parameter becomes a 32-bit byte offset into the launch's dynamic shared memory (CUDA
// shared memory, AMDGPU LDS): the launcher lays the __local arguments out one after another,
// each aligned to kDynamicLocalAlignment, and passes the total as the launch's dynamic
// shared-memory size (sharedMemBytes).
//
// AMDGPU code objects (code object v5, one per program, linked by lld; the HIP backend loads them
// with hipModuleLoadData): kernels take no hidden arguments. Their kernarg segment is exactly
// the explicit arguments (the NT_AMDGPU_METADATA note's .args list only by_value and
// global_buffer kinds; tests/compiler/amdgpu_compile_test.cpp checks it), so hipModuleLaunchKernel
// with kernelParams, or with HIP_LAUNCH_PARAM_BUFFER_POINTER and a buffer of that layout, is
// enough. Work-item functions read the HSA dispatch packet instead of hidden arguments: the
// work-group size and the grid size in work-items. A grid that is not a multiple of the
// work-group size (non-uniform work-groups: hipExtModuleLaunchKernel's globalWorkSize) gives a
// smaller last work-group, whose get_local_size is the remainder.
//
// Launch state: both shims read __manifold_launch, a __constant variable of the module
// (cuModuleGetGlobal / hipModuleGetGlobal), for what the native launch does not carry. Its
// initial value (offsets 0, work_dim 1, whole launch) is right for a one-dimensional launch of
// a whole NDRange without offset; the launcher rewrites it, in stream order, before a launch
// that needs other values. The NVPTX variable has all of GpuLaunchState, the AMDGPU one its first
// 104 bytes: write min(symbol size, sizeof(GpuLaunchState)) bytes.
//
// Non-uniform work-groups on CUDA (grids are uniform): the NDRange's smaller last work-group of a
// dimension is launched apart, one block of its own size, as a part (num_groups set) whose
// launch state carries the enqueued local size and where its global IDs start.
#pragma once

#include <cstdint>

namespace manifold::compiler {

struct GpuLaunchState {
  uint64_t global_offset[3] = {0, 0, 0};  // get_global_offset
  uint32_t work_dim = 1;                  // get_work_dim
  uint32_t pad = 0;
  // A launch of part of an NDRange's work-groups: the part's first group (added to the native
  // group id) and the NDRange's group count; num_groups all 0: the launch is the whole NDRange.
  uint64_t group_offset[3] = {0, 0, 0};
  uint64_t num_groups[3] = {0, 0, 0};
  // The NDRange's global size, read where num_groups is set (a part's grid is not the
  // NDRange's). AMDGPU: the part holding a smaller last work-group is dispatched with a grid that
  // ends with it: (groups of the part - 1) * local size + the last group's size.
  uint64_t global_size[3] = {0, 0, 0};
  // NVPTX only. The enqueued local size, read where num_groups is set (a part of the last
  // work-groups runs blocks of their smaller size), and the global ID of the part's first
  // work-item in each dimension: global offset + group_offset * enqueued local size.
  uint64_t local_size[3] = {0, 0, 0};
  uint64_t global_id_base[3] = {0, 0, 0};
};
static_assert(sizeof(GpuLaunchState) == 152, "the shims' manifold_launch_state");

// The symbol of the launch state in every module that reads it.
inline constexpr const char* kLaunchStateSymbol = "__manifold_launch";
// The alignment of each __local argument in dynamic shared memory (double16, the widest type).
inline constexpr unsigned kDynamicLocalAlignment = 128;

}  // namespace manifold::compiler
