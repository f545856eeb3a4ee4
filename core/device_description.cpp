#include "core/device_description.h"

#include "compiler/binary_format.h"
#include "core/byte_stream.h"

namespace manifold {

namespace {

constexpr char kMagic[8] = {'M', 'N', 'F', 'D', 'D', 'E', 'V', '1'};
// Bumped whenever a field is added, removed or reordered below.
constexpr uint32_t kFormatVersion = 3;

// Every field, once, in the format's order. A field added to DeviceInfo or Target must be added
// here (and kFormatVersion bumped); the sizes below are a reminder that fails the build.
static_assert(sizeof(void*) != 8 || sizeof(DeviceInfo) == 888,
              "DeviceInfo changed: list the new field in visit_info");
static_assert(sizeof(void*) != 8 || sizeof(compiler::Target) == 168,
              "compiler::Target changed: list the new field in visit_target");
template <class Info, class Visit>
void visit_info(Info& i, Visit&& v) {
  v(i.type), v(i.name), v(i.vendor), v(i.driver_version), v(i.profile), v(i.vendor_id);
  v(i.numeric_version), v(i.version_suffix), v(i.extensions), v(i.opencl_c_versions);
  v(i.opencl_c_features), v(i.ils), v(i.builtin_kernels), v(i.latest_conformance_version_passed);
  v(i.max_compute_units), v(i.max_work_item_dimensions), v(i.max_work_item_sizes);
  v(i.max_work_group_size), v(i.preferred_vector_width), v(i.native_vector_width);
  v(i.max_clock_frequency), v(i.address_bits), v(i.max_mem_alloc_size), v(i.global_mem_size);
  v(i.global_mem_cache_size), v(i.global_mem_cacheline_size), v(i.global_mem_cache_type);
  v(i.max_constant_buffer_size), v(i.local_mem_size), v(i.local_mem_type), v(i.max_constant_args);
  v(i.max_parameter_size), v(i.mem_base_addr_align), v(i.min_data_type_align_size);
  v(i.single_fp_config), v(i.double_fp_config), v(i.half_fp_config);
  v(i.error_correction_support), v(i.host_unified_memory), v(i.endian_little), v(i.available);
  v(i.compiler_available), v(i.linker_available), v(i.profiling_timer_resolution);
  v(i.execution_capabilities), v(i.queue_on_host_properties), v(i.printf_buffer_size);
  v(i.command_buffer_printf), v(i.printf_to_sink), v(i.preferred_interop_user_sync);
  v(i.image_support), v(i.max_read_image_args), v(i.max_write_image_args);
  v(i.max_read_write_image_args), v(i.image2d_max_width), v(i.image2d_max_height);
  v(i.image3d_max_width), v(i.image3d_max_height), v(i.image3d_max_depth);
  v(i.image_max_buffer_size), v(i.image_max_array_size), v(i.max_samplers);
  v(i.image_pitch_alignment), v(i.image_base_address_alignment);
  v(i.svm_capabilities), v(i.max_pipe_args), v(i.pipe_max_active_reservations);
  v(i.pipe_max_packet_size), v(i.pipe_support), v(i.max_global_variable_size);
  v(i.global_variable_preferred_total_size), v(i.max_on_device_queues), v(i.max_on_device_events);
  v(i.queue_on_device_preferred_size), v(i.queue_on_device_max_size);
  v(i.queue_on_device_properties), v(i.preferred_platform_atomic_alignment);
  v(i.preferred_global_atomic_alignment), v(i.preferred_local_atomic_alignment);
  v(i.max_num_sub_groups), v(i.sub_group_size), v(i.sub_group_independent_forward_progress);
  v(i.atomic_memory_capabilities), v(i.atomic_fence_capabilities);
  v(i.non_uniform_work_group_support), v(i.work_group_collective_functions_support);
  v(i.generic_address_space_support), v(i.partial_groups_launch_apart);
  v(i.device_enqueue_capabilities), v(i.preferred_work_group_size_multiple);
  v(i.partition_max_sub_devices), v(i.partition_properties), v(i.partition_affinity_domain);
  v(i.device_uuid), v(i.driver_uuid), v(i.luid_valid), v(i.pci_bus_info), v(i.has_pci_bus_info);
}

template <class Target, class Visit>
void visit_target(Target& t, Visit&& v) {
  v(t.triple), v(t.cpu), v(t.features), v(t.opencl_c_version), v(t.opencl_version);
  v(t.opencl_c_features), v(t.extensions), v(t.fp64), v(t.fp16), v(t.images);
  v(t.sub_group_size), v(t.spirv);
}

}  // namespace

std::vector<std::byte> encode_device_description(const DeviceDescription& d) {
  ByteWriter out;
  out.raw(kMagic, sizeof kMagic);
  out.put(kFormatVersion);
  FieldWriter e{out};
  visit_info(d.info, e);
  visit_target(d.target, e);
  e(d.backend);
  e(d.runs_partial_ranges);
  e(d.producer);
  return out.take();
}

std::optional<DeviceDescription> decode_device_description(std::span<const std::byte> bytes,
                                                           std::string* error) {
  ByteReader in(bytes);
  char magic[sizeof kMagic];
  in.raw(magic, sizeof magic);
  if (!in.ok() || std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    *error = "not a device description";
    return std::nullopt;
  }
  if (const auto version = in.get<uint32_t>(); version != kFormatVersion) {
    *error = "device description of format " + std::to_string(version) + ", this build reads " +
             std::to_string(kFormatVersion);
    return std::nullopt;
  }
  DeviceDescription d;
  FieldReader dec{in};
  visit_info(d.info, dec);
  visit_target(d.target, dec);
  dec(d.backend);
  dec(d.runs_partial_ranges);
  dec(d.producer);
  if (!in.ok() || !in.at_end()) {
    *error = "malformed device description";
    return std::nullopt;
  }
  return d;
}

DeviceDescription describe_device(const Device& device) {
  DeviceDescription d;
  d.info = device.info();
  d.target = device.compiler_target();
  d.backend = device.backend_name();
  d.runs_partial_ranges = device.runs_partial_ranges();
  d.producer = compiler::producer_id();
  return d;
}

}  // namespace manifold
