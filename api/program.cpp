// Program entry points: creation from source, binaries, IL and built-in kernels; build,
// compile and link (synchronous, or on a thread of their own when pfn_notify is given);
// program and build queries.
#include "core/program.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/common.h"
#include "api/impl.h"
#include "compiler/compiler.h"
#include "core/group_binary.h"
#include "core/info.h"
#include "core/log.h"

namespace manifold::api::impl {
namespace {

using BuildNotify = void(CL_CALLBACK*)(cl_program, void*);

// Resolves a (num_devices, device_list) pair that must name devices of `allowed`. The spec:
// CL_INVALID_VALUE if device_list is NULL and num_devices is greater than zero, or if
// device_list is not NULL and num_devices is zero; CL_INVALID_DEVICE if a listed device is not
// associated with the program (or context). An empty result means "all devices".
std::vector<Device*> resolve_device_list(cl_uint num_devices, const cl_device_id* device_list,
                                         const std::vector<Ref<Device>>& allowed) {
  check((num_devices == 0) == (device_list == nullptr), CL_INVALID_VALUE,
        "num_devices and device_list disagree");
  std::vector<Device*> devices;
  for (cl_uint i = 0; i < num_devices; ++i) {
    Device* d = resolve<Device>(device_list[i]);
    const bool known = std::any_of(allowed.begin(), allowed.end(),
                                   [d](const Ref<Device>& x) { return x.get() == d; });
    check(known, CL_INVALID_DEVICE, "a listed device is not associated with the program");
    if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
  }
  return devices;
}

// The devices a build step applies to: the list given, or every device of the program.
std::vector<Device*> selected_devices(const Program& p, const std::vector<Device*>& requested) {
  if (!requested.empty()) return requested;
  std::vector<Device*> all;
  for (const auto& d : p.devices()) all.push_back(d.get());
  return all;
}

// The spec: CL_INVALID_OPERATION if the build of a program executable for any of the devices
// listed by a previous call has not completed, or if there are kernel objects attached.
// Program::build/compile/link check this too, but an asynchronous build must fail before
// clBuildProgram returns CL_SUCCESS.
void check_not_busy(const Program& p) {
  check(!p.building(), CL_INVALID_OPERATION, "a build of this program has not completed");
  check(!p.has_attached_kernels(), CL_INVALID_OPERATION, "kernels are attached to the program");
}

std::string options_or_empty(const char* options) { return options ? options : ""; }

// Runs `step` (returns whether every device succeeded) now, or on a build thread when
// the application gave pfn_notify. The thread holds a reference to the program so that the
// application may release it before the build ends; pfn_notify is called in every case.
template <class Step>
void run_build(Program& program, const std::vector<Device*>& devices, BuildNotify pfn_notify,
               void* user_data, cl_int failure_code, const char* what, Step step) {
  if (!pfn_notify) {
    if (!step()) fail(failure_code, std::string(what) + " failed (see the build log)");
    return;
  }
  // The status reads CL_BUILD_IN_PROGRESS once this call returns, not once the thread starts.
  program.reserve_step(devices);
  Ref<Program> keep(&program);
  run_build_thread([keep, pfn_notify, user_data, what, step = std::move(step)]() mutable {
    try {
      step();
    } catch (const std::exception& e) {
      log_debug("asynchronous %s did not run: %s", what, e.what());
    }
    pfn_notify(keep->handle(), user_data);
  });
}

bool binary_type_is_linkable(compiler::BinaryType t) {
  return t == compiler::BinaryType::CompiledObject || t == compiler::BinaryType::Library;
}

cl_program_binary_type binary_type_code(compiler::BinaryType t) {
  switch (t) {
    case compiler::BinaryType::None:
      return CL_PROGRAM_BINARY_TYPE_NONE;
    case compiler::BinaryType::CompiledObject:
      return CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT;
    case compiler::BinaryType::Library:
      return CL_PROGRAM_BINARY_TYPE_LIBRARY;
    case compiler::BinaryType::Executable:
      return CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
  }
  return CL_PROGRAM_BINARY_TYPE_NONE;
}

bool device_has_il(const DeviceInfo& info) { return !info.ils.empty(); }

// Whether binary `index` is a Manifold binary `device` can load: one for its target, or for a
// device group one that suits every member (a container of the members' binaries where their
// targets differ).
bool binary_fits(const Device& device, std::span<const uint8_t> binary, cl_uint index) {
  if (device.is_group()) {
    const auto& members = device.members();
    if (!is_group_binary(binary))
      return std::all_of(members.begin(), members.end(),
                         [&](const Ref<Device>& m) { return binary_fits(*m, binary, index); });
    std::string error;
    auto parts = unbundle_member_binaries(binary, &error);
    if (parts && parts->size() != members.size())
      error = "a device group's binary for " + std::to_string(parts->size()) + " members";
    if (!parts || parts->size() != members.size()) {
      log_debug("clCreateProgramWithBinary: binary %u rejected: %s", index, error.c_str());
      return false;
    }
    for (size_t m = 0; m < members.size(); ++m)
      if (!binary_fits(*members[m], (*parts)[m], index)) return false;
    return true;
  }
  std::string error;
  auto info = compiler::inspect_binary(binary, &error);
  const std::string& triple = device.compiler_target().triple;
  if (!info) {
    log_debug("clCreateProgramWithBinary: binary %u rejected: %s", index, error.c_str());
    return false;
  }
  if (info->type == compiler::BinaryType::None ||
      (!info->triple.empty() && info->triple != triple)) {
    log_debug("clCreateProgramWithBinary: binary %u is for %s, the device is %s", index,
              info->triple.c_str(), triple.c_str());
    return false;
  }
  return true;
}

}  // namespace

// ---- Creation ----

cl_program clCreateProgramWithSource(cl_context context, cl_uint count, const char** strings,
                                     const size_t* lengths) {
  Context& c = *resolve<Context>(context);
  // The spec: CL_INVALID_VALUE if count is zero or if strings or any entry in strings is NULL.
  check(count > 0, CL_INVALID_VALUE, "count is 0");
  check(strings != nullptr, CL_INVALID_VALUE, "strings is NULL");
  std::string source;
  for (cl_uint i = 0; i < count; ++i) {
    check(strings[i] != nullptr, CL_INVALID_VALUE, "an entry of strings is NULL");
    // A length of zero (or lengths NULL) means the string is null-terminated.
    const size_t n = (lengths && lengths[i]) ? lengths[i] : std::strlen(strings[i]);
    source.append(strings[i], n);
  }
  // CL_PROGRAM_SOURCE: "the concatenation strips any nulls in the original source strings".
  std::erase(source, '\0');
  return make_api_object<Program>(Ref<Context>(&c), Program::Origin::Source, std::move(source))
      ->handle();
}

cl_program clCreateProgramWithIL(cl_context context, const void* il, size_t length) {
  Context& c = *resolve<Context>(context);
  // The 3.0 spec: CL_INVALID_OPERATION if no devices in context support intermediate language
  // programs.
  check(c.any_device(device_has_il), CL_INVALID_OPERATION,
        "no device in the context supports intermediate language programs");
  // The spec: CL_INVALID_VALUE if il is NULL or if length is zero.
  check(il != nullptr && length > 0, CL_INVALID_VALUE, "il is NULL or length is 0");
  // The spec: CL_INVALID_VALUE if the length-byte memory pointed to by il does not contain
  // well-formed intermediate language input that can be consumed by the OpenCL runtime.
  const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(il), length);
  std::string why;
  check(compiler::il_valid(bytes, &why), CL_INVALID_VALUE, why.c_str());
  return make_api_object<Program>(Ref<Context>(&c), Program::Origin::IL,
                                  std::string(bytes.begin(), bytes.end()))
      ->handle();
}

