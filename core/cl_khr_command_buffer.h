// cl_khr_command_buffer 0.9.8, cl_khr_command_buffer_mutable_dispatch 0.9.5 and
// cl_khr_command_buffer_multi_device 0.9.2, as the current Khronos OpenCL-Headers declare them.
// Debian 12's <CL/cl_ext.h> carries a provisional revision (0.9.0) whose entry points take no
// `properties` argument, whose mutable-dispatch config starts with `type`/`next` fields and whose
// CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR is 1; its prototypes are hidden with
// CL_NO_PROTOTYPES where Manifold defines the entry points. What that header lacks or has
// differently is declared here; the function types end in _t (the current headers' names, which
// Debian's lacks), so callers take addresses from clGetExtensionFunctionAddressForPlatform.
#pragma once

#include <CL/cl.h>
#include <CL/cl_ext.h>

typedef cl_properties cl_command_properties_khr;
typedef cl_uint cl_command_buffer_update_type_khr;
typedef cl_bitfield cl_mutable_dispatch_asserts_khr;
typedef cl_bitfield cl_platform_command_buffer_capabilities_khr;

// ---- cl_khr_command_buffer ----
#ifndef CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR
#define CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR 0x129A
#endif
#ifndef CL_COMMAND_BUFFER_CONTEXT_KHR
#define CL_COMMAND_BUFFER_CONTEXT_KHR 0x1299
#endif
// 0.9.8 removed the pending state; 2 is now the mutable-dispatch Finalized state.
#ifndef CL_COMMAND_BUFFER_STATE_FINALIZED_KHR
#define CL_COMMAND_BUFFER_STATE_FINALIZED_KHR 2
#endif

// ---- cl_khr_command_buffer_multi_device ----
#ifndef CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR
#define CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR 0x0908
#define CL_COMMAND_BUFFER_PLATFORM_UNIVERSAL_SYNC_KHR (1 << 0)
#define CL_COMMAND_BUFFER_PLATFORM_REMAP_QUEUES_KHR (1 << 1)
#define CL_COMMAND_BUFFER_PLATFORM_AUTOMATIC_REMAP_KHR (1 << 2)
#define CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR 0x12AB
#define CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR 0x12AC
#define CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR (1 << 4)
#define CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR (1 << 2)
#endif

// ---- cl_khr_command_buffer_mutable_dispatch ----
#ifndef CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR
#define CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR 0x12A2
#endif
#ifndef CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR
#define CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR 0x12B7
#define CL_MUTABLE_DISPATCH_ASSERTS_KHR 0x12B8
#define CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR (1 << 0)
#endif
// 0.9.0 had a base config at 0 and the dispatch config at 1; the current revision has only the
// dispatch config, at 0.
#undef CL_STRUCTURE_TYPE_MUTABLE_BASE_CONFIG_KHR
#undef CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR
#define CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR 0

namespace manifold::khr {

// cl_mutable_dispatch_config_khr of the current revision (Debian's type has the old layout).
struct MutableDispatchConfig {
  cl_mutable_command_khr command;
  cl_uint num_args;
  cl_uint num_svm_args;
  cl_uint num_exec_infos;
  cl_uint work_dim;
  const cl_mutable_dispatch_arg_khr* arg_list;
  const cl_mutable_dispatch_arg_khr* arg_svm_list;
  const cl_mutable_dispatch_exec_info_khr* exec_info_list;
  const size_t* global_work_offset;
  const size_t* global_work_size;
  const size_t* local_work_size;
};

}  // namespace manifold::khr

// The entry points' function types (the current headers' clXxx_t).
#define MANIFOLD_RECORD_TAIL                                                           \
  cl_uint num_sync_points_in_wait_list, const cl_sync_point_khr *sync_point_wait_list, \
      cl_sync_point_khr *sync_point, cl_mutable_command_khr *mutable_handle
#define MANIFOLD_RECORD_HEAD                                            \
  cl_command_buffer_khr command_buffer, cl_command_queue command_queue, \
      const cl_command_properties_khr *properties

typedef cl_command_buffer_khr CL_API_CALL
clCreateCommandBufferKHR_t(cl_uint num_queues, const cl_command_queue* queues,
                           const cl_command_buffer_properties_khr* properties, cl_int* errcode_ret);
typedef cl_int CL_API_CALL clFinalizeCommandBufferKHR_t(cl_command_buffer_khr command_buffer);
typedef cl_int CL_API_CALL clRetainCommandBufferKHR_t(cl_command_buffer_khr command_buffer);
typedef cl_int CL_API_CALL clReleaseCommandBufferKHR_t(cl_command_buffer_khr command_buffer);
typedef cl_int CL_API_CALL clEnqueueCommandBufferKHR_t(cl_uint num_queues, cl_command_queue* queues,
                                                       cl_command_buffer_khr command_buffer,
                                                       cl_uint num_events_in_wait_list,
                                                       const cl_event* event_wait_list,
                                                       cl_event* event);
