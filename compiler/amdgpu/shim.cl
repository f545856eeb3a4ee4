// What libclc's amdgcn-amd-amdhsa library lacks, or gets wrong for Manifold, compiled for amdgcn
// at build time and linked before libclc (a definition here wins: libclc's is then not pulled).
//
// Work-item functions read the HSA dispatch packet (work-group size, grid size in work-items)
// and Manifold's launch state, never the code object v5 implicit arguments: kernels then need
// no hidden kernel arguments, and the launcher passes only the explicit ones
// (compiler/gpu_launch_abi.h describes the whole launch ABI).
#include "common.h"
#include "saturating_fp_conversions.h"  // NaN -> 0, which libclc leaves to the hardware

#define OVERLOAD __attribute__((overloadable))
#define INLINE __attribute__((always_inline))

// The launch state, the same first 80 bytes as the NVPTX shim's (compiler/gpu_launch_abi.h:
// GpuLaunchState). Only declared here, so that nothing folds its value: the AMDGPU pipeline
// defines it (zero but work_dim 1), externally initialized.
typedef struct {
  ulong global_offset[3];
  uint work_dim;
  uint pad;
  ulong group_offset[3];  // the launch's first work-group in the NDRange
  ulong num_groups[3];    // the NDRange's work-groups; 0: the dispatch is the whole NDRange
  ulong global_size[3];   // the NDRange's global size when num_groups is set
} manifold_launch_state;
extern __constant manifold_launch_state __manifold_launch;

// hsa_kernel_dispatch_packet_t: workgroup_size_x/y/z (u16) at byte 4, grid_size_x/y/z (u32, in
// work-items, not necessarily a multiple of the work-group size) at byte 12.
INLINE static uint packet_group_size(uint dim) {
  __constant ushort* packet = (__constant ushort*)__builtin_amdgcn_dispatch_ptr();
  return packet[2 + dim];
}
INLINE static uint packet_grid_size(uint dim) {
  __constant uint* packet = (__constant uint*)__builtin_amdgcn_dispatch_ptr();
  return packet[3 + dim];
}
INLINE static uint dispatch_group_id(uint dim) {
  return dim == 0 ? __builtin_amdgcn_workgroup_id_x()
                  : dim == 1 ? __builtin_amdgcn_workgroup_id_y() : __builtin_amdgcn_workgroup_id_z();
}

INLINE OVERLOAD size_t get_enqueued_local_size(uint dim) {
  return dim < 3 ? packet_group_size(dim) : 1;
}
// The last work-group of a dispatch may be smaller (non-uniform work-groups).
INLINE OVERLOAD size_t get_local_size(uint dim) {
  if (dim >= 3) return 1;
  const uint size = packet_group_size(dim);
  const uint left = packet_grid_size(dim) - dispatch_group_id(dim) * size;
  return left < size ? left : size;
}
INLINE OVERLOAD size_t get_local_id(uint dim) {
  return dim == 0   ? __builtin_amdgcn_workitem_id_x()
         : dim == 1 ? __builtin_amdgcn_workitem_id_y()
         : dim == 2 ? __builtin_amdgcn_workitem_id_z()
                    : 0;
}
INLINE OVERLOAD size_t get_group_id(uint dim) {
  return dim < 3 ? dispatch_group_id(dim) + __manifold_launch.group_offset[dim] : 0;
}
INLINE OVERLOAD size_t get_num_groups(uint dim) {
  if (dim >= 3) return 1;
  const size_t whole = __manifold_launch.num_groups[dim];
  if (whole) return whole;
  const uint size = packet_group_size(dim);
  return (packet_grid_size(dim) + size - 1) / size;
}
INLINE OVERLOAD size_t get_global_size(uint dim) {
  if (dim >= 3) return 1;
  return __manifold_launch.num_groups[dim] ? __manifold_launch.global_size[dim]
                                           : packet_grid_size(dim);
}
INLINE OVERLOAD size_t get_global_offset(uint dim) {
  return dim < 3 ? __manifold_launch.global_offset[dim] : 0;
}
INLINE OVERLOAD size_t get_global_id(uint dim) {
  return get_group_id(dim) * get_enqueued_local_size(dim) + get_local_id(dim) +
         get_global_offset(dim);
}
INLINE OVERLOAD uint get_work_dim(void) { return __manifold_launch.work_dim; }
INLINE OVERLOAD size_t get_local_linear_id(void) {
  return (get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) +
         get_local_id(0);
}
INLINE OVERLOAD size_t get_global_linear_id(void) {
  return ((get_global_id(2) - get_global_offset(2)) * get_global_size(1) +
          (get_global_id(1) - get_global_offset(1))) * get_global_size(0) +
         (get_global_id(0) - get_global_offset(0));
}

// ---- Barriers: libclc has barrier() only; OpenCL C 2.0's spellings order memory the same ----

INLINE OVERLOAD void work_group_barrier(cl_mem_fence_flags flags) { barrier(flags); }
INLINE OVERLOAD void work_group_barrier(cl_mem_fence_flags flags, memory_scope scope) {
  barrier(flags);
}
