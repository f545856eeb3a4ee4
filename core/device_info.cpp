// clGetDeviceInfo: every OpenCL 3.0 query, answered from DeviceInfo; and the part of
// DeviceInfo that the compiler target decides.
#include <CL/cl_ext.h>

#include <algorithm>
#include <cstdint>

#include "compiler/compiler.h"
#include "core/command_buffer_capabilities.h"
#include "core/device.h"
#include "core/info.h"
#include "core/platform.h"

namespace manifold {
namespace {

std::string version_string(const DeviceInfo& d) {
  return "OpenCL " + std::to_string(CL_VERSION_MAJOR(d.numeric_version)) + "." +
         std::to_string(CL_VERSION_MINOR(d.numeric_version)) + " " + d.version_suffix;
}

std::string extensions_string(const DeviceInfo& d) { return join_names(d.extensions); }

std::string il_string(const DeviceInfo& d) {
  std::string out;
  for (const auto& il : d.ils) {
    if (!out.empty()) out += ' ';
    out += std::string(il.name) + "_" + std::to_string(CL_VERSION_MAJOR(il.version)) + "." +
           std::to_string(CL_VERSION_MINOR(il.version));
  }
  return out;
}

// The highest OpenCL C version the device supports in full: for a 3.0 device "1.2" unless
// every 2.0 feature is there (OpenCL C 3.0 makes them optional).
cl_version highest_full_opencl_c(const DeviceInfo& d) {
  cl_version best = CL_MAKE_VERSION(1, 0, 0);
  for (const auto& v : d.opencl_c_versions)
    if (CL_VERSION_MAJOR(v.version) < 3 && v.version > best) best = v.version;
  return best;
}

// The devices `device` waits for natively (device-side sync of cl_khr_command_buffer_multi_device):
// those of its own backend, itself included (CPU worker queues; CUDA streams and events). Across
// backends the scheduler resolves dependencies (the platform's universal sync).
std::vector<cl_device_id> native_sync_devices(const Device& device) {
  std::vector<cl_device_id> out;
  for (Device* other : Platform::get().devices())
    if (std::string_view(other->backend_name()) == device.backend_name())
      out.push_back(other->handle());
  return out;
}

}  // namespace

void fill_from_target(DeviceInfo& d, const compiler::Target& target) {
  d.opencl_c_versions = {name_version("OpenCL C", CL_MAKE_VERSION(1, 0, 0)),
                         name_version("OpenCL C", CL_MAKE_VERSION(1, 1, 0)),
                         name_version("OpenCL C", CL_MAKE_VERSION(1, 2, 0))};
  if (target.opencl_c_version >= 300)
    d.opencl_c_versions.push_back(name_version("OpenCL C", CL_MAKE_VERSION(3, 0, 0)));
  d.opencl_c_features.clear();
  for (const std::string& f : target.opencl_c_features)
    d.opencl_c_features.push_back(name_version(f.c_str(), CL_MAKE_VERSION(3, 0, 0)));
  d.extensions.clear();
  for (const std::string& e : target.extensions)
    d.extensions.push_back(name_version(e.c_str(), CL_MAKE_VERSION(1, 0, 0)));
  // Implemented by the runtime for every device (core/device_info.cpp, the devices' UUIDs).
  d.extensions.push_back(name_version("cl_khr_extended_versioning", CL_MAKE_VERSION(1, 0, 0)));
  d.extensions.push_back(name_version("cl_khr_device_uuid", CL_MAKE_VERSION(1, 0, 0)));
  // Command buffers are recorded operations replayed on the device's queues
  // (core/command_buffer_capabilities.h), for every device: the revisions of the current Khronos headers.
  d.extensions.push_back(name_version("cl_khr_command_buffer", CL_MAKE_VERSION(0, 9, 8)));
  d.extensions.push_back(
      name_version("cl_khr_command_buffer_mutable_dispatch", CL_MAKE_VERSION(0, 9, 5)));
  d.extensions.push_back(
      name_version("cl_khr_command_buffer_multi_device", CL_MAKE_VERSION(0, 9, 2)));
  d.ils.clear();
  if (target.spirv) {
    // Only the versions the SPIR-V reader takes (compiler/spirv/module.h).
    for (unsigned minor = 0; minor <= 2; ++minor)
      d.ils.push_back(name_version("SPIR-V", CL_MAKE_VERSION(1, minor, 0)));
    d.extensions.push_back(name_version("cl_khr_il_program", CL_MAKE_VERSION(1, 0, 0)));
    // The reader takes SPV_KHR_no_integer_wrap_decoration in modules of every version.
    d.extensions.push_back(
        name_version("cl_khr_spirv_no_integer_wrap_decoration", CL_MAKE_VERSION(1, 0, 0)));
  }

  // Images (api/memory.cpp, api/enqueue.cpp) where the compiler reads and writes them:
  // compiler/builtins/image.cl over the descriptors of compiler/image_abi.h, pixels stored
  // linearly in device memory, so memory is all that bounds them. Limits: the full profile's
  // minimums at least; max_mem_alloc_size must be set before.
  d.image_support = target.images;
  if (target.images) {
    d.max_read_image_args = 128;
    d.max_write_image_args = 64;
    d.max_read_write_image_args = target.has_feature("__opencl_c_read_write_images") ? 64 : 0;
    d.image2d_max_width = d.image2d_max_height = 16384;
    d.image3d_max_width = d.image3d_max_height = d.image3d_max_depth = 2048;
    // Pixels, addressed with int coordinates.
    d.image_max_buffer_size = std::clamp<size_t>(d.max_mem_alloc_size / 16, 65536, INT32_MAX);
    d.image_max_array_size = 2048;
    d.max_samplers = 16;
    // In pixels: any row pitch that is a whole number of pixels, any naturally aligned buffer.
    d.image_pitch_alignment = 1;
    d.image_base_address_alignment = 1;
    // A host-side extension (2D images made from buffers: api/memory.cpp), no compiler macro.
    d.extensions.push_back(name_version("cl_khr_image2d_from_buffer", CL_MAKE_VERSION(1, 0, 0)));
  }

  d.generic_address_space_support = target.has_feature("__opencl_c_generic_address_space");
  d.work_group_collective_functions_support =
      target.has_feature("__opencl_c_work_group_collective_functions");
  d.atomic_memory_capabilities = CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP;
  if (target.has_feature("__opencl_c_atomic_order_acq_rel"))
    d.atomic_memory_capabilities |= CL_DEVICE_ATOMIC_ORDER_ACQ_REL;
  if (target.has_feature("__opencl_c_atomic_order_seq_cst"))
    d.atomic_memory_capabilities |= CL_DEVICE_ATOMIC_ORDER_SEQ_CST;
  if (target.has_feature("__opencl_c_atomic_scope_device"))
    d.atomic_memory_capabilities |= CL_DEVICE_ATOMIC_SCOPE_DEVICE;
  if (target.has_feature("__opencl_c_atomic_scope_all_devices"))
    d.atomic_memory_capabilities |= CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
  // Fences: acquire-release at least (OpenCL 3.0's minimum), and memory_scope_work_item where
  // images are, the only fences that scope serves (atomic_work_item_fence on image memory).
  d.atomic_fence_capabilities = d.atomic_memory_capabilities | CL_DEVICE_ATOMIC_ORDER_ACQ_REL;
  if (target.images) d.atomic_fence_capabilities |= CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM;
  // Sub-groups cut a work-group along its linear local ids (max_work_group_size is set first).
  if (target.has_feature("__opencl_c_subgroups") && target.sub_group_size) {
    d.sub_group_size = target.sub_group_size;
    d.max_num_sub_groups =
        static_cast<cl_uint>((d.max_work_group_size + d.sub_group_size - 1) / d.sub_group_size);
  }
  d.compiler_available = d.linker_available = true;
}

void get_device_info(Device& device, cl_device_info param, size_t size, void* value,
                     size_t* size_ret) {
  const DeviceInfo& d = device.info();
  InfoWriter out(size, value, size_ret);
  auto b = [&](bool v) { out.value<cl_bool>(v ? CL_TRUE : CL_FALSE); };
  switch (param) {
    case CL_DEVICE_TYPE:
      return out.value(d.type);
    case CL_DEVICE_VENDOR_ID:
      return out.value(d.vendor_id);
    case CL_DEVICE_MAX_COMPUTE_UNITS:
      return out.value(d.max_compute_units);
    case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS:
      return out.value(d.max_work_item_dimensions);
    case CL_DEVICE_MAX_WORK_ITEM_SIZES:
      return out.bytes(d.max_work_item_sizes.data(), sizeof(size_t) * 3);
    case CL_DEVICE_MAX_WORK_GROUP_SIZE:
      return out.value(d.max_work_group_size);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR:
      return out.value(d.preferred_vector_width[0]);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT:
      return out.value(d.preferred_vector_width[1]);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT:
      return out.value(d.preferred_vector_width[2]);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG:
      return out.value(d.preferred_vector_width[3]);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT:
      return out.value(d.preferred_vector_width[4]);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE:
      return out.value(d.preferred_vector_width[5]);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF:
      return out.value(d.preferred_vector_width[6]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR:
      return out.value(d.native_vector_width[0]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT:
      return out.value(d.native_vector_width[1]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_INT:
      return out.value(d.native_vector_width[2]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG:
      return out.value(d.native_vector_width[3]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT:
      return out.value(d.native_vector_width[4]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE:
      return out.value(d.native_vector_width[5]);
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF:
      return out.value(d.native_vector_width[6]);
    case CL_DEVICE_MAX_CLOCK_FREQUENCY:
      return out.value(d.max_clock_frequency);
    case CL_DEVICE_ADDRESS_BITS:
      return out.value(d.address_bits);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
      return out.value(d.max_mem_alloc_size);
    case CL_DEVICE_IMAGE_SUPPORT:
      return b(d.image_support);
    case CL_DEVICE_MAX_READ_IMAGE_ARGS:
      return out.value(d.max_read_image_args);
    case CL_DEVICE_MAX_WRITE_IMAGE_ARGS:
      return out.value(d.max_write_image_args);
    case CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS:
      return out.value(d.max_read_write_image_args);
    case CL_DEVICE_IL_VERSION:
      return out.string(il_string(d));
    case CL_DEVICE_ILS_WITH_VERSION:
      return out.array(d.ils);
    case CL_DEVICE_IMAGE2D_MAX_WIDTH:
      return out.value(d.image2d_max_width);
    case CL_DEVICE_IMAGE2D_MAX_HEIGHT:
      return out.value(d.image2d_max_height);
    case CL_DEVICE_IMAGE3D_MAX_WIDTH:
      return out.value(d.image3d_max_width);
    case CL_DEVICE_IMAGE3D_MAX_HEIGHT:
      return out.value(d.image3d_max_height);
    case CL_DEVICE_IMAGE3D_MAX_DEPTH:
      return out.value(d.image3d_max_depth);
    case CL_DEVICE_IMAGE_MAX_BUFFER_SIZE:
      return out.value(d.image_max_buffer_size);
    case CL_DEVICE_IMAGE_MAX_ARRAY_SIZE:
      return out.value(d.image_max_array_size);
    case CL_DEVICE_MAX_SAMPLERS:
      return out.value(d.max_samplers);
    case CL_DEVICE_IMAGE_PITCH_ALIGNMENT:
      return out.value(d.image_pitch_alignment);
    case CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT:
      return out.value(d.image_base_address_alignment);
    case CL_DEVICE_MAX_PIPE_ARGS:
      return out.value(d.max_pipe_args);
    case CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS:
      return out.value(d.pipe_max_active_reservations);
    case CL_DEVICE_PIPE_MAX_PACKET_SIZE:
      return out.value(d.pipe_max_packet_size);
    case CL_DEVICE_MAX_PARAMETER_SIZE:
      return out.value(d.max_parameter_size);
    case CL_DEVICE_MEM_BASE_ADDR_ALIGN:
      return out.value(d.mem_base_addr_align);
    case CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE:
      return out.value(d.min_data_type_align_size);
    case CL_DEVICE_SINGLE_FP_CONFIG:
      return out.value(d.single_fp_config);
    case CL_DEVICE_DOUBLE_FP_CONFIG:
      return out.value(d.double_fp_config);
    case CL_DEVICE_HALF_FP_CONFIG:
      // Part of cl_khr_fp16: "CL_INVALID_VALUE if param_name is a value that is available as an
      // extension and the corresponding extension is not supported by the device."
      check(d.half_fp_config != 0, CL_INVALID_VALUE, "CL_DEVICE_HALF_FP_CONFIG needs cl_khr_fp16");
      return out.value(d.half_fp_config);
    case CL_DEVICE_GLOBAL_MEM_CACHE_TYPE:
      return out.value(d.global_mem_cache_type);
    case CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE:
      return out.value(d.global_mem_cacheline_size);
    case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE:
      return out.value(d.global_mem_cache_size);
    case CL_DEVICE_GLOBAL_MEM_SIZE:
      return out.value(d.global_mem_size);
    case CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE:
      return out.value(d.max_constant_buffer_size);
    case CL_DEVICE_MAX_CONSTANT_ARGS:
      return out.value(d.max_constant_args);
    case CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE:
      return out.value(d.max_global_variable_size);
    case CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE:
      return out.value(d.global_variable_preferred_total_size);
    case CL_DEVICE_LOCAL_MEM_TYPE:
      return out.value(d.local_mem_type);
    case CL_DEVICE_LOCAL_MEM_SIZE:
      return out.value(d.local_mem_size);
    case CL_DEVICE_ERROR_CORRECTION_SUPPORT:
      return b(d.error_correction_support);
    case CL_DEVICE_HOST_UNIFIED_MEMORY:
      return b(d.host_unified_memory);
    case CL_DEVICE_PROFILING_TIMER_RESOLUTION:
      return out.value(d.profiling_timer_resolution);
    case CL_DEVICE_ENDIAN_LITTLE:
      return b(d.endian_little);
    case CL_DEVICE_AVAILABLE:
      return b(d.available);
    case CL_DEVICE_COMPILER_AVAILABLE:
      return b(d.compiler_available);
    case CL_DEVICE_LINKER_AVAILABLE:
      return b(d.linker_available);
    case CL_DEVICE_EXECUTION_CAPABILITIES:
      return out.value(d.execution_capabilities);
    case CL_DEVICE_QUEUE_ON_HOST_PROPERTIES:
      return out.value(d.queue_on_host_properties);
    case CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES:
      return out.value(d.queue_on_device_properties);
    case CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE:
      return out.value(d.queue_on_device_preferred_size);
    case CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE:
      return out.value(d.queue_on_device_max_size);
    case CL_DEVICE_MAX_ON_DEVICE_QUEUES:
      return out.value(d.max_on_device_queues);
    case CL_DEVICE_MAX_ON_DEVICE_EVENTS:
      return out.value(d.max_on_device_events);
    case CL_DEVICE_BUILT_IN_KERNELS:
      return out.string(d.builtin_kernels);
    case CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION:
      return out.array(std::vector<cl_name_version>{});
    case CL_DEVICE_PLATFORM:
      return out.value(Platform::get().handle());
    case CL_DEVICE_NAME:
      return out.string(d.name);
    case CL_DEVICE_VENDOR:
      return out.string(d.vendor);
    case CL_DRIVER_VERSION:
      return out.string(d.driver_version);
    case CL_DEVICE_PROFILE:
      return out.string(d.profile);
    case CL_DEVICE_VERSION:
      return out.string(version_string(d));
    case CL_DEVICE_NUMERIC_VERSION:
      return out.value(d.numeric_version);
    case CL_DEVICE_OPENCL_C_VERSION: {
      const cl_version best = highest_full_opencl_c(d);
      return out.string("OpenCL C " + std::to_string(CL_VERSION_MAJOR(best)) + "." +
                        std::to_string(CL_VERSION_MINOR(best)) + " ");
    }
    case CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR:  // cl_khr_extended_versioning
      return out.value(highest_full_opencl_c(d));
    case CL_DEVICE_OPENCL_C_ALL_VERSIONS:
      return out.array(d.opencl_c_versions);
    case CL_DEVICE_OPENCL_C_FEATURES:
      return out.array(d.opencl_c_features);
    case CL_DEVICE_EXTENSIONS:
      return out.string(extensions_string(d));
    case CL_DEVICE_EXTENSIONS_WITH_VERSION:
      return out.array(d.extensions);
    case CL_DEVICE_PRINTF_BUFFER_SIZE:
      return out.value(d.printf_buffer_size);
    case CL_DEVICE_PREFERRED_INTEROP_USER_SYNC:
      return b(d.preferred_interop_user_sync);
    case CL_DEVICE_PARENT_DEVICE:
      return out.value(device.parent() ? device.parent()->handle() : cl_device_id{});
    case CL_DEVICE_PARTITION_MAX_SUB_DEVICES:
      return out.value(d.partition_max_sub_devices);
    case CL_DEVICE_PARTITION_PROPERTIES:
      if (d.partition_properties.empty()) return out.value<cl_device_partition_property>(0);
      return out.array(d.partition_properties);
    case CL_DEVICE_PARTITION_AFFINITY_DOMAIN:
      return out.value(d.partition_affinity_domain);
    case CL_DEVICE_PARTITION_TYPE:
      if (device.partition_type().empty()) return out.bytes(nullptr, 0);
      return out.array(device.partition_type());
    case CL_DEVICE_REFERENCE_COUNT:
      return out.value<cl_uint>(device.is_root() ? 1 : device.api_reference_count());
    case CL_DEVICE_SVM_CAPABILITIES:
      return out.value(d.svm_capabilities);
    case CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT:
      return out.value(d.preferred_platform_atomic_alignment);
    case CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT:
      return out.value(d.preferred_global_atomic_alignment);
    case CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT:
      return out.value(d.preferred_local_atomic_alignment);
    case CL_DEVICE_MAX_NUM_SUB_GROUPS:
      return out.value(d.max_num_sub_groups);
    case CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS:
      return b(d.sub_group_independent_forward_progress);
    case CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES:
      return out.value(d.atomic_memory_capabilities);
    case CL_DEVICE_ATOMIC_FENCE_CAPABILITIES:
      return out.value(d.atomic_fence_capabilities);
    case CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT:
      return b(d.non_uniform_work_group_support);
    case CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT:
      return b(d.work_group_collective_functions_support);
    case CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT:
      return b(d.generic_address_space_support);
    case CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES:
      return out.value(d.device_enqueue_capabilities);
    case CL_DEVICE_PIPE_SUPPORT:
      return b(d.pipe_support);
    case CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
      return out.value(d.preferred_work_group_size_multiple);
    case CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED:
      return out.string(d.latest_conformance_version_passed);
    // cl_khr_device_uuid
    case CL_DEVICE_UUID_KHR:
      return out.bytes(d.device_uuid.data(), CL_UUID_SIZE_KHR);
    case CL_DRIVER_UUID_KHR:
      return out.bytes(d.driver_uuid.data(), CL_UUID_SIZE_KHR);
    case CL_DEVICE_LUID_VALID_KHR:
      return b(d.luid_valid);
    case CL_DEVICE_LUID_KHR: {
      cl_uchar luid[CL_LUID_SIZE_KHR] = {};
      return out.bytes(luid, sizeof(luid));
    }
    case CL_DEVICE_NODE_MASK_KHR:
      return out.value<cl_uint>(0);
    case CL_DEVICE_PCI_BUS_INFO_KHR:
      if (!d.has_pci_bus_info) break;
      return out.value(d.pci_bus_info);
    // cl_khr_command_buffer, _mutable_dispatch, _multi_device (core/command_buffer_capabilities.h)
    case CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR:
      return out.value(d.command_buffer_printf
                           ? kCommandBufferCapabilities
                           : kCommandBufferCapabilities &
                                 ~cl_bitfield(CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR));
    case CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR:
      return out.value(kCommandBufferQueueProperties);
    case CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR:
      return out.value<cl_command_queue_properties>(0);
    case CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR:
      return out.value(kMutableDispatchCapabilities);
    case CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR:
      return out.value<cl_uint>(native_sync_devices(device).size());
    case CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR:
      return out.array(native_sync_devices(device));
    default:
      break;
  }
  unknown_param("device");
}

}  // namespace manifold
