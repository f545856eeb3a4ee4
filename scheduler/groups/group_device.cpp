#include "scheduler/groups/group_device.h"

#include <algorithm>
#include <charconv>

#include "core/log.h"
#include "core/platform.h"
#include "scheduler/groups/balancer.h"
#include "scheduler/groups/group_queue.h"
#include "settings/settings.h"

namespace manifold {
namespace {

template <class T>
void keep_common(std::vector<T>& into, const std::vector<T>& other) {
  std::erase_if(
      into, [&](const T& x) { return std::find(other.begin(), other.end(), x) == other.end(); });
}

void keep_common_names(std::vector<cl_name_version>& into,
                       const std::vector<cl_name_version>& other) {
  std::erase_if(into, [&](const cl_name_version& x) {
    return std::none_of(other.begin(), other.end(), [&](const cl_name_version& y) {
      return std::string_view(x.name) == y.name && x.version == y.version;
    });
  });
}

// What a group reports: limits every member satisfies, features every member has.
DeviceInfo group_info(const std::vector<Ref<Device>>& members) {
  DeviceInfo d = members.front()->info();
  std::string names;
  cl_device_type type = 0;
  cl_uint units = 0;
  for (const Ref<Device>& member : members) {
    const DeviceInfo& m = member->info();
    names += (names.empty() ? "" : " + ") + m.name;
    type |= m.type;
    units += m.max_compute_units;
    if (member.get() == members.front().get()) continue;
    keep_common_names(d.extensions, m.extensions);
    keep_common_names(d.opencl_c_versions, m.opencl_c_versions);
    keep_common_names(d.opencl_c_features, m.opencl_c_features);
    keep_common_names(d.ils, m.ils);
    d.max_work_item_dimensions = std::min(d.max_work_item_dimensions, m.max_work_item_dimensions);
    for (size_t i = 0; i < 3; ++i)
      d.max_work_item_sizes[i] = std::min(d.max_work_item_sizes[i], m.max_work_item_sizes[i]);
    d.max_work_group_size = std::min(d.max_work_group_size, m.max_work_group_size);
    d.max_clock_frequency = std::min(d.max_clock_frequency, m.max_clock_frequency);
    d.address_bits = std::min(d.address_bits, m.address_bits);
    d.max_mem_alloc_size = std::min(d.max_mem_alloc_size, m.max_mem_alloc_size);
    d.global_mem_size = std::min(d.global_mem_size, m.global_mem_size);
    d.max_constant_buffer_size = std::min(d.max_constant_buffer_size, m.max_constant_buffer_size);
    d.local_mem_size = std::min(d.local_mem_size, m.local_mem_size);
    d.max_constant_args = std::min(d.max_constant_args, m.max_constant_args);
    d.max_parameter_size = std::min(d.max_parameter_size, m.max_parameter_size);
    d.mem_base_addr_align = std::max(d.mem_base_addr_align, m.mem_base_addr_align);
    d.min_data_type_align_size = std::max(d.min_data_type_align_size, m.min_data_type_align_size);
    d.single_fp_config &= m.single_fp_config;
    d.double_fp_config &= m.double_fp_config;
    d.half_fp_config &= m.half_fp_config;
    d.error_correction_support = d.error_correction_support && m.error_correction_support;
    d.host_unified_memory = d.host_unified_memory && m.host_unified_memory;
    d.image_support = d.image_support && m.image_support;
    d.max_read_image_args = std::min(d.max_read_image_args, m.max_read_image_args);
    d.max_write_image_args = std::min(d.max_write_image_args, m.max_write_image_args);
    d.max_read_write_image_args =
        std::min(d.max_read_write_image_args, m.max_read_write_image_args);
    d.image2d_max_width = std::min(d.image2d_max_width, m.image2d_max_width);
    d.image2d_max_height = std::min(d.image2d_max_height, m.image2d_max_height);
    d.image3d_max_width = std::min(d.image3d_max_width, m.image3d_max_width);
    d.image3d_max_height = std::min(d.image3d_max_height, m.image3d_max_height);
    d.image3d_max_depth = std::min(d.image3d_max_depth, m.image3d_max_depth);
    d.image_max_buffer_size = std::min(d.image_max_buffer_size, m.image_max_buffer_size);
    d.image_max_array_size = std::min(d.image_max_array_size, m.image_max_array_size);
    d.max_samplers = std::min(d.max_samplers, m.max_samplers);
    d.image_pitch_alignment = std::max(d.image_pitch_alignment, m.image_pitch_alignment);
    d.image_base_address_alignment =
        std::max(d.image_base_address_alignment, m.image_base_address_alignment);
    d.execution_capabilities &= m.execution_capabilities;
    d.queue_on_host_properties &= m.queue_on_host_properties;
    d.printf_buffer_size = std::min(d.printf_buffer_size, m.printf_buffer_size);
    d.command_buffer_printf = d.command_buffer_printf && m.command_buffer_printf;
    d.printf_to_sink = d.printf_to_sink && m.printf_to_sink;
    d.pipe_support = d.pipe_support && m.pipe_support;
    d.max_pipe_args = std::min(d.max_pipe_args, m.max_pipe_args);
    d.max_global_variable_size = std::min(d.max_global_variable_size, m.max_global_variable_size);
    d.svm_capabilities &= m.svm_capabilities;
    d.atomic_memory_capabilities &= m.atomic_memory_capabilities;
    d.atomic_fence_capabilities &= m.atomic_fence_capabilities;
    if (d.sub_group_size != m.sub_group_size) d.sub_group_size = 0;
    d.sub_group_independent_forward_progress =
        d.sub_group_independent_forward_progress && m.sub_group_independent_forward_progress;
    d.max_num_sub_groups = std::min(d.max_num_sub_groups, m.max_num_sub_groups);
    d.non_uniform_work_group_support =
        d.non_uniform_work_group_support && m.non_uniform_work_group_support;
    d.work_group_collective_functions_support =
        d.work_group_collective_functions_support && m.work_group_collective_functions_support;
    d.generic_address_space_support =
        d.generic_address_space_support && m.generic_address_space_support;
    d.device_enqueue_capabilities &= m.device_enqueue_capabilities;
    d.preferred_work_group_size_multiple =
        std::max(d.preferred_work_group_size_multiple, m.preferred_work_group_size_multiple);
    d.partial_groups_launch_apart = d.partial_groups_launch_apart || m.partial_groups_launch_apart;
  }
  d.type = (type & CL_DEVICE_TYPE_GPU)           ? CL_DEVICE_TYPE_GPU
           : (type & CL_DEVICE_TYPE_ACCELERATOR) ? CL_DEVICE_TYPE_ACCELERATOR
                                                 : CL_DEVICE_TYPE_CPU;
  d.name = "Manifold group (" + names + ")";
  d.vendor = Platform::kVendor;
  d.max_compute_units = units;
  // SVM and imported memory as every member has them: coarse-grain bytes move between the
  // members' memories with the commands that use them, as a buffer's do; fine-grain and imported
  // pages are mapped on each member in place (Context::executing_devices).
  // Not yet on a group: sub-devices.
  d.partition_max_sub_devices = 0;
  d.partition_properties.clear();
  d.partition_affinity_domain = 0;
  std::erase_if(d.extensions, [](const cl_name_version& e) {
    return std::string_view(e.name) == "cl_khr_pci_bus_info";
  });
  if (d.sub_group_size == 0) {
    std::erase_if(d.extensions, [](const cl_name_version& e) {
      return std::string_view(e.name).find("subgroup") != std::string_view::npos;
    });
    std::erase_if(d.opencl_c_features, [](const cl_name_version& e) {
      return std::string_view(e.name).find("subgroup") != std::string_view::npos;
    });
    d.max_num_sub_groups = 0;
    d.sub_group_independent_forward_progress = false;
  }
  d.has_pci_bus_info = false;
  d.device_uuid = {};
  d.device_uuid[0] = 'G';
  return d;
}

// What a kernel built for every member may use: what every member's target allows.
compiler::Target group_target(const std::vector<Ref<Device>>& members, const DeviceInfo& info) {
  compiler::Target t = members.front()->compiler_target();
  for (const Ref<Device>& member : members) {
    const compiler::Target& m = member->compiler_target();
    keep_common(t.opencl_c_features, m.opencl_c_features);
    keep_common(t.extensions, m.extensions);
    t.opencl_c_version = std::min(t.opencl_c_version, m.opencl_c_version);
    t.fp64 = t.fp64 && m.fp64;
    t.fp16 = t.fp16 && m.fp16;
    t.images = t.images && m.images;
    t.spirv = t.spirv && m.spirv;
  }
  t.sub_group_size = info.sub_group_size;
  return t;
}

// Expected speed before any measurement: lanes x clock.
double expected_speed(const Device& device) {
  const DeviceInfo& i = device.info();
  const double lanes = (i.type & CL_DEVICE_TYPE_GPU) && !device.shares_host_memory()
                           ? 128.0
                           : double(std::max<cl_uint>(1, i.native_vector_width[4]));
  return double(std::max<cl_uint>(1, i.max_compute_units)) *
         double(std::max<cl_uint>(1, i.max_clock_frequency)) * lanes;
}

}  // namespace

GroupDevice::GroupDevice(std::vector<Ref<Device>> members, std::vector<double> shares,
                         bool application_made) {
  members_ = std::move(members);
  application_made_ = application_made;
  info_ = group_info(members_);
  target_ = group_target(members_, info_);
  std::vector<double> weights;
  for (const Ref<Device>& m : members_) weights.push_back(expected_speed(*m));
  balancer_ = std::make_unique<Balancer>(std::move(weights), std::move(shares));
}

GroupDevice::~GroupDevice() = default;

std::shared_ptr<const LoadedProgram> GroupDevice::load_program(std::span<const uint8_t>,
                                                               std::string* error) {
  if (error) *error = "a device group loads programs on its members";
  return nullptr;
}

bool GroupDevice::shares_host_memory() const {
  return std::all_of(members_.begin(), members_.end(),
                     [](const Ref<Device>& m) { return m->shares_host_memory(); });
}

size_t GroupDevice::member_for_host_work() const {
  for (size_t m = 0; m < members_.size(); ++m)
    if (members_[m]->shares_host_memory()) return m;
  return 0;
}

std::shared_ptr<NativeQueue> GroupDevice::create_native_queue_impl(bool out_of_order) {
  std::vector<std::shared_ptr<NativeQueue>> queues;
  for (const Ref<Device>& m : members_) queues.push_back(m->create_native_queue(out_of_order));
  return std::make_shared<GroupQueue>(*this, std::move(queues), !out_of_order);
}

GroupDevice* make_application_group(std::vector<Device*> members, std::vector<double> shares) {
  check(!members.empty(), CL_INVALID_VALUE, "a device group needs at least one member");
  std::vector<Ref<Device>> refs;
  for (Device* m : members) {
    check(!m->is_group(), CL_INVALID_DEVICE, "a device group cannot be a member of a group");
    check(std::count(members.begin(), members.end(), m) == 1, CL_INVALID_DEVICE,
          "a device is listed twice");
    refs.emplace_back(m);
  }
  check(shares.empty() || shares.size() == members.size(), CL_INVALID_VALUE,
        "the shares must name every member");
  double sum = 0;
  for (double s : shares) {
    check(s >= 0 && s <= 1e9, CL_INVALID_VALUE, "a share is negative or not a number");
    sum += s;
  }
  check(shares.empty() || sum > 0, CL_INVALID_VALUE, "every share is zero");
  return make_api_object<GroupDevice>(std::move(refs), std::move(shares), true);
}

}  // namespace manifold

namespace manifold {
namespace {

const DeviceComposerRegistration kGroupsFromSettings([](std::span<Device* const> devices) {
  return make_groups_from_spec(settings().device_groups, devices);
});

}  // namespace
}  // namespace manifold
