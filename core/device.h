// A device of the platform. Backends derive from Device and fill DeviceInfo with true values
// from the hardware; clGetDeviceInfo answers from it (core/device_info.cpp).
#pragma once

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <algorithm>
#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/device_memory.h"
#include "core/object.h"
#include "core/residency.h"

namespace manifold {

namespace compiler {
struct Target;
}

// Everything clGetDeviceInfo reports, kept as plain values (no behaviour).
struct DeviceInfo {
  cl_device_type type = CL_DEVICE_TYPE_DEFAULT;
  std::string name, vendor, driver_version, profile = "FULL_PROFILE";
  cl_uint vendor_id = 0;
  cl_version numeric_version = CL_MAKE_VERSION(3, 0, 0);
  std::string version_suffix;  // after "OpenCL 3.0 "
  std::vector<cl_name_version> extensions;
  std::vector<cl_name_version> opencl_c_versions;
  std::vector<cl_name_version> opencl_c_features;
  std::vector<cl_name_version> ils;  // e.g. SPIR-V 1.0..1.4
  std::string builtin_kernels;
  std::string latest_conformance_version_passed = "v0000-01-01-00";

  cl_uint max_compute_units = 1, max_work_item_dimensions = 3;
  std::array<size_t, 3> max_work_item_sizes{1, 1, 1};
  size_t max_work_group_size = 1;
  cl_uint preferred_vector_width[7] = {};  // char short int long float double half
  cl_uint native_vector_width[7] = {};
  cl_uint max_clock_frequency = 0, address_bits = 64;
  cl_ulong max_mem_alloc_size = 0, global_mem_size = 0, global_mem_cache_size = 0;
  cl_uint global_mem_cacheline_size = 0;
  cl_device_mem_cache_type global_mem_cache_type = CL_NONE;
  cl_ulong max_constant_buffer_size = 64 * 1024, local_mem_size = 32 * 1024;
  cl_device_local_mem_type local_mem_type = CL_GLOBAL;
  cl_uint max_constant_args = 8;
  size_t max_parameter_size = 1024;
  cl_uint mem_base_addr_align = 1024;  // bits
  cl_uint min_data_type_align_size = 128;
  cl_device_fp_config single_fp_config = 0, double_fp_config = 0, half_fp_config = 0;
  bool error_correction_support = false, host_unified_memory = false, endian_little = true;
  bool available = true, compiler_available = true, linker_available = true;
  size_t profiling_timer_resolution = 1;
  cl_device_exec_capabilities execution_capabilities = CL_EXEC_KERNEL;
  cl_command_queue_properties queue_on_host_properties = 0;
  size_t printf_buffer_size = 1 << 20;
  // The backend hands each launch's printf output to its queue's PrintfSink.
  bool printf_to_sink = false;
  // Kernels that call printf may be recorded in command buffers
  // (CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR).
  bool command_buffer_printf = true;
  bool preferred_interop_user_sync = true;

  // Images (optional in 3.0).
  bool image_support = false;
  cl_uint max_read_image_args = 0, max_write_image_args = 0, max_read_write_image_args = 0;
  size_t image2d_max_width = 0, image2d_max_height = 0, image3d_max_width = 0,
         image3d_max_height = 0, image3d_max_depth = 0, image_max_buffer_size = 0,
         image_max_array_size = 0;
  cl_uint max_samplers = 0, image_pitch_alignment = 0, image_base_address_alignment = 0;

  // OpenCL 2.x / 3.0 optional features.
  cl_device_svm_capabilities svm_capabilities = 0;
  cl_uint max_pipe_args = 0, pipe_max_active_reservations = 0, pipe_max_packet_size = 0;
  bool pipe_support = false;
  size_t max_global_variable_size = 0, global_variable_preferred_total_size = 0;
  cl_uint max_on_device_queues = 0, max_on_device_events = 0, queue_on_device_preferred_size = 0,
          queue_on_device_max_size = 0;
  cl_command_queue_properties queue_on_device_properties = 0;
  cl_uint preferred_platform_atomic_alignment = 0, preferred_global_atomic_alignment = 0,
          preferred_local_atomic_alignment = 0;
  cl_uint max_num_sub_groups = 0;
  // Work-items per sub-group (all but the last sub-group of a work-group); 0 without sub-groups.
  cl_uint sub_group_size = 0;
  bool sub_group_independent_forward_progress = false;
  cl_device_atomic_capabilities atomic_memory_capabilities =
      CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP;
  cl_device_atomic_capabilities atomic_fence_capabilities = CL_DEVICE_ATOMIC_ORDER_RELAXED |
                                                            CL_DEVICE_ATOMIC_ORDER_ACQ_REL |
                                                            CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP;
  bool non_uniform_work_group_support = false, work_group_collective_functions_support = false,
       generic_address_space_support = false;
  // A smaller last work-group costs a launch of its own (CUDA): where the application leaves the
  // local size to the runtime, it picks one that divides the NDRange when there is one.
  bool partial_groups_launch_apart = false;
  cl_device_device_enqueue_capabilities device_enqueue_capabilities = 0;
  size_t preferred_work_group_size_multiple = 1;

