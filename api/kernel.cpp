// Kernel entry points: creation, arguments and queries (the enqueueing of kernels:
// api/kernel_enqueue.cpp).
#include "core/kernel.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "api/common.h"
#include "api/impl.h"
#include "api/kernel_on_device.h"
#include "core/info.h"
#include "core/memory.h"
#include "core/program.h"
#include "scheduler/groups/balancer.h"
#include "scheduler/groups/group_device.h"
#include "svm/svm_space.h"

namespace manifold::api::impl {

bool device_has_svm(const DeviceInfo& info) { return info.svm_capabilities != 0; }

const KernelLaunchInfo* launch_for(const Kernel& kernel, const Device& device) {
  for (const Device* d = &device; d; d = d->parent())
    for (const KernelLaunchInfo& l : kernel.launch_info())
      if (l.device == d) return &l;
  return nullptr;
}

bool has_reqd_size(const compiler::KernelInfo& info) { return info.reqd_work_group_size[0] != 0; }

// CL_KERNEL_WORK_GROUP_SIZE: the device's limit, or the size the source requires.
size_t kernel_work_group_size(const compiler::KernelInfo& info, const DeviceInfo& dev) {
  const size_t limit = info.max_work_group_size
                           ? std::min(info.max_work_group_size, dev.max_work_group_size)
                           : dev.max_work_group_size;
  if (!has_reqd_size(info)) return limit;
  const size_t* r = info.reqd_work_group_size;
  return std::min(limit, r[0] * std::max<size_t>(r[1], 1) * std::max<size_t>(r[2], 1));
}

// The largest value representable by size_t on the device.
size_t device_size_max(const DeviceInfo& dev) {
  return dev.address_bits == 32 ? size_t{0xFFFFFFFFu} : std::numeric_limits<size_t>::max();
}

namespace {

using Executables = std::vector<std::pair<Device*, DeviceBuild>>;

// Kernels with the same name must have the same signature on every device (the spec:
// CL_INVALID_KERNEL_DEFINITION otherwise).
bool same_definition(const compiler::KernelInfo& a, const compiler::KernelInfo& b) {
  if (a.args.size() != b.args.size()) return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (a.args[i].kind != b.args[i].kind || a.args[i].size != b.args[i].size) return false;
  return true;
}

enum class Definition { Missing, Inconsistent, Found };

// The launch data of one device's build of a kernel.
KernelLaunchInfo launch_of(const Program& program, Device* device, const DeviceBuild& build,
                           const compiler::KernelInfo& info) {
  KernelLaunchInfo l;
  l.device = device;
  l.loaded = build.loaded;
  l.info = info;
  if (build.loaded) {
    build.loaded->refine_kernel_info(l.info);
    l.handle = build.loaded->kernel_handle(info.name);
  }
  // Non-uniform work-groups need the device's support and build options that allow them;
  // a linked program also needs every input to allow them.
  if (program.origin() == Program::Origin::Linked)
    l.non_uniform_groups =
        program.inputs_allow_non_uniform() && options_allow_non_uniform(build.options, true);
  else
    l.non_uniform_groups =
        options_allow_non_uniform(build.options, program.origin() == Program::Origin::IL);
  l.non_uniform_groups = l.non_uniform_groups && device->info().non_uniform_work_group_support;
  return l;
}

const compiler::KernelInfo* find_kernel(const DeviceBuild& build, std::string_view name) {
  auto it = std::find_if(build.kernels.begin(), build.kernels.end(),
                         [&](const compiler::KernelInfo& k) { return k.name == name; });
  return it == build.kernels.end() ? nullptr : &*it;
}

// A device group's launch data: each member's, and limits that hold on every member.
bool add_member_launches(const Program& program, Device& group, const DeviceBuild& build,
                         std::string_view name, KernelLaunchInfo& l) {
  for (size_t m = 0; m < build.members.size() && m < group.members().size(); ++m) {
    const compiler::KernelInfo* info = find_kernel(build.members[m], name);
    if (!info || !same_definition(l.info, *info)) return false;
    KernelLaunchInfo member = launch_of(program, group.members()[m].get(), build.members[m], *info);
    const size_t limit = member.info.max_work_group_size;
    if (limit && (!l.info.max_work_group_size || limit < l.info.max_work_group_size))
      l.info.max_work_group_size = limit;
    l.info.local_mem_size = std::max(l.info.local_mem_size, member.info.local_mem_size);
    l.info.private_mem_size = std::max(l.info.private_mem_size, member.info.private_mem_size);
    l.non_uniform_groups = l.non_uniform_groups && member.non_uniform_groups;
    l.members.push_back(std::move(member));
  }
  return l.members.size() == group.members().size();
}

// Gathers the per-device launch data of kernel `name` from the program's executables.
Definition collect_kernel(const Program& program, const Executables& exes, std::string_view name,
                          std::vector<KernelLaunchInfo>* launch) {
  size_t found = 0;
  for (const auto& [device, build] : exes) {
    const compiler::KernelInfo* info = find_kernel(build, name);
    if (!info) continue;
    if (!launch->empty() && !same_definition(launch->front().info, *info))
      return Definition::Inconsistent;
    KernelLaunchInfo l = launch_of(program, device, build, *info);
    if (device->is_group() && !add_member_launches(program, *device, build, name, l))
      return Definition::Inconsistent;
    launch->push_back(std::move(l));
    ++found;
  }
  if (found == 0) return Definition::Missing;
  return found == exes.size() ? Definition::Found : Definition::Inconsistent;
}

Kernel* make_kernel(Program& program, std::vector<KernelLaunchInfo> launch) {
  Kernel* k = make_api_object<Kernel>(Ref<Program>(&program), launch.front().info);
  k->set_launch_info(std::move(launch));
  return k;
}

// The device a clGetKernel*Info query is about. The spec: device can be NULL if the kernel is
// associated with a single device; CL_INVALID_DEVICE if device is not associated with kernel
// or is NULL with several devices.
const Device& query_device(const Kernel& kernel, cl_device_id device) {
  const Program& p = kernel.program();
  if (!device) {
    check(p.devices().size() == 1, CL_INVALID_DEVICE,
          "device is NULL but the kernel is associated with several devices");
    return *p.devices().front();
  }
  Device* d = resolve<Device>(device);
  check(p.context().has_device(d), CL_INVALID_DEVICE,
        "the device is not associated with the kernel");
  return *d;
}

const compiler::KernelInfo& info_for(const Kernel& kernel, const Device& device) {
  const KernelLaunchInfo* l = launch_for(kernel, device);
  return l ? l->info : kernel.info();
}

}  // namespace

// ---- Creation ----

cl_kernel clCreateKernel(cl_program program, const char* kernel_name) {
  Program& p = *resolve<Program>(program);
  // The spec: CL_INVALID_VALUE if kernel_name is NULL.
  check(kernel_name != nullptr, CL_INVALID_VALUE, "kernel_name is NULL");
  // The spec: CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built executable.
  const Executables exes = p.executables();
  check(!exes.empty(), CL_INVALID_PROGRAM_EXECUTABLE, "the program has no executable");
  std::vector<KernelLaunchInfo> launch;
  switch (collect_kernel(p, exes, kernel_name, &launch)) {
    case Definition::Missing:
      // The spec: CL_INVALID_KERNEL_NAME if kernel_name is not found in program.
      fail(CL_INVALID_KERNEL_NAME, std::string("no kernel named ") + kernel_name);
    case Definition::Inconsistent:
      // The spec: CL_INVALID_KERNEL_DEFINITION if the function definition is not the same
      // for all devices for which the program executable has been built.
      fail(CL_INVALID_KERNEL_DEFINITION, "the kernel differs between the program's devices");
    case Definition::Found:
      break;
  }
  return make_kernel(p, std::move(launch))->handle();
}

void clCreateKernelsInProgram(cl_program program, cl_uint num_kernels, cl_kernel* kernels,
                              cl_uint* num_kernels_ret) {
  Program& p = *resolve<Program>(program);
  // The spec: CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built executable for
  // any device in program.
  const Executables exes = p.executables();
  check(!exes.empty(), CL_INVALID_PROGRAM_EXECUTABLE, "the program has no executable");
  // Kernel objects are not created for kernels whose definition differs between devices.
  std::vector<std::vector<KernelLaunchInfo>> found;
  for (const compiler::KernelInfo& k : exes.front().second.kernels) {
    std::vector<KernelLaunchInfo> launch;
    if (collect_kernel(p, exes, k.name, &launch) == Definition::Found)
      found.push_back(std::move(launch));
  }
  // The spec: CL_INVALID_VALUE if kernels is not NULL and num_kernels is less than the number
  // of kernels in program.
  check(!kernels || num_kernels >= found.size(), CL_INVALID_VALUE,
        "num_kernels is smaller than the number of kernels");
  if (kernels) {
    std::vector<Kernel*> made;
    try {
      for (auto& launch : found) made.push_back(make_kernel(p, std::move(launch)));
    } catch (...) {
      for (Kernel* k : made) k->release_api();
      throw;
    }
    for (size_t i = 0; i < made.size(); ++i) kernels[i] = made[i]->handle();
  }
  if (num_kernels_ret) *num_kernels_ret = static_cast<cl_uint>(found.size());
}

void clRetainKernel(cl_kernel kernel) { resolve<Kernel>(kernel)->retain_api(); }
void clReleaseKernel(cl_kernel kernel) { resolve<Kernel>(kernel)->release_api(); }

cl_kernel clCloneKernel(cl_kernel source_kernel) {
  Kernel& k = *resolve<Kernel>(source_kernel);
  // A shallow copy: arguments, launch data, the program (with one more attached kernel).
  return make_api_object<Kernel>(k)->handle();
}

// ---- Arguments ----

void clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void* arg_value) {
  resolve<Kernel>(kernel)->set_arg(arg_index, arg_size, arg_value);
}