cl_program clCreateProgramWithILKHR(cl_context context, const void* il, size_t length) {
  // cl_khr_il_program: the same function as the core one.
  return clCreateProgramWithIL(context, il, length);
}

cl_program clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                     const cl_device_id* device_list, const size_t* lengths,
                                     const unsigned char** binaries, cl_int* binary_status) {
  Context& c = *resolve<Context>(context);
  // The spec: CL_INVALID_VALUE if device_list is NULL or num_devices is zero.
  check(device_list != nullptr && num_devices > 0, CL_INVALID_VALUE,
        "device_list is NULL or num_devices is 0");
  std::vector<Device*> devices;
  for (cl_uint i = 0; i < num_devices; ++i) {
    Device* d = resolve<Device>(device_list[i]);
    // The spec: CL_INVALID_DEVICE if devices listed in device_list are not in the list of
    // devices associated with context.
    check(c.has_device(d), CL_INVALID_DEVICE, "a listed device is not in the context");
    check(std::find(devices.begin(), devices.end(), d) == devices.end(), CL_INVALID_DEVICE,
          "a device is listed twice");
    devices.push_back(d);
  }
  // The spec: CL_INVALID_VALUE if lengths or binaries are NULL or if any entry in lengths[i] is
  // zero or binaries[i] is NULL; CL_INVALID_BINARY if an invalid program binary was
  // encountered for any device. binary_status reports each device.
  check(lengths != nullptr && binaries != nullptr, CL_INVALID_VALUE, "lengths or binaries is NULL");
  cl_int result = CL_SUCCESS;
  std::vector<std::vector<uint8_t>> copies(num_devices);
  for (cl_uint i = 0; i < num_devices; ++i) {
    cl_int status = CL_SUCCESS;
    if (lengths[i] == 0 || binaries[i] == nullptr) {
      status = CL_INVALID_VALUE;
    } else {
      copies[i].assign(binaries[i], binaries[i] + lengths[i]);
      if (!binary_fits(*devices[i], copies[i], i)) status = CL_INVALID_BINARY;
    }
    if (binary_status) binary_status[i] = status;
    // CL_INVALID_VALUE outranks CL_INVALID_BINARY: it is an argument error.
    if (status == CL_INVALID_VALUE || result == CL_SUCCESS) result = status;
  }
  if (result == CL_INVALID_VALUE) fail(result, "a length is 0 or a binary is NULL");
  if (result == CL_INVALID_BINARY) fail(result, "a binary is invalid for its device");
  return make_api_object<Program>(Ref<Context>(&c), devices, copies)->handle();
}

