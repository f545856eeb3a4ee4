/* Manifold's own OpenCL extensions.
 *
 * cl_mfld_device_group: a device made of several devices of the platform. A kernel enqueued on
 * it runs as parts of its work-groups on the members at once; the other commands run on one
 * member. Devices listed in MANIFOLD_DEVICE_GROUPS are groups made at start-up; an application
 * makes more with clCreateDeviceGroupMFLD (found with clGetExtensionFunctionAddressForPlatform)
 * and releases them with clReleaseDevice.
 *
 * clEnqueueNDRangeKernelPartMFLD runs a part of an NDRange's work-groups: what each member of a
 * group runs, and what manifold-server runs for a client's group over its devices. */
#ifndef CL_MANIFOLD_H
#define CL_MANIFOLD_H

#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define cl_mfld_device_group 1
#define CL_MFLD_DEVICE_GROUP_EXTENSION_NAME "cl_mfld_device_group"

typedef cl_properties cl_device_group_properties_mfld;

/* clCreateDeviceGroupMFLD property: fixed shares of every kernel's work-groups, followed by a
 * pointer to num_devices cl_float values (relative: they need not add up to 1). Without it the
 * group learns the shares per kernel and NDRange shape from the times its parts take. */
#define CL_DEVICE_GROUP_SHARES_MFLD 0x4F40

/* clGetDeviceInfo: the members of a group (cl_device_id[]); nothing for other devices. */
#define CL_DEVICE_GROUP_MEMBERS_MFLD 0x4F41

/* clGetKernelWorkGroupInfo on a group: the fraction of the work-groups of the kernel's last
 * launch that each member ran (cl_float[], one per member). */
#define CL_KERNEL_GROUP_SPLIT_MFLD 0x4F42

/* clGetDeviceInfo: the device as manifold-server describes it to its clients (bytes of a
 * versioned format private to Manifold builds). */
#define CL_DEVICE_DESCRIPTION_MFLD 0x4F43

/* clCreateCommandQueueWithProperties: the printf output of each kernel the queue runs goes to
 * this callback instead of the standard output, when the kernel has run and before its event is
 * complete (once per kernel, or once per part where a device group split it), from any thread;
 * CL_QUEUE_PRINTF_USER_DATA_MFLD is passed to it. Devices that cannot direct
 * their kernels' printf output (GPUs, whose drivers print it) refuse the property with
 * CL_INVALID_QUEUE_PROPERTIES. */
typedef void(CL_CALLBACK* cl_queue_printf_callback_mfld)(const char* text, size_t length,
                                                         void* user_data);
#define CL_QUEUE_PRINTF_CALLBACK_MFLD 0x4F44
#define CL_QUEUE_PRINTF_USER_DATA_MFLD 0x4F45

typedef cl_device_id(CL_API_CALL* clCreateDeviceGroupMFLD_fn)(
    cl_platform_id platform, const cl_device_group_properties_mfld* properties, cl_uint num_devices,
    const cl_device_id* devices, cl_int* errcode_ret);

/* clEnqueueNDRangeKernel that runs only the work-groups [group_first[d], group_first[d] +
 * group_count[d]) of each dimension d < work_dim of the NDRange: get_group_id, get_global_id,
 * get_num_groups and get_global_size answer as in the whole NDRange. local_work_size must be
 * given (CL_INVALID_WORK_GROUP_SIZE), and each part must lie inside the NDRange's work-groups,
 * with a group_count of at least 1 (CL_INVALID_VALUE). CL_INVALID_OPERATION on a device that does
 * not run parts of NDRanges (device groups among them); else the errors of clEnqueueNDRangeKernel.
 * Found with clGetExtensionFunctionAddressForPlatform. */
typedef cl_int(CL_API_CALL* clEnqueueNDRangeKernelPartMFLD_fn)(
    cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
    const size_t* global_work_offset, const size_t* global_work_size, const size_t* local_work_size,
    const size_t* group_first, const size_t* group_count, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event);

#ifndef CL_NO_PROTOTYPES
extern CL_API_ENTRY cl_device_id CL_API_CALL
clCreateDeviceGroupMFLD(cl_platform_id platform, const cl_device_group_properties_mfld* properties,
                        cl_uint num_devices, const cl_device_id* devices, cl_int* errcode_ret);

extern CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernelPartMFLD(
    cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
    const size_t* global_work_offset, const size_t* global_work_size, const size_t* local_work_size,
    const size_t* group_first, const size_t* group_count, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event);
#endif

#ifdef __cplusplus
}
#endif

#endif /* CL_MANIFOLD_H */