void clSetKernelArgSVMPointer(cl_kernel kernel, cl_uint arg_index, const void* arg_value) {
  Kernel& k = *resolve<Kernel>(kernel);
  // The 3.0 spec: CL_INVALID_OPERATION if no devices in the context associated with kernel
  // support SVM.
  check(k.program().context().any_device(device_has_svm), CL_INVALID_OPERATION,
        "no device in the kernel's context supports SVM");
  k.set_arg_svm(arg_index, arg_value, svm_argument_allocation(arg_value, k.program().context()));
}

void clSetKernelExecInfo(cl_kernel kernel, cl_kernel_exec_info param_name, size_t param_value_size,
                         const void* param_value) {
  Kernel& k = *resolve<Kernel>(kernel);
  const Context& c = k.program().context();
  // The 3.0 spec: CL_INVALID_OPERATION if no devices in the context associated with kernel
  // support SVM.
  check(c.any_device(device_has_svm), CL_INVALID_OPERATION,
        "no device in the kernel's context supports SVM");
  // The spec: CL_INVALID_VALUE if param_name is not valid, if param_value is NULL or if the
  // size specified by param_value_size is not valid.
  // (An empty SVM_PTRS list, size 0 and NULL, unsets the pointers set before.)
  check(param_value != nullptr || (param_name == CL_KERNEL_EXEC_INFO_SVM_PTRS && !param_value_size),
        CL_INVALID_VALUE, "param_value is NULL");
  switch (param_name) {
    case CL_KERNEL_EXEC_INFO_SVM_PTRS:
      check(param_value_size % sizeof(void*) == 0, CL_INVALID_VALUE,
            "param_value_size is not a multiple of sizeof(void*)");
      // The allocations these pointers lie in become current wherever the kernel runs.
      k.set_svm_pointers(svm_allocations_of(
          {static_cast<void* const*>(param_value), param_value_size / sizeof(void*)}, c));
      break;
    case CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM: {
      check(param_value_size == sizeof(cl_bool), CL_INVALID_VALUE,
            "param_value_size is not sizeof(cl_bool)");
      // The spec: CL_INVALID_OPERATION if the value is CL_TRUE but no devices in the context
      // support fine-grain system SVM allocations.
      if (*static_cast<const cl_bool*>(param_value))
        check(c.any_device([](const DeviceInfo& i) {
          return (i.svm_capabilities & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM) != 0;
        }),
              CL_INVALID_OPERATION, "no device supports fine-grain system SVM");
      break;
    }
    default:
      fail(CL_INVALID_VALUE, "unknown kernel execution info");
  }
  // Every device with SVM sees the whole SVM range, and the CPU device every host pointer: the
  // system-SVM hint needs no bookkeeping beyond validation.
}