cl_program clCreateProgramWithBuiltInKernels(cl_context context, cl_uint num_devices,
                                             const cl_device_id* device_list,
                                             const char* kernel_names) {
  Context& c = *resolve<Context>(context);
  // The spec: CL_INVALID_VALUE if device_list is NULL or num_devices is zero.
  check(device_list != nullptr && num_devices > 0, CL_INVALID_VALUE,
        "device_list is NULL or num_devices is 0");
  std::vector<Device*> devices;
  for (cl_uint i = 0; i < num_devices; ++i) {
    Device* d = resolve<Device>(device_list[i]);
    // The spec: CL_INVALID_DEVICE if devices listed are not in the context.
    check(c.has_device(d), CL_INVALID_DEVICE, "a listed device is not in the context");
    devices.push_back(d);
  }
  // The spec: CL_INVALID_VALUE if kernel_names is NULL or contains a kernel name that is not
  // supported by any of the devices in device_list.
  check(kernel_names != nullptr, CL_INVALID_VALUE, "kernel_names is NULL");
  auto split = [](std::string_view list) {
    std::vector<std::string> names;
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(';', start);
      if (end == std::string_view::npos) end = list.size();
      std::string_view name = list.substr(start, end - start);
      while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
      while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
      if (!name.empty()) names.emplace_back(name);
      start = end + 1;
    }
    return names;
  };
  const std::vector<std::string> wanted = split(kernel_names);
  check(!wanted.empty(), CL_INVALID_VALUE, "kernel_names names no kernel");
  for (const std::string& name : wanted) {
    bool supported = false;
    for (Device* d : devices) {
      const auto offered = split(d->info().builtin_kernels);
      supported = supported || std::find(offered.begin(), offered.end(), name) != offered.end();
    }
    check(supported, CL_INVALID_VALUE, "a built-in kernel name is not supported by the devices");
  }
  // No backend reports built-in kernels yet, so the loop above has already failed.
  fail(CL_INVALID_VALUE, "built-in kernels are not implemented");
}

void clRetainProgram(cl_program program) { resolve<Program>(program)->retain_api(); }
void clReleaseProgram(cl_program program) { resolve<Program>(program)->release_api(); }

