#include "backends/remote/remote_device.h"

#include <algorithm>
#include <cstring>

#include "compiler/binary_format.h"
#include "core/error.h"

namespace manifold::remote {

namespace {

bool about_images(std::string_view name) { return name.find("image") != std::string_view::npos; }

// What a device of the server loses by being used over the network.
void keep_what_crosses(DeviceInfo& info, compiler::Target& target) {
  // Without images every image limit is 0 (the spec's rule, which the CTS checks).
  info.image_support = false;
  info.max_read_image_args = info.max_write_image_args = info.max_read_write_image_args = 0;
  info.max_samplers = 0;
  info.image2d_max_width = info.image2d_max_height = 0;
  info.image3d_max_width = info.image3d_max_height = info.image3d_max_depth = 0;
  info.image_max_buffer_size = info.image_max_array_size = 0;
  info.image_pitch_alignment = info.image_base_address_alignment = 0;
  info.svm_capabilities = 0;
  info.execution_capabilities &= ~cl_device_exec_capabilities(CL_EXEC_NATIVE_KERNEL);
  info.host_unified_memory = false;
  info.partition_max_sub_devices = 0;
  info.partition_properties.clear();
  info.partition_affinity_domain = 0;
  auto drop = [](std::vector<cl_name_version>& list, auto&& unwanted) {
    std::erase_if(list,
                  [&](const cl_name_version& v) { return unwanted(std::string_view(v.name)); });
  };
  drop(info.extensions, [](std::string_view n) {
    return about_images(n) || n == "cl_arm_import_memory" || n == "cl_khr_depth_images";
  });
  drop(info.opencl_c_features, about_images);
  target.images = false;
  std::erase_if(target.opencl_c_features, [](const std::string& f) { return about_images(f); });
  std::erase_if(target.extensions, [](const std::string& e) { return about_images(e); });
}

}  // namespace

RemoteBacking::RemoteBacking(RemoteDevice& device, uint64_t id)
    : DeviceBacking(device.memory_place()), device_(device), id_(id) {}

RemoteBacking::~RemoteBacking() {
  device_.link().send(message(Kind::ReleaseBuffer, ReleaseBuffer{id_}));
}

void RemoteBacking::read_to_host(void* host, size_t offset, size_t size) {
  std::string why;
  const cl_int status = device_.link().read_buffer(Span{id_, offset}, size, host, &why);
  if (status != CL_SUCCESS) fail(status, "reading a buffer of " + device_.info().name + ": " + why);
}

RemoteProgram::~RemoteProgram() { link_->send(message(Kind::ReleaseProgram, ReleaseProgram{id_})); }

void RemoteProgram::refine_kernel_info(compiler::KernelInfo& info) const {
  for (size_t i = 0; i < kernels_.names.size(); ++i) {
    if (kernels_.names[i] != info.name) continue;
    if (kernels_.max_work_group_size[i])
      info.max_work_group_size = size_t(kernels_.max_work_group_size[i]);
    info.local_mem_size = kernels_.local_mem_size[i];
    info.private_mem_size = kernels_.private_mem_size[i];
  }
}

RemoteDevice::RemoteDevice(std::shared_ptr<ServerLink> link, uint32_t index)
    : link_(std::move(link)), index_(index) {
  const DeviceDescription& d = link_->devices().at(index);
  info_ = d.info;
  target_ = d.target;
  runs_partial_ranges_ = d.runs_partial_ranges;
  keep_what_crosses(info_, target_);
  info_.name = link_->name() + ": " + info_.name;
  // A device of its own: not the server's own device's identity (which a local device of the
  // same machine may report too).
  for (size_t i = 0; i < link_->name().size(); ++i)
    info_.device_uuid[i % info_.device_uuid.size()] ^= uint8_t(link_->name()[i]);
  info_.device_uuid[0] ^= 0x80;
  info_.luid_valid = false;
  info_.has_pci_bus_info = false;
}

bool RemoteDevice::copies_directly_from(const Device& source) const {
  const auto* other = dynamic_cast<const RemoteDevice*>(&source);
  return other && other->link_ == link_;
}

RemoteBacking& RemoteDevice::backing(MemObject& mem) {
  DeviceBacking& b = mem.backing(memory_place(), [&]() -> std::unique_ptr<DeviceBacking> {
    const MemObject& root = mem.root();
    check(!root.svm(), CL_INVALID_OPERATION, "remote devices do not share SVM allocations");
    check(!root.imported(), CL_INVALID_OPERATION, "remote devices cannot use imported memory");
    const uint64_t id = link_->next_id(), request = link_->next_id();
    const Reply r = link_->request(
        request, message(Kind::CreateBuffer, CreateBuffer{request, id, index_, root.size()}));
    if (r.status != CL_SUCCESS)
      fail(r.status == CL_DEVICE_NOT_AVAILABLE ? r.status : CL_MEM_OBJECT_ALLOCATION_FAILURE,
           info_.name + ": " + r.message);
    return std::make_unique<RemoteBacking>(*this, id);
  });
  return static_cast<RemoteBacking&>(b);
}

Span RemoteDevice::at(MemObject& mem, size_t offset) {
  return Span{backing(mem).id(), mem.root_offset() + offset};
}

std::shared_ptr<const LoadedProgram> RemoteDevice::load_program(std::span<const uint8_t> binary,
                                                                std::string* error) {
  auto parsed = compiler::deserialize(binary, error);
  if (!parsed) return nullptr;
  const uint64_t id = link_->next_id(), request = link_->next_id();
  LoadProgram load{request, id, index_, parsed->options,
                   uint8_t(parsed->global_variable_bytes == 0)};
  std::vector<std::byte> payload;
  const Reply r = link_->request(
      request, message(Kind::LoadProgram, load, Payload::lend(binary.data(), binary.size())),
      &payload);
  if (r.status != CL_SUCCESS) {
    *error =
        info_.name + ": " + (r.message.empty() ? "the server cannot load the program" : r.message);
    return nullptr;
  }
  auto kernels = decode<ProgramKernels>(payload);
  if (!kernels || kernels->names.size() != kernels->max_work_group_size.size() ||
      kernels->names.size() != kernels->local_mem_size.size() ||
      kernels->names.size() != kernels->private_mem_size.size()) {
    *error = info_.name + ": the server's answer about the program's kernels is malformed";
    return nullptr;
  }
  // Printf goes through the target's own call (CUDA's vprintf in PTX) or the CPU's flags.
  bool uses_printf = false;
  for (const compiler::KernelExec& e : parsed->execs) uses_printf |= e.uses_printf;
  std::string not_ptx;
  if (auto ptx = compiler::nvptx_ptx_of(binary, &not_ptx))
    uses_printf |= ptx->find("vprintf") != std::string::npos;
  return std::make_shared<RemoteProgram>(link_, id, std::move(*kernels), uses_printf);
}

}  // namespace manifold::remote