// ---- Queries ----

void clGetKernelInfo(cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size,
                     void* param_value, size_t* param_value_size_ret) {
  Kernel& k = *resolve<Kernel>(kernel);
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_KERNEL_FUNCTION_NAME:
      return out.string(k.name());
    case CL_KERNEL_NUM_ARGS:
      return out.value(static_cast<cl_uint>(k.info().args.size()));
    case CL_KERNEL_REFERENCE_COUNT:
      return out.value(k.api_reference_count());
    case CL_KERNEL_CONTEXT:
      return out.value(k.program().context().handle());
    case CL_KERNEL_PROGRAM:
      return out.value(k.program().handle());
    case CL_KERNEL_ATTRIBUTES:
      return out.string(k.info().attributes);
    default:
      unknown_param("kernel");
  }
}

void clGetKernelArgInfo(cl_kernel kernel, cl_uint arg_indx, cl_kernel_arg_info param_name,
                        size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  Kernel& k = *resolve<Kernel>(kernel);
  const compiler::KernelInfo& info = k.info();
  // The spec: CL_INVALID_ARG_INDEX if arg_indx is not a valid argument index.
  check(arg_indx < info.args.size(), CL_INVALID_ARG_INDEX, "argument index out of range");
  // The spec: CL_KERNEL_ARG_INFO_NOT_AVAILABLE if the argument information is not available
  // (the program was not built from source with -cl-kernel-arg-info).
  check(info.arg_info_available, CL_KERNEL_ARG_INFO_NOT_AVAILABLE,
        "argument information is not available (build with -cl-kernel-arg-info)");
  const compiler::KernelArg& arg = info.args[arg_indx];
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_KERNEL_ARG_ADDRESS_QUALIFIER:
      return out.value(arg.address);
    case CL_KERNEL_ARG_ACCESS_QUALIFIER:
      return out.value(arg.access);
    case CL_KERNEL_ARG_TYPE_NAME:
      return out.string(arg.type_name);
    case CL_KERNEL_ARG_TYPE_QUALIFIER:
      return out.value(arg.type_qualifier);
    case CL_KERNEL_ARG_NAME:
      return out.string(arg.name);
    default:
      unknown_param("kernel argument");
  }
}

void clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                              cl_kernel_work_group_info param_name, size_t param_value_size,
                              void* param_value, size_t* param_value_size_ret) {
  Kernel& k = *resolve<Kernel>(kernel);
  const Device& d = query_device(k, device);
  const DeviceInfo& dev = d.info();
  const compiler::KernelInfo& info = info_for(k, d);
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_KERNEL_GLOBAL_WORK_SIZE:
      // The spec: CL_INVALID_VALUE if device is not a custom device and kernel is not a
      // built-in kernel.
      check(dev.type & CL_DEVICE_TYPE_CUSTOM, CL_INVALID_VALUE,
            "CL_KERNEL_GLOBAL_WORK_SIZE is only defined for custom devices and built-in kernels");
      {
        const size_t max = device_size_max(dev);
        const size_t sizes[3] = {max, max, max};
        return out.bytes(sizes, sizeof(sizes));
      }
    case CL_KERNEL_WORK_GROUP_SIZE:
      return out.value(kernel_work_group_size(info, dev));
    case CL_KERNEL_COMPILE_WORK_GROUP_SIZE:
      return out.bytes(info.reqd_work_group_size, sizeof(info.reqd_work_group_size));
    case CL_KERNEL_LOCAL_MEM_SIZE:
      // Static __local variables plus the __local arguments set so far (unset ones count 0).
      return out.value<cl_ulong>(info.local_mem_size + k.local_arg_bytes());
    case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
      return out.value(std::max<size_t>(dev.preferred_work_group_size_multiple, 1));
    case CL_KERNEL_PRIVATE_MEM_SIZE:
      return out.value<cl_ulong>(info.private_mem_size);
    case CL_KERNEL_GROUP_SPLIT_MFLD: {
      const auto* group = dynamic_cast<const GroupDevice*>(&d);
      check(group != nullptr, CL_INVALID_VALUE, "CL_KERNEL_GROUP_SPLIT_MFLD needs a device group");
      std::vector<cl_float> split;
      for (double f : group->balancer().last_split(k.name())) split.push_back(cl_float(f));
      return out.array(split);
    }
    default:
      unknown_param("kernel work-group");
  }
}