void clSetProgramReleaseCallback(cl_program program, BuildNotify pfn_notify, void* user_data) {
  resolve<Program>(program);
  // The 3.0 spec: CL_INVALID_OPERATION if no devices in the context associated with program
  // support destructors for program scope global variables. No Manifold device does.
  fail(CL_INVALID_OPERATION, "no device supports program scope global destructors");
}

void clSetProgramSpecializationConstant(cl_program program, cl_uint spec_id, size_t spec_size,
                                        const void* spec_value) {
  Program& p = *resolve<Program>(program);
  // The 3.0 spec: CL_INVALID_OPERATION if no devices associated with program support
  // intermediate language programs.
  const bool il = std::any_of(p.devices().begin(), p.devices().end(),
                              [](const Ref<Device>& d) { return device_has_il(d->info()); });
  check(il, CL_INVALID_OPERATION, "no device of the program supports intermediate language");
  // The spec: CL_INVALID_PROGRAM if program is not created from an intermediate format.
  check(p.origin() == Program::Origin::IL, CL_INVALID_PROGRAM,
        "the program was not created from IL");
  const std::map<uint32_t, size_t> constants = compiler::il_spec_constants(p.il());
  auto constant = constants.find(spec_id);
  // The spec: CL_INVALID_SPEC_ID if spec_id is not a valid specialization constant ID.
  check(constant != constants.end(), CL_INVALID_SPEC_ID,
        "the module has no specialization constant of this SpecId");
  // The spec: CL_INVALID_VALUE if spec_size does not match the size of the specialization
  // constant in the module, or if spec_value is NULL.
  check(spec_size == constant->second, CL_INVALID_VALUE,
        "spec_size is not the size of the specialization constant");
  check(spec_value != nullptr, CL_INVALID_VALUE, "spec_value is NULL");
  const auto* bytes = static_cast<const uint8_t*>(spec_value);
  p.set_spec_constant(spec_id, std::vector<uint8_t>(bytes, bytes + spec_size));
}

// ---- Build, compile, link ----

void clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                    const char* options, BuildNotify pfn_notify, void* user_data) {
  Program& p = *resolve<Program>(program);
  const std::vector<Device*> requested = resolve_device_list(num_devices, device_list, p.devices());
  // The spec: CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL.
  check(pfn_notify || !user_data, CL_INVALID_VALUE, "user_data without pfn_notify");
  // The spec: CL_INVALID_OPERATION if program was not created with clCreateProgramWithSource,
  // clCreateProgramWithIL or clCreateProgramWithBinary.
  check(p.origin() == Program::Origin::Source || p.origin() == Program::Origin::IL ||
            p.origin() == Program::Origin::Binary,
        CL_INVALID_OPERATION, "the program was not created from source, IL or binaries");
  const std::vector<Device*> devices = selected_devices(p, requested);
  std::string opts = options_or_empty(options);
  if (p.origin() == Program::Origin::Binary) {
    for (Device* d : devices) {
      // The spec: CL_INVALID_BINARY if program is created with clCreateProgramWithBinary and
      // devices listed in device_list do not have a valid program binary loaded.
      const DeviceBuild b = p.build_of(*d);
      check(!b.binary.empty() && b.type != compiler::BinaryType::None, CL_INVALID_BINARY,
            "a device has no valid binary loaded");
    }
    // The spec: with options NULL, a program from binaries is built as if the options were
    // the ones the binary was originally built with. Those of an executable are kept (they
    // decide e.g. non-uniform work-groups); a compiled object's compile options would mean
    // nothing to the link that builds it.
    if (!options) {
      const DeviceBuild first = p.build_of(*devices.front());
      if (first.type == compiler::BinaryType::Executable) opts = first.options;
    }
  } else {
    for (Device* d : devices)
      // The spec: CL_COMPILER_NOT_AVAILABLE if CL_DEVICE_COMPILER_AVAILABLE is CL_FALSE.
      check(d->info().compiler_available, CL_COMPILER_NOT_AVAILABLE,
            "a device has no compiler available");
  }
  // The spec: CL_INVALID_BUILD_OPTIONS if the build options specified by options are invalid.
  std::string why;
  check(compiler::options_valid(opts, compiler::OptionsKind::Build, &why), CL_INVALID_BUILD_OPTIONS,
        ("invalid build options: " + why).c_str());
  check_not_busy(p);
  run_build(p, requested, pfn_notify, user_data, CL_BUILD_PROGRAM_FAILURE, "clBuildProgram",
            [&p, requested, opts] { return p.build(requested, opts); });
}

