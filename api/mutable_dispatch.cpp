// cl_khr_command_buffer_mutable_dispatch (0.9.5): changing recorded ND-range commands between
// enqueues (arguments, global offset and size, local size) and querying them. An update plans
// the launch again with clEnqueueNDRangeKernel's checks (api/ndrange.h); enqueues already made
// keep what they were enqueued with (each replay copies the recorded operations).
#include <algorithm>

#include "api/common.h"
#include "api/impl.h"
#include "api/ndrange.h"
#include "core/info.h"
#include "scheduler/command_buffer.h"
#include "svm/svm_space.h"

namespace manifold::api::impl {
namespace {

// The spec: CL_INVALID_VALUE if a list is NULL and its count > 0, or not NULL and its count 0.
void check_list(const void* list, cl_uint count, const char* what) {
  check((list == nullptr) == (count == 0), CL_INVALID_VALUE, what);
}

// Work-groups are uniform when every global size is a multiple of the local size.
bool uniform(const RecordedLaunch& l) {
  if (!l.local_given || !l.global_given) return true;
  for (cl_uint d = 0; d < l.work_dim; ++d)
    if (l.local_size[d] == 0 || l.global_size[d] % l.local_size[d] != 0) return false;
  return true;
}

CommandBuffer::Update plan_update(CommandBuffer& cb, const khr::MutableDispatchConfig& c,
                                  const std::vector<CommandBuffer::Update>& earlier) {
  // The spec: CL_INVALID_MUTABLE_COMMAND_KHR if command is not a valid mutable command object
  // returned from clCommandNDRangeKernelKHR, or created from command_buffer.
  MutableCommand& m = *MutableCommand::checked(c.command);
  check(cb.owns(m) && m.type() == CL_COMMAND_NDRANGE_KERNEL, CL_INVALID_MUTABLE_COMMAND_KHR,
        "the mutable command is not an ND-range of this command-buffer");
  // The same command updated twice in one call: the later config builds on the earlier one.
  RecordedLaunch l = *cb.launch(m.node());
  for (const CommandBuffer::Update& u : earlier)
    if (u.command == &m) l = u.launch;
  const RecordedLaunch before = l;
  const cl_bitfield fields = m.updatable();
  // The spec: CL_INVALID_OPERATION if work_dim is not zero and different from the work_dim set
  // on command recording.
  check(c.work_dim == 0 || c.work_dim == l.work_dim, CL_INVALID_OPERATION,
        "work_dim differs from the recorded one");
  // The spec: CL_INVALID_OPERATION if a field is changed whose CL_MUTABLE_DISPATCH_*_KHR
  // property was not set on command recording.
  check(!c.global_work_offset || (fields & CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR),
        CL_INVALID_OPERATION, "the global offset was not recorded as mutable");
  check(!c.global_work_size || (fields & CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR), CL_INVALID_OPERATION,
        "the global size was not recorded as mutable");
  check(!c.local_work_size || (fields & CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR), CL_INVALID_OPERATION,
        "the local size was not recorded as mutable");
  check((c.num_args == 0 && c.num_svm_args == 0) || (fields & CL_MUTABLE_DISPATCH_ARGUMENTS_KHR),
        CL_INVALID_OPERATION, "the arguments were not recorded as mutable");
  check(c.num_exec_infos == 0 || (fields & CL_MUTABLE_DISPATCH_EXEC_INFO_KHR), CL_INVALID_OPERATION,
        "the exec info was not recorded as mutable");
  check_list(c.arg_list, c.num_args, "arg_list and num_args disagree");
  check_list(c.arg_svm_list, c.num_svm_args, "arg_svm_list and num_svm_args disagree");
  check_list(c.exec_info_list, c.num_exec_infos, "exec_info_list and num_exec_infos disagree");

  Kernel& kernel = *l.args->kernel;
  if (c.num_args || c.num_svm_args || c.num_exec_infos) {
    // The spec: the errors of clSetKernelArg, clSetKernelArgSVMPointer and clSetKernelExecInfo;
    // the kernel object itself is not changed.
    auto args = std::make_shared<KernelArgs>(*l.args);
    for (cl_uint i = 0; i < c.num_exec_infos; ++i) {
      const cl_mutable_dispatch_exec_info_khr& e = c.exec_info_list[i];
      switch (e.param_name) {
        case CL_KERNEL_EXEC_INFO_SVM_PTRS:
          check(e.param_value_size % sizeof(void*) == 0 && (e.param_value || !e.param_value_size),
                CL_INVALID_VALUE, "an SVM_PTRS exec info of the wrong size");
          args->svm_allocations = svm_allocations_of(
              {static_cast<void* const*>(e.param_value), e.param_value_size / sizeof(void*)},
              kernel.program().context());
          break;
        case CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM:
          // Every SVM device sees every allocation: nothing to keep beyond the check.
          check(e.param_value_size == sizeof(cl_bool) && e.param_value, CL_INVALID_VALUE,
                "an SVM_FINE_GRAIN_SYSTEM exec info of the wrong size");
          break;
        default:
          fail(CL_INVALID_VALUE, "unknown kernel exec info");
      }
    }
    for (cl_uint i = 0; i < c.num_args; ++i) {
      const cl_mutable_dispatch_arg_khr& a = c.arg_list[i];
      args->values.at(a.arg_index) =
          KernelArgs::value_of(kernel.check_arg(a.arg_index, a.arg_size, a.arg_value));
    }
    for (cl_uint i = 0; i < c.num_svm_args; ++i) {
      const cl_mutable_dispatch_arg_khr& a = c.arg_svm_list[i];
      args->values.at(a.arg_index) = KernelArgs::value_of(
          kernel.check_arg_svm(a.arg_index, a.arg_value,
                               svm_argument_allocation(a.arg_value, kernel.program().context())));
    }
    l.args = std::move(args);
  }
  for (cl_uint d = 0; d < l.work_dim; ++d) {
    if (c.global_work_offset) l.global_offset[d] = c.global_work_offset[d];
    if (c.global_work_size) l.global_size[d] = c.global_work_size[d];
    if (c.local_work_size) l.local_size[d] = c.local_work_size[d];
  }
  l.offset_given |= c.global_work_offset != nullptr;
  l.global_given |= c.global_work_size != nullptr;
  l.local_given |= c.local_work_size != nullptr;
  // The spec: the errors of clEnqueueNDRangeKernel for the new values.
  const Device& device = cb.queues()[cb.recording().node(m.node()).queue]->device();
  Operation op = ndrange_operation(device, kernel, l.work_dim,
                                   l.offset_given ? l.global_offset.data() : nullptr,
                                   l.global_given ? l.global_size.data() : nullptr,
                                   l.local_given ? l.local_size.data() : nullptr, l.args);
  // The spec: CL_INVALID_OPERATION if the values of local_work_size and/or global_work_size
  // result in a change to work-group uniformity.
  check(uniform(before) == uniform(l), CL_INVALID_OPERATION,
        "the update changes whether work-groups are uniform");
  return {&m, std::move(op), std::move(l)};
}

}  // namespace

void clUpdateMutableCommandsKHR(cl_command_buffer_khr command_buffer, cl_uint num_configs,
                                const cl_command_buffer_update_type_khr* config_types,
                                const void** configs) {
  // The spec: CL_INVALID_COMMAND_BUFFER_KHR if command_buffer is not a valid command-buffer.
  CommandBuffer& cb = *resolve<CommandBuffer>(command_buffer);
  // The spec: CL_INVALID_OPERATION if command_buffer has not been finalized.
  check(cb.finalized(), CL_INVALID_OPERATION, "the command-buffer is not finalized");
  // The spec: CL_INVALID_OPERATION if command_buffer was not created with the
  // CL_COMMAND_BUFFER_MUTABLE_KHR flag.
  check(cb.mutable_commands(), CL_INVALID_OPERATION,
        "the command-buffer was not created with CL_COMMAND_BUFFER_MUTABLE_KHR");
  // The spec: CL_INVALID_VALUE if config_types is NULL and num_configs > 0, or config_types is
  // not NULL and num_configs is 0; likewise for configs.
  check_list(config_types, num_configs, "config_types and num_configs disagree");
  check_list(configs, num_configs, "configs and num_configs disagree");
  // The spec: otherwise none of the updates are preserved: every config is checked and planned
  // before any is applied.
  std::vector<CommandBuffer::Update> updates;
  for (cl_uint i = 0; i < num_configs; ++i) {
    // The spec: CL_INVALID_VALUE if any element of config_types is not a valid
    // cl_command_buffer_update_type_khr enum, or if any element of configs is NULL.
    check(config_types[i] == CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR, CL_INVALID_VALUE,
          "unknown config type");
    check(configs[i] != nullptr, CL_INVALID_VALUE, "a config is NULL");
    updates.push_back(
        plan_update(cb, *static_cast<const khr::MutableDispatchConfig*>(configs[i]), updates));
  }
  cb.apply(std::move(updates));
}

void clGetMutableCommandInfoKHR(cl_mutable_command_khr command,
                                cl_mutable_command_info_khr param_name, size_t param_value_size,
                                void* param_value, size_t* param_value_size_ret) {
  // The spec: CL_INVALID_MUTABLE_COMMAND_KHR if command is not a valid mutable command object.
  MutableCommand& m = *MutableCommand::checked(command);
  CommandBuffer& cb = m.owner();
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  const RecordedLaunch* l = cb.launch(m.node());
  // Three values per dimension of the launch.
  auto sizes = [&](const std::array<size_t, 3>& v) {
    return out.bytes(v.data(), l->work_dim * sizeof(size_t));
  };
  switch (param_name) {
    case CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR:
      return out.value(cb.queues()[cb.recording().node(m.node()).queue]->handle());
    case CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR:
      return out.value(cb.handle());
    case CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR:
      return out.value(m.type());
    case CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR:
      return out.array(m.properties());
    case CL_MUTABLE_DISPATCH_KERNEL_KHR:
      return out.value(l->args->kernel->handle());
    case CL_MUTABLE_DISPATCH_DIMENSIONS_KHR:
      return out.value(l->work_dim);
    case CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR:
      return sizes(l->global_offset);
    case CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR:
      return sizes(l->global_size);
    case CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR:
      return sizes(l->local_size);
    default:
      // The spec: CL_INVALID_VALUE if param_name is not one of the supported values.
      unknown_param("mutable-command");
  }
}

}  // namespace manifold::api::impl