void clGetKernelSubGroupInfo(cl_kernel kernel, cl_device_id device,
                             cl_kernel_sub_group_info param_name, size_t input_value_size,
                             const void* input_value, size_t param_value_size, void* param_value,
                             size_t* param_value_size_ret) {
  Kernel& k = *resolve<Kernel>(kernel);
  const Device& d = query_device(k, device);
  const DeviceInfo& dev = d.info();
  // The 3.0 spec: CL_INVALID_OPERATION if device does not support subgroups.
  check(dev.max_num_sub_groups != 0, CL_INVALID_OPERATION, "the device does not support subgroups");
  const compiler::KernelInfo& info = info_for(k, d);
  // A work-group is cut into sub-groups of the device's width along its linear index (one SIMD
  // register of work-items on the CPU, a warp on CUDA), the last one partial.
  const size_t width = dev.sub_group_size;
  const size_t kernel_max = kernel_work_group_size(info, dev);
  // The local size given as input: 1 to 3 size_t values (CL_INVALID_VALUE otherwise).
  auto local_items = [&]() {
    check(input_value != nullptr, CL_INVALID_VALUE, "input_value is NULL");
    check(input_value_size % sizeof(size_t) == 0 && input_value_size >= sizeof(size_t) &&
              input_value_size <= 3 * sizeof(size_t),
          CL_INVALID_VALUE, "input_value_size does not describe 1 to 3 local sizes");
    const auto* sizes = static_cast<const size_t*>(input_value);
    size_t items = 1;
    for (size_t i = 0; i < input_value_size / sizeof(size_t); ++i) items *= sizes[i];
    return items;
  };
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE:
      return out.value<size_t>(std::min(width, local_items()));
    case CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE: {
      const size_t items = local_items();
      return out.value<size_t>((items + width - 1) / width);
    }
    case CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT: {
      check(input_value != nullptr && input_value_size == sizeof(size_t), CL_INVALID_VALUE,
            "the input must be one size_t sub-group count");
      const size_t dims = param_value_size / sizeof(size_t);
      const bool dims_valid = param_value_size % sizeof(size_t) == 0 && dims >= 1 && dims <= 3;
      if (param_value)
        check(dims_valid, CL_INVALID_VALUE,
              "param_value_size does not describe 1 to 3 local sizes");
      const size_t count = *static_cast<const size_t*>(input_value);
      // One dimension carries the work-items (the last sub-group partial where the kernel's
      // limit cuts it); 0 everywhere when no size fits.
      const size_t items = count > kernel_max ? 0 : std::min(count * width, kernel_max);
      size_t result[3] = {items, 1, 1};
      if (count == 0 || (items + width - 1) / width != count || items > dev.max_work_item_sizes[0])
        result[0] = result[1] = result[2] = 0;
      const size_t n = dims_valid ? dims : 3;
      return out.bytes(result, n * sizeof(size_t));
    }
    case CL_KERNEL_MAX_NUM_SUB_GROUPS:
      return out.value<size_t>((kernel_max + width - 1) / width);
    case CL_KERNEL_COMPILE_NUM_SUB_GROUPS:
      // The compiler reports no required sub-group count.
      return out.value<size_t>(0);
    default:
      unknown_param("kernel sub-group");
  }
}

void clGetKernelSubGroupInfoKHR(cl_kernel in_kernel, cl_device_id in_device,
                                cl_kernel_sub_group_info param_name, size_t input_value_size,
                                const void* input_value, size_t param_value_size, void* param_value,
                                size_t* param_value_size_ret) {
  impl::clGetKernelSubGroupInfo(in_kernel, in_device, param_name, input_value_size, input_value,
                                param_value_size, param_value, param_value_size_ret);
}

}  // namespace manifold::api::impl