void clCompileProgram(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                      const char* options, cl_uint num_input_headers,
                      const cl_program* input_headers, const char** header_include_names,
                      BuildNotify pfn_notify, void* user_data) {
  Program& p = *resolve<Program>(program);
  const std::vector<Device*> requested = resolve_device_list(num_devices, device_list, p.devices());
  // The spec: CL_INVALID_VALUE if num_input_headers is zero and header_include_names or
  // input_headers are not NULL, or if num_input_headers is not zero and header_include_names
  // or input_headers are NULL.
  if (num_input_headers == 0)
    check(!input_headers && !header_include_names, CL_INVALID_VALUE,
          "headers given with num_input_headers 0");
  else
    check(input_headers && header_include_names, CL_INVALID_VALUE,
          "num_input_headers is not 0 but the header arrays are NULL");
  // The spec: CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL.
  check(pfn_notify || !user_data, CL_INVALID_VALUE, "user_data without pfn_notify");
  // The spec: CL_INVALID_OPERATION if program has no source or IL available.
  check(p.origin() == Program::Origin::Source || p.origin() == Program::Origin::IL,
        CL_INVALID_OPERATION, "the program has no source or IL");
  // Embedded headers: if several entries share a name, the first one is used. Headers are
  // ignored for IL programs.
  std::vector<std::pair<std::string, std::string>> headers;
  for (cl_uint i = 0; i < num_input_headers; ++i) {
    Program& h = *resolve<Program>(input_headers[i]);
    check(header_include_names[i] != nullptr, CL_INVALID_VALUE, "a header include name is NULL");
    check(&h.context() == &p.context(), CL_INVALID_CONTEXT,
          "a header program belongs to another context");
    const std::string name = header_include_names[i];
    const bool seen =
        std::any_of(headers.begin(), headers.end(), [&](const auto& e) { return e.first == name; });
    if (!seen && p.origin() == Program::Origin::Source) headers.emplace_back(name, h.source());
  }
  const std::vector<Device*> devices = selected_devices(p, requested);
  for (Device* d : devices)
    // The spec: CL_COMPILER_NOT_AVAILABLE if CL_DEVICE_COMPILER_AVAILABLE is CL_FALSE.
    check(d->info().compiler_available, CL_COMPILER_NOT_AVAILABLE,
          "a device has no compiler available");
  // The spec: CL_INVALID_COMPILER_OPTIONS if the compiler options are invalid.
  const std::string opts = options_or_empty(options);
  std::string why;
  check(compiler::options_valid(opts, compiler::OptionsKind::Compile, &why),
        CL_INVALID_COMPILER_OPTIONS, ("invalid compiler options: " + why).c_str());
  check_not_busy(p);
  run_build(p, requested, pfn_notify, user_data, CL_COMPILE_PROGRAM_FAILURE, "clCompileProgram",
            [&p, requested, opts, headers] { return p.compile(requested, opts, headers); });
}

