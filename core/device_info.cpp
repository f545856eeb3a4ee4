// clGetDeviceInfo: every OpenCL 3.0 query, answered from DeviceInfo; and the part of
// DeviceInfo that the compiler target decides.
#include <CL/cl_ext.h>
#include <CL/cl_manifold.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "core/command_buffer_capabilities.h"
#include "core/device.h"
#include "core/device_description.h"
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
  // (core/command_buffer_capabilities.h), for every device: the revisions of the current Khronos
  // headers.
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

namespace {

// The answer to one query, from the device and its DeviceInfo.
struct Query {
  Device& device;
  const DeviceInfo& info;
  InfoWriter& out;
};
using Answer = void (*)(const Query& q);

// Answers read straight from a DeviceInfo member.
template <auto Member>
void field(const Query& q) {
  q.out.value(q.info.*Member);
}
template <auto Member>
void flag(const Query& q) {
  q.out.value<cl_bool>(q.info.*Member ? CL_TRUE : CL_FALSE);
}
template <auto Member>
void text(const Query& q) {
  q.out.string(q.info.*Member);
}
template <auto Member>
void list(const Query& q) {
  q.out.array(q.info.*Member);
}
// One element of a per-type width (char short int long float double half).
template <auto Member, size_t index>
void element(const Query& q) {
  q.out.value((q.info.*Member)[index]);
}

struct DeviceQuery {
  cl_device_info param;
  Answer answer;
};

constexpr DeviceQuery kDeviceQueries[] = {
    {CL_DEVICE_TYPE, field<&DeviceInfo::type>},
    {CL_DEVICE_VENDOR_ID, field<&DeviceInfo::vendor_id>},
    {CL_DEVICE_MAX_COMPUTE_UNITS, field<&DeviceInfo::max_compute_units>},
    {CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, field<&DeviceInfo::max_work_item_dimensions>},
    {CL_DEVICE_MAX_WORK_ITEM_SIZES, field<&DeviceInfo::max_work_item_sizes>},
    {CL_DEVICE_MAX_WORK_GROUP_SIZE, field<&DeviceInfo::max_work_group_size>},
    {CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR, element<&DeviceInfo::preferred_vector_width, 0>},
    {CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT, element<&DeviceInfo::preferred_vector_width, 1>},
    {CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT, element<&DeviceInfo::preferred_vector_width, 2>},
    {CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG, element<&DeviceInfo::preferred_vector_width, 3>},
    {CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, element<&DeviceInfo::preferred_vector_width, 4>},
    {CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, element<&DeviceInfo::preferred_vector_width, 5>},
    {CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, element<&DeviceInfo::preferred_vector_width, 6>},
    {CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR, element<&DeviceInfo::native_vector_width, 0>},
    {CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT, element<&DeviceInfo::native_vector_width, 1>},
    {CL_DEVICE_NATIVE_VECTOR_WIDTH_INT, element<&DeviceInfo::native_vector_width, 2>},
    {CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG, element<&DeviceInfo::native_vector_width, 3>},
    {CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, element<&DeviceInfo::native_vector_width, 4>},
    {CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, element<&DeviceInfo::native_vector_width, 5>},
    {CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF, element<&DeviceInfo::native_vector_width, 6>},
    {CL_DEVICE_MAX_CLOCK_FREQUENCY, field<&DeviceInfo::max_clock_frequency>},
    {CL_DEVICE_ADDRESS_BITS, field<&DeviceInfo::address_bits>},
    {CL_DEVICE_MAX_MEM_ALLOC_SIZE, field<&DeviceInfo::max_mem_alloc_size>},
    {CL_DEVICE_IMAGE_SUPPORT, flag<&DeviceInfo::image_support>},
    {CL_DEVICE_MAX_READ_IMAGE_ARGS, field<&DeviceInfo::max_read_image_args>},
    {CL_DEVICE_MAX_WRITE_IMAGE_ARGS, field<&DeviceInfo::max_write_image_args>},
    {CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS, field<&DeviceInfo::max_read_write_image_args>},
    {CL_DEVICE_IL_VERSION, [](const Query& q) { q.out.string(il_string(q.info)); }},
    {CL_DEVICE_ILS_WITH_VERSION, list<&DeviceInfo::ils>},
    {CL_DEVICE_IMAGE2D_MAX_WIDTH, field<&DeviceInfo::image2d_max_width>},
    {CL_DEVICE_IMAGE2D_MAX_HEIGHT, field<&DeviceInfo::image2d_max_height>},
    {CL_DEVICE_IMAGE3D_MAX_WIDTH, field<&DeviceInfo::image3d_max_width>},
    {CL_DEVICE_IMAGE3D_MAX_HEIGHT, field<&DeviceInfo::image3d_max_height>},
    {CL_DEVICE_IMAGE3D_MAX_DEPTH, field<&DeviceInfo::image3d_max_depth>},
    {CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, field<&DeviceInfo::image_max_buffer_size>},
    {CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, field<&DeviceInfo::image_max_array_size>},
    {CL_DEVICE_MAX_SAMPLERS, field<&DeviceInfo::max_samplers>},
    {CL_DEVICE_IMAGE_PITCH_ALIGNMENT, field<&DeviceInfo::image_pitch_alignment>},
    {CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, field<&DeviceInfo::image_base_address_alignment>},
    {CL_DEVICE_MAX_PIPE_ARGS, field<&DeviceInfo::max_pipe_args>},
    {CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS, field<&DeviceInfo::pipe_max_active_reservations>},
    {CL_DEVICE_PIPE_MAX_PACKET_SIZE, field<&DeviceInfo::pipe_max_packet_size>},
    {CL_DEVICE_MAX_PARAMETER_SIZE, field<&DeviceInfo::max_parameter_size>},
    {CL_DEVICE_MEM_BASE_ADDR_ALIGN, field<&DeviceInfo::mem_base_addr_align>},
    {CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE, field<&DeviceInfo::min_data_type_align_size>},
    {CL_DEVICE_SINGLE_FP_CONFIG, field<&DeviceInfo::single_fp_config>},
    {CL_DEVICE_DOUBLE_FP_CONFIG, field<&DeviceInfo::double_fp_config>},
    {CL_DEVICE_HALF_FP_CONFIG,
     [](const Query& q) {
       // Part of cl_khr_fp16: "CL_INVALID_VALUE if param_name is a value that is available as an
       // extension and the corresponding extension is not supported by the device."
       check(q.info.half_fp_config != 0, CL_INVALID_VALUE,
             "CL_DEVICE_HALF_FP_CONFIG needs cl_khr_fp16");
       q.out.value(q.info.half_fp_config);
     }},
    {CL_DEVICE_GLOBAL_MEM_CACHE_TYPE, field<&DeviceInfo::global_mem_cache_type>},
    {CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, field<&DeviceInfo::global_mem_cacheline_size>},
    {CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, field<&DeviceInfo::global_mem_cache_size>},
    {CL_DEVICE_GLOBAL_MEM_SIZE, field<&DeviceInfo::global_mem_size>},
    {CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, field<&DeviceInfo::max_constant_buffer_size>},
    {CL_DEVICE_MAX_CONSTANT_ARGS, field<&DeviceInfo::max_constant_args>},
    {CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE, field<&DeviceInfo::max_global_variable_size>},
    {CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE,
     field<&DeviceInfo::global_variable_preferred_total_size>},
    {CL_DEVICE_LOCAL_MEM_TYPE, field<&DeviceInfo::local_mem_type>},
    {CL_DEVICE_LOCAL_MEM_SIZE, field<&DeviceInfo::local_mem_size>},
    {CL_DEVICE_ERROR_CORRECTION_SUPPORT, flag<&DeviceInfo::error_correction_support>},
    {CL_DEVICE_HOST_UNIFIED_MEMORY, flag<&DeviceInfo::host_unified_memory>},
    {CL_DEVICE_PROFILING_TIMER_RESOLUTION, field<&DeviceInfo::profiling_timer_resolution>},
    {CL_DEVICE_ENDIAN_LITTLE, flag<&DeviceInfo::endian_little>},
    {CL_DEVICE_AVAILABLE, flag<&DeviceInfo::available>},
    {CL_DEVICE_COMPILER_AVAILABLE, flag<&DeviceInfo::compiler_available>},
    {CL_DEVICE_LINKER_AVAILABLE, flag<&DeviceInfo::linker_available>},
    {CL_DEVICE_EXECUTION_CAPABILITIES, field<&DeviceInfo::execution_capabilities>},
    {CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, field<&DeviceInfo::queue_on_host_properties>},
    {CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES, field<&DeviceInfo::queue_on_device_properties>},
    {CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE, field<&DeviceInfo::queue_on_device_preferred_size>},
    {CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE, field<&DeviceInfo::queue_on_device_max_size>},
    {CL_DEVICE_MAX_ON_DEVICE_QUEUES, field<&DeviceInfo::max_on_device_queues>},
    {CL_DEVICE_MAX_ON_DEVICE_EVENTS, field<&DeviceInfo::max_on_device_events>},
    {CL_DEVICE_BUILT_IN_KERNELS, text<&DeviceInfo::builtin_kernels>},
    {CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION,
     [](const Query& q) { q.out.array(std::vector<cl_name_version>{}); }},
    {CL_DEVICE_PLATFORM, [](const Query& q) { q.out.value(Platform::get().handle()); }},
    {CL_DEVICE_NAME, text<&DeviceInfo::name>},
    {CL_DEVICE_VENDOR, text<&DeviceInfo::vendor>},
    {CL_DRIVER_VERSION, text<&DeviceInfo::driver_version>},
    {CL_DEVICE_PROFILE, text<&DeviceInfo::profile>},
    {CL_DEVICE_VERSION, [](const Query& q) { q.out.string(version_string(q.info)); }},
    {CL_DEVICE_NUMERIC_VERSION, field<&DeviceInfo::numeric_version>},
    {CL_DEVICE_OPENCL_C_VERSION,
     [](const Query& q) {
       const cl_version best = highest_full_opencl_c(q.info);
       q.out.string("OpenCL C " + std::to_string(CL_VERSION_MAJOR(best)) + "." +
                    std::to_string(CL_VERSION_MINOR(best)) + " ");
     }},
    // cl_khr_extended_versioning
    {CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR,
     [](const Query& q) { q.out.value(highest_full_opencl_c(q.info)); }},
    {CL_DEVICE_OPENCL_C_ALL_VERSIONS, list<&DeviceInfo::opencl_c_versions>},
    {CL_DEVICE_OPENCL_C_FEATURES, list<&DeviceInfo::opencl_c_features>},
    {CL_DEVICE_EXTENSIONS, [](const Query& q) { q.out.string(extensions_string(q.info)); }},
    {CL_DEVICE_EXTENSIONS_WITH_VERSION, list<&DeviceInfo::extensions>},
    {CL_DEVICE_PRINTF_BUFFER_SIZE, field<&DeviceInfo::printf_buffer_size>},
    {CL_DEVICE_PREFERRED_INTEROP_USER_SYNC, flag<&DeviceInfo::preferred_interop_user_sync>},
    {CL_DEVICE_PARENT_DEVICE,
     [](const Query& q) {
       Device* parent = q.device.visible_parent();
       q.out.value(parent ? parent->handle() : cl_device_id{});
     }},
    // cl_mfld_device_group
    {CL_DEVICE_GROUP_MEMBERS_MFLD,
     [](const Query& q) {
       std::vector<cl_device_id> members;
       for (const Ref<Device>& m : q.device.members()) members.push_back(m->handle());
       if (members.empty()) return q.out.bytes(nullptr, 0);
       q.out.array(members);
     }},
    // What manifold-server sends its clients (core/device_description.h).
    {CL_DEVICE_DESCRIPTION_MFLD,
     [](const Query& q) {
       const std::vector<std::byte> bytes = encode_device_description(describe_device(q.device));
       q.out.bytes(bytes.data(), bytes.size());
     }},
    {CL_DEVICE_PARTITION_MAX_SUB_DEVICES, field<&DeviceInfo::partition_max_sub_devices>},
    {CL_DEVICE_PARTITION_PROPERTIES,
     [](const Query& q) {
       if (q.info.partition_properties.empty()) return q.out.value<cl_device_partition_property>(0);
       q.out.array(q.info.partition_properties);
     }},
    {CL_DEVICE_PARTITION_AFFINITY_DOMAIN, field<&DeviceInfo::partition_affinity_domain>},
    {CL_DEVICE_PARTITION_TYPE,
     [](const Query& q) {
       if (q.device.partition_type().empty() || q.device.listed_as_root())
         return q.out.bytes(nullptr, 0);
       q.out.array(q.device.partition_type());
     }},
    {CL_DEVICE_REFERENCE_COUNT,
     [](const Query& q) {
       q.out.value<cl_uint>(q.device.reference_counted() ? q.device.api_reference_count() : 1);
     }},
    {CL_DEVICE_SVM_CAPABILITIES, field<&DeviceInfo::svm_capabilities>},
    {CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT,
     field<&DeviceInfo::preferred_platform_atomic_alignment>},
    {CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT,
     field<&DeviceInfo::preferred_global_atomic_alignment>},
    {CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT,
     field<&DeviceInfo::preferred_local_atomic_alignment>},
    {CL_DEVICE_MAX_NUM_SUB_GROUPS, field<&DeviceInfo::max_num_sub_groups>},
    {CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
     flag<&DeviceInfo::sub_group_independent_forward_progress>},
    {CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, field<&DeviceInfo::atomic_memory_capabilities>},
    {CL_DEVICE_ATOMIC_FENCE_CAPABILITIES, field<&DeviceInfo::atomic_fence_capabilities>},
    {CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, flag<&DeviceInfo::non_uniform_work_group_support>},
    {CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
     flag<&DeviceInfo::work_group_collective_functions_support>},
    {CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT, flag<&DeviceInfo::generic_address_space_support>},
    {CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, field<&DeviceInfo::device_enqueue_capabilities>},
    {CL_DEVICE_PIPE_SUPPORT, flag<&DeviceInfo::pipe_support>},
    {CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
     field<&DeviceInfo::preferred_work_group_size_multiple>},
    {CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED,
     text<&DeviceInfo::latest_conformance_version_passed>},
    // cl_khr_device_uuid
    {CL_DEVICE_UUID_KHR, field<&DeviceInfo::device_uuid>},
    {CL_DRIVER_UUID_KHR, field<&DeviceInfo::driver_uuid>},
    {CL_DEVICE_LUID_VALID_KHR, flag<&DeviceInfo::luid_valid>},
    {CL_DEVICE_LUID_KHR,
     [](const Query& q) {
       cl_uchar luid[CL_LUID_SIZE_KHR] = {};
       q.out.bytes(luid, sizeof(luid));
     }},
    {CL_DEVICE_NODE_MASK_KHR, [](const Query& q) { q.out.value<cl_uint>(0); }},
    // cl_khr_pci_bus_info: only devices that have a PCI address answer.
    {CL_DEVICE_PCI_BUS_INFO_KHR,
     [](const Query& q) {
       if (!q.info.has_pci_bus_info) unknown_param("device");
       q.out.value(q.info.pci_bus_info);
     }},
    // cl_khr_command_buffer, _mutable_dispatch, _multi_device (core/command_buffer_capabilities.h)
    {CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR,
     [](const Query& q) {
       q.out.value(q.info.command_buffer_printf
                       ? kCommandBufferCapabilities
                       : kCommandBufferCapabilities &
                             ~cl_bitfield(CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR));
     }},
    {CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR,
     [](const Query& q) { q.out.value(kCommandBufferQueueProperties); }},
    {CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR,
     [](const Query& q) { q.out.value<cl_command_queue_properties>(0); }},
    {CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR,
     [](const Query& q) { q.out.value(kMutableDispatchCapabilities); }},
    {CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR,
     [](const Query& q) { q.out.value<cl_uint>(native_sync_devices(q.device).size()); }},
    {CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR,
     [](const Query& q) { q.out.array(native_sync_devices(q.device)); }},
};

// Each query answered once (what a switch had the compiler check).
constexpr bool each_query_once() {
  for (size_t i = 0; i < std::size(kDeviceQueries); ++i)
    for (size_t j = i + 1; j < std::size(kDeviceQueries); ++j)
      if (kDeviceQueries[i].param == kDeviceQueries[j].param) return false;
  return true;
}
static_assert(each_query_once(), "a device query is listed twice");

}  // namespace

void get_device_info(Device& device, cl_device_info param, size_t size, void* value,
                     size_t* size_ret) {
  const DeviceInfo& d = device.info();
  InfoWriter out(size, value, size_ret);
  for (const DeviceQuery& query : kDeviceQueries)
    if (query.param == param) return query.answer(Query{device, d, out});
  unknown_param("device");
}

}  // namespace manifold