typedef cl_int CL_API_CALL clCommandBarrierWithWaitListKHR_t(MANIFOLD_RECORD_HEAD,
                                                             MANIFOLD_RECORD_TAIL);
typedef cl_int CL_API_CALL clCommandCopyBufferKHR_t(MANIFOLD_RECORD_HEAD, cl_mem src_buffer,
                                                    cl_mem dst_buffer, size_t src_offset,
                                                    size_t dst_offset, size_t size,
                                                    MANIFOLD_RECORD_TAIL);
typedef cl_int CL_API_CALL clCommandCopyBufferRectKHR_t(
    MANIFOLD_RECORD_HEAD, cl_mem src_buffer, cl_mem dst_buffer, const size_t* src_origin,
    const size_t* dst_origin, const size_t* region, size_t src_row_pitch, size_t src_slice_pitch,
    size_t dst_row_pitch, size_t dst_slice_pitch, MANIFOLD_RECORD_TAIL);
typedef cl_int CL_API_CALL clCommandCopyBufferToImageKHR_t(MANIFOLD_RECORD_HEAD, cl_mem src_buffer,
                                                           cl_mem dst_image, size_t src_offset,
                                                           const size_t* dst_origin,
                                                           const size_t* region,
                                                           MANIFOLD_RECORD_TAIL);
typedef cl_int CL_API_CALL clCommandCopyImageKHR_t(MANIFOLD_RECORD_HEAD, cl_mem src_image,
                                                   cl_mem dst_image, const size_t* src_origin,
                                                   const size_t* dst_origin, const size_t* region,
                                                   MANIFOLD_RECORD_TAIL);
typedef cl_int CL_API_CALL clCommandCopyImageToBufferKHR_t(MANIFOLD_RECORD_HEAD, cl_mem src_image,
                                                           cl_mem dst_buffer,
                                                           const size_t* src_origin,
                                                           const size_t* region, size_t dst_offset,
                                                           MANIFOLD_RECORD_TAIL);
typedef cl_int CL_API_CALL clCommandFillBufferKHR_t(MANIFOLD_RECORD_HEAD, cl_mem buffer,
                                                    const void* pattern, size_t pattern_size,
                                                    size_t offset, size_t size,
                                                    MANIFOLD_RECORD_TAIL);
typedef cl_int CL_API_CALL clCommandFillImageKHR_t(MANIFOLD_RECORD_HEAD, cl_mem image,
                                                   const void* fill_color, const size_t* origin,
                                                   const size_t* region, MANIFOLD_RECORD_TAIL);
typedef cl_int CL_API_CALL clCommandNDRangeKernelKHR_t(
    MANIFOLD_RECORD_HEAD, cl_kernel kernel, cl_uint work_dim, const size_t* global_work_offset,
    const size_t* global_work_size, const size_t* local_work_size, MANIFOLD_RECORD_TAIL);
typedef cl_int CL_API_CALL clCommandSVMMemcpyKHR_t(MANIFOLD_RECORD_HEAD, void* dst_ptr,
                                                   const void* src_ptr, size_t size,
                                                   MANIFOLD_RECORD_TAIL);
typedef cl_int CL_API_CALL clCommandSVMMemFillKHR_t(MANIFOLD_RECORD_HEAD, void* svm_ptr,
                                                    const void* pattern, size_t pattern_size,
                                                    size_t size, MANIFOLD_RECORD_TAIL);
typedef cl_int CL_API_CALL clGetCommandBufferInfoKHR_t(cl_command_buffer_khr command_buffer,
                                                       cl_command_buffer_info_khr param_name,
                                                       size_t param_value_size, void* param_value,
                                                       size_t* param_value_size_ret);
typedef cl_command_buffer_khr CL_API_CALL clRemapCommandBufferKHR_t(
    cl_command_buffer_khr command_buffer, cl_bool automatic, cl_uint num_queues,
    const cl_command_queue* queues, cl_uint num_handles, const cl_mutable_command_khr* handles,
    cl_mutable_command_khr* handles_ret, cl_int* errcode_ret);
typedef cl_int CL_API_CALL clUpdateMutableCommandsKHR_t(
    cl_command_buffer_khr command_buffer, cl_uint num_configs,
    const cl_command_buffer_update_type_khr* config_types, const void** configs);
typedef cl_int CL_API_CALL clGetMutableCommandInfoKHR_t(cl_mutable_command_khr command,
                                                        cl_mutable_command_info_khr param_name,
                                                        size_t param_value_size, void* param_value,
                                                        size_t* param_value_size_ret);

#undef MANIFOLD_RECORD_HEAD
#undef MANIFOLD_RECORD_TAIL