cl_program clLinkProgram(cl_context context, cl_uint num_devices, const cl_device_id* device_list,
                         const char* options, cl_uint num_input_programs,
                         const cl_program* input_programs, BuildNotify pfn_notify,
                         void* user_data) {
  Context& c = *resolve<Context>(context);
  const std::vector<Device*> requested = resolve_device_list(num_devices, device_list, c.devices());
  // The spec: CL_INVALID_VALUE if num_input_programs is zero or input_programs is NULL.
  check(num_input_programs > 0 && input_programs != nullptr, CL_INVALID_VALUE,
        "num_input_programs is 0 or input_programs is NULL");
  // The spec: CL_INVALID_PROGRAM if programs specified in input_programs are not valid.
  std::vector<Program*> inputs;
  for (cl_uint i = 0; i < num_input_programs; ++i) {
    Program* in = resolve<Program>(input_programs[i]);
    check(&in->context() == &c, CL_INVALID_PROGRAM, "an input program belongs to another context");
    inputs.push_back(in);
  }
  // The spec: CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL.
  check(pfn_notify || !user_data, CL_INVALID_VALUE, "user_data without pfn_notify");
  // The spec: CL_INVALID_LINKER_OPTIONS if the linker options are invalid.
  const std::string opts = options_or_empty(options);
  std::string why;
  check(compiler::options_valid(opts, compiler::OptionsKind::Link, &why), CL_INVALID_LINKER_OPTIONS,
        ("invalid linker options: " + why).c_str());
  // The spec: CL_INVALID_OPERATION if the compilation or build of an input has not completed.
  for (Program* in : inputs)
    check(!in->building(), CL_INVALID_OPERATION, "an input program is still being built");

  // Per device: link when every input holds a compiled object or library for it, skip the
  // device when none does; anything else is CL_INVALID_OPERATION.
  std::vector<Device*> candidates = requested;
  if (candidates.empty())
    for (const auto& d : c.devices()) candidates.push_back(d.get());
  std::vector<Device*> to_link;
  bool allow_non_uniform = true;
  for (Device* d : candidates) {
    size_t with_object = 0;
    for (Program* in : inputs) {
      const DeviceBuild b = in->build_of(*d);
      // A compiled object or library from clCreateProgramWithBinary is linkable as it is (its
      // build status stays CL_BUILD_NONE: CTS compiler execute_after_serialize_reload_*).
      const bool usable =
          b.status == CL_BUILD_SUCCESS || (b.status == CL_BUILD_NONE && !b.binary.empty());
      if (usable && binary_type_is_linkable(b.type)) {
        ++with_object;
        // The spec: a linked program supports only uniform work-groups if any input was
        // compiled that way (before OpenCL C 2.0, or with -cl-uniform-work-group-size).
        allow_non_uniform =
            allow_non_uniform &&
            options_allow_non_uniform(b.options, in->origin() == Program::Origin::IL);
      }
    }
    check(with_object == 0 || with_object == inputs.size(), CL_INVALID_OPERATION,
          "only some input programs hold a compiled object or library for a device");
    if (with_object == inputs.size()) to_link.push_back(d);
  }
  check(!to_link.empty(), CL_INVALID_OPERATION,
        "no input program holds a compiled object or library");
  // The spec: CL_LINKER_NOT_AVAILABLE if CL_DEVICE_LINKER_AVAILABLE is CL_FALSE.
  for (Device* d : to_link)
    check(d->info().linker_available, CL_LINKER_NOT_AVAILABLE, "a device has no linker available");

  // The new program holds the library or executable; its devices are the context's.
  Ref<Program> linked = Ref<Program>::adopt(
      make_api_object<Program>(Ref<Context>(&c), Program::Origin::Linked, std::string()));
  linked->set_inputs_allow_non_uniform(allow_non_uniform);
  // Inputs stay alive (and unchanged) until the link is done.
  std::vector<Ref<Program>> keep_inputs;
  for (Program* in : inputs) keep_inputs.emplace_back(in);
  Program& lp = *linked;
  auto step = [&lp, to_link, opts, inputs, keep_inputs] { return lp.link(to_link, opts, inputs); };
  if (!pfn_notify) {
    // Without a callback, errcode_ret reports the link's outcome. A failed link still returns
    // its program, so that the application can read the build log.
    const bool linked_ok = step();
    cl_program handle = linked.detach()->handle();
    if (!linked_ok)
      throw Error(CL_LINK_PROGRAM_FAILURE, "clLinkProgram failed (see the build log)")
          .with_handle(handle);
    return handle;
  }
  run_build(lp, to_link, pfn_notify, user_data, CL_LINK_PROGRAM_FAILURE, "clLinkProgram", step);
  return linked.detach()->handle();
}

// ---- Queries ----