  // Sub-devices.
  cl_uint partition_max_sub_devices = 0;
  std::vector<cl_device_partition_property> partition_properties;  // empty = none
  cl_device_affinity_domain partition_affinity_domain = 0;

  // cl_khr_device_uuid / cl_khr_pci_bus_info.
  std::array<cl_uchar, CL_UUID_SIZE_KHR> device_uuid{}, driver_uuid{};
  bool luid_valid = false;
  cl_device_pci_bus_info_khr pci_bus_info{};
  bool has_pci_bus_info = false;
};

class Platform;

// Memory calls (allocation, address reservation and mapping, host imports): DeviceMemory.
class Device : public ApiObject<_cl_device_id, ObjectKind::Device, CL_INVALID_DEVICE>,
               public DeviceMemory {
 public:
  Device() = default;

  const DeviceInfo& info() const { return info_; }
  // Whether the device has no parent device (a sub-device the platform lists as one of its own
  // devices still has its parent: listed_as_root()).
  bool is_root() const { return parent_ == nullptr; }
  // clRetainDevice and clReleaseDevice count references of sub-devices and of groups the
  // application made; the platform's own devices live as long as the process.
  bool reference_counted() const {
    return (parent_ != nullptr && !listed_as_root_) || application_made_;
  }
  // A sub-device the platform lists in place of its parent (MANIFOLD_GPU_PARTITION): the
  // application sees a root device (no parent, no partition type, no reference count); inside,
  // it shares its parent's memory and programs as any sub-device does. Thread: platform setup.
  void list_as_root() { listed_as_root_ = true; }
  bool listed_as_root() const { return listed_as_root_; }
  // CL_DEVICE_PARENT_DEVICE: the parent as the application sees it.
  Device* visible_parent() const { return listed_as_root_ ? nullptr : parent_.get(); }
  // A device group's members (scheduler/groups), in their order; empty for any other device.
  const std::vector<Ref<Device>>& members() const { return members_; }
  bool is_group() const { return !members_.empty(); }
  Device* parent() const { return parent_.get(); }
  const std::vector<cl_device_partition_property>& partition_type() const {
    return partition_type_;
  }

  // "CL_DEVICE_TYPE_CPU", used in messages and the `manifold` tool.
  virtual const char* backend_name() const = 0;

  // A native in-order stream for a command queue on this device. Thread: application.
  std::shared_ptr<NativeQueue> create_native_queue(bool out_of_order) {
    return create_native_queue_impl(out_of_order);
  }

  // The compiler target this device builds for (triple, CPU, OpenCL C features).
  virtual const compiler::Target& compiler_target() const = 0;

  // Loads an executable binary built for compiler_target(). Thread: application (the build).
  // nullptr with *error when the device cannot load it.
  virtual std::shared_ptr<const LoadedProgram> load_program(std::span<const uint8_t> binary,
                                                            std::string* error) = 0;

  // A sub-device with `compute_units` of this device's units (clCreateSubDevices); the caller
  // has validated the request against DeviceInfo's partition limits. Thread: application.
  virtual Device* create_sub_device(cl_uint compute_units, cl_device_partition_property kind,
                                    std::vector<cl_device_partition_property> partition_type) {
    fail(CL_DEVICE_PARTITION_FAILED, "this device cannot be partitioned");
  }

  // CL_DEVICE_PARTITION_EQUALLY (`requested` holds the one count) and BY_COUNTS: the compute
  // units each sub-device would get, for a request the caller checked against DeviceInfo's
  // limits; empty where the device cannot make that partition (CL_DEVICE_PARTITION_FAILED). A
  // device whose units go in granules (GPU SM groups) rounds each count up. By default: the
  // counts as given; EQUALLY as many as fit, at most partition_max_sub_devices.
  virtual std::vector<cl_uint> partition_units(cl_device_partition_property kind,
                                               const std::vector<cl_uint>& requested) const {
    if (kind != CL_DEVICE_PARTITION_EQUALLY) return requested;
    const cl_uint n = requested.at(0);
    return std::vector<cl_uint>(
        std::min(info_.max_compute_units / n, info_.partition_max_sub_devices), n);
  }
  // The sub-devices of one such partition, made at once (a GPU makes disjoint SM groups only
  // knowing the whole partition); partition_units() gave a non-empty answer for the request.
  // A failure leaves none made. By default one create_sub_device() per unit count.
  // Thread: application.
  virtual std::vector<Device*> create_sub_devices(
      cl_device_partition_property kind, const std::vector<cl_uint>& requested,
      const std::vector<cl_device_partition_property>& partition_type) {
    std::vector<Device*> made;
    try {
      for (cl_uint units : partition_units(kind, requested))
        made.push_back(create_sub_device(units, kind, partition_type));
    } catch (...) {
      for (Device* d : made) d->release_api();
      throw;
    }
    return made;
  }

  // CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN: the domain that `requested` (one bit of
  // DeviceInfo::partition_affinity_domain) splits this device along (NEXT_PARTITIONABLE
  // resolved) and into how many sub-devices; count 0 when it cannot be split that way.
  struct AffinityPartition {
    cl_device_affinity_domain domain = 0;
    cl_uint count = 0;
  };
  virtual AffinityPartition affinity_partition(cl_device_affinity_domain /*requested*/) const {
    return {};
  }
  // Sub-device `index` (< affinity_partition().count) of that split. Thread: application.
  virtual Device* create_affinity_sub_device(
      cl_uint /*index*/, std::vector<cl_device_partition_property> /*partition_type*/) {
    fail(CL_DEVICE_PARTITION_FAILED, "this device cannot be partitioned by affinity domain");
  }

  // Whether the device runs launches of a part of an NDRange's work-groups
  // (NDRange::group_first/group_count): a device group gives parts only to such members.
  virtual bool runs_partial_ranges() const { return true; }

  // Host memory is directly usable by the device (CPU): buffers need no device copy.
  virtual bool shares_host_memory() const { return false; }

  // Whether this device's DeviceOps::transfer copies straight from `source`'s memory (a peer
  // copy between GPUs of one vendor), no trip through host memory: the migration planner then
  // takes such a copy first.
  virtual bool copies_directly_from(const Device& /*source*/) const { return false; }

  // Makes `mem`'s memory on this device where it has none yet (nothing where the device uses
  // host memory). The scheduler calls it before it plans a command's migrations, so that an
  // allocation that fails fails the command while the buffer's residency still says where its
  // bytes are. Throws CL_MEM_OBJECT_ALLOCATION_FAILURE. Thread: any.
  virtual void make_backing(MemObject& /*mem*/) {}

  // A command buffer was finalized with `list` to run on this device: a backend that runs such
  // lists natively (DeviceOps::run_recorded) may make what it runs now (a CUDA graph), so that
  // enqueues only launch it. Failures are the backend's to remember: enqueues then run the
  // operations one by one. Thread: the application's.
  virtual void prepare_recorded(const OperationList& /*list*/) {}

  // Where this device's commands find buffer contents: kHostPlace for devices that share host
  // memory, else a place of the device's own memory, given by the platform at probe time
  // (sub-devices share their parent's).
  MemoryPlace memory_place() const { return parent_ ? parent_->memory_place() : memory_place_; }
  void set_memory_place(MemoryPlace place) { memory_place_ = place; }

  // Clears the SVM capabilities the backend reported, when the platform's SVM range cannot be
  // had on this device (svm/); the debug log says why. Thread: platform setup.
  void disable_svm(const char* why);

 protected:
  DeviceInfo info_;
  Ref<Device> parent_;
  std::vector<cl_device_partition_property> partition_type_;
  std::vector<Ref<Device>> members_;
  bool application_made_ = false;
  bool listed_as_root_ = false;

 private:
  MemoryPlace memory_place_ = kHostPlace;
  virtual std::shared_ptr<NativeQueue> create_native_queue_impl(bool out_of_order) = 0;
};

// `device` split into `parts` sub-devices of equal compute units (CL_DEVICE_PARTITION_EQUALLY
// by the most units each that still gives that many: a GPU's SM groups may leave some SMs over),
// reporting `partition_type` (empty: none). Empty, with the reason in *why, where the device cannot
// be split so. Thread: platform setup.
std::vector<Device*> split_equally(Device& device, unsigned parts, bool report_partition_type,
                                   std::string* why);

// Fills everything the compiler target decides (core/device_info.cpp): the OpenCL C versions
// and features, the extensions (the target's, cl_khr_extended_versioning, cl_khr_device_uuid),
// generic address space and work-group collective support, the atomic memory and fence
// capabilities, and compiler and linker availability. Backends append their own host-side
// extensions afterwards.
void fill_from_target(DeviceInfo& info, const compiler::Target& target);

// clGetDeviceInfo for any device (core/device_info.cpp).
void get_device_info(Device& device, cl_device_info param, size_t size, void* value,
                     size_t* size_ret);

}  // namespace manifold