void clGetProgramInfo(cl_program program, cl_program_info param_name, size_t param_value_size,
                      void* param_value, size_t* param_value_size_ret) {
  Program& p = *resolve<Program>(program);
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_PROGRAM_REFERENCE_COUNT:
      return out.value(p.api_reference_count());
    case CL_PROGRAM_CONTEXT:
      return out.value(p.context().handle());
    case CL_PROGRAM_NUM_DEVICES:
      return out.value(static_cast<cl_uint>(p.devices().size()));
    case CL_PROGRAM_DEVICES: {
      std::vector<cl_device_id> ids;
      for (const auto& d : p.devices()) ids.push_back(d->handle());
      return out.array(ids);
    }
    case CL_PROGRAM_SOURCE:
      // Programs from binaries or IL have no source: an empty string.
      return out.string(p.origin() == Program::Origin::IL ? std::string() : p.source());
    case CL_PROGRAM_IL:
      // Only programs from IL have one: otherwise param_value is unchanged and the size is 0.
      if (p.origin() == Program::Origin::IL) return out.bytes(p.il().data(), p.il().size());
      return out.bytes(nullptr, 0);
    case CL_PROGRAM_BINARY_SIZES: {
      std::vector<size_t> sizes;
      for (const auto& d : p.devices()) sizes.push_back(p.build_of(*d).binary.size());
      return out.array(sizes);
    }
    case CL_PROGRAM_BINARIES: {
      // param_value is an array of one caller-allocated pointer per device; a NULL entry
      // skips that device.
      const size_t n = p.devices().size();
      if (param_value) {
        check(param_value_size >= n * sizeof(unsigned char*), CL_INVALID_VALUE,
              "param_value_size is smaller than the answer");
        auto** targets = static_cast<unsigned char**>(param_value);
        for (size_t i = 0; i < n; ++i) {
          if (!targets[i]) continue;
          const DeviceBuild b = p.build_of(*p.devices()[i]);
          if (!b.binary.empty()) std::memcpy(targets[i], b.binary.data(), b.binary.size());
        }
      }
      if (param_value_size_ret) *param_value_size_ret = n * sizeof(unsigned char*);
      return;
    }
    case CL_PROGRAM_NUM_KERNELS:
    case CL_PROGRAM_KERNEL_NAMES: {
      // The spec: CL_INVALID_PROGRAM_EXECUTABLE if a successful program executable has not been
      // built for at least one device associated with program.
      check(p.any_executable(), CL_INVALID_PROGRAM_EXECUTABLE, "the program has no executable");
      const std::vector<compiler::KernelInfo> kernels = p.kernels();
      if (param_name == CL_PROGRAM_NUM_KERNELS) return out.value(kernels.size());
      std::string names;
      for (const auto& k : kernels) {
        if (!names.empty()) names += ';';
        names += k.name;
      }
      return out.string(names);
    }
    case CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT:
    case CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT:
      // No device supports program initialization and clean-up kernels.
      return out.value<cl_bool>(CL_FALSE);
    default:
      unknown_param("program");
  }
}

void clGetProgramBuildInfo(cl_program program, cl_device_id device,
                           cl_program_build_info param_name, size_t param_value_size,
                           void* param_value, size_t* param_value_size_ret) {
  Program& p = *resolve<Program>(program);
  Device& d = *resolve<Device>(device);
  // The spec: CL_INVALID_DEVICE if device is not in the list of devices associated with program.
  const bool known = std::any_of(p.devices().begin(), p.devices().end(),
                                 [&](const Ref<Device>& x) { return x.get() == &d; });
  check(known, CL_INVALID_DEVICE, "the device is not associated with the program");
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_PROGRAM_BUILD_STATUS:
      return out.value<cl_build_status>(p.build_of(d).status);
    case CL_PROGRAM_BUILD_OPTIONS: {
      const DeviceBuild b = p.build_of(d);
      return out.string(b.status == CL_BUILD_NONE ? std::string() : b.options);
    }
    case CL_PROGRAM_BUILD_LOG: {
      const DeviceBuild b = p.build_of(d);
      return out.string(b.status == CL_BUILD_NONE ? std::string() : b.log);
    }
    case CL_PROGRAM_BINARY_TYPE:
      return out.value(binary_type_code(p.build_of(d).type));
    case CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE: {
      // The spec: the total amount of storage, in bytes, used by program variables in the
      // global address space (CTS basic progvar_*).
      const DeviceBuild b = p.build_of(d);
      return out.value<size_t>(
          b.status == CL_BUILD_SUCCESS ? compiler::global_variables_size(b.binary) : 0);
    }
    default:
      unknown_param("program build");
  }
}

}  // namespace manifold::api::impl
