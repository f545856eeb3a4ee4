// A program: its source or binaries, and one build per device of its context.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/compiler.h"
#include "core/backend.h"
#include "core/context.h"
#include "core/object.h"

namespace manifold {

// The state of the program for one device.
struct DeviceBuild {
  cl_build_status status = CL_BUILD_NONE;
  std::string options;
  std::string log;
  compiler::BinaryType type = compiler::BinaryType::None;
  std::vector<uint8_t> binary;
  std::vector<compiler::KernelInfo> kernels;
  std::shared_ptr<const LoadedProgram> loaded;  // the device's native form, once executable
  // A device group's: each member's build, in the group's order (the fields above are the first
  // member's, with every member's log).
  std::vector<DeviceBuild> members;
};

// Whether two targets build the same programs (devices with equal targets share one build).
bool same_target(const compiler::Target& a, const compiler::Target& b);
// A device group's build made of its members' builds (DeviceBuild::members).
DeviceBuild combine_member_builds(const Device& group, std::vector<DeviceBuild> members);

// Whether build options allow non-uniform work-groups: OpenCL C 2.0 or later (-cl-std=CL2.0 or
// CL3.0) and no -cl-uniform-work-group-size (the spec, clEnqueueNDRangeKernel). For programs from
// IL only the second condition applies (`from_il`).
bool options_allow_non_uniform(std::string_view options, bool from_il = false);

// Runs an asynchronous build step (clBuildProgram and friends with pfn_notify) on a thread
// owned by the process: finished threads are joined when the next one starts, and the rest
// when the library is unloaded or the process exits, so none outlives the code it runs.
void run_build_thread(std::function<void()> work);

class Program : public ApiObject<_cl_program, ObjectKind::Program, CL_INVALID_PROGRAM> {
 public:
  enum class Origin { Source, Binary, IL, BuiltIn, Linked };

  Program(Ref<Context> context, Origin origin, std::string source);
  // From binaries, one per device (already validated by the caller).
  Program(Ref<Context> context, const std::vector<Device*>& devices,
          const std::vector<std::vector<uint8_t>>& binaries);

  Context& context() const { return *context_; }
  Origin origin() const { return origin_; }
  const std::string& source() const { return source_; }
  // The IL of a program from IL (its bytes are kept in source_).
  std::span<const uint8_t> il() const {
    return {reinterpret_cast<const uint8_t*>(source_.data()), source_.size()};
  }
  // clSetProgramSpecializationConstant: used by the builds and compiles that follow.
  void set_spec_constant(uint32_t spec_id, std::vector<uint8_t> value);
  compiler::SpecConstantValues spec_constants() const;
  const std::vector<Ref<Device>>& devices() const { return devices_; }

  // Snapshot of a device's build (copy, taken under the lock).
  DeviceBuild build_of(const Device& device) const;
  std::string last_build_options() const;

  // clBuildProgram / clCompileProgram / clLinkProgram for `devices` (empty = all). The result
  // of each device is recorded in its DeviceBuild; returns whether every device succeeded.
  // Throws CL_INVALID_OPERATION when kernels are attached or a build is running.
  bool build(const std::vector<Device*>& devices, const std::string& options);
  bool compile(const std::vector<Device*>& devices, const std::string& options,
               const std::vector<std::pair<std::string, std::string>>& headers);
  bool link(const std::vector<Device*>& devices, const std::string& options,
            const std::vector<Program*>& inputs);

  // Kernels names of the built executable (first built device).
  std::vector<compiler::KernelInfo> kernels() const;
  bool any_executable() const;
  // The devices with a loaded executable and their builds, without the binary bytes (what
  // kernel creation needs; copying binaries per kernel would be wasteful).
  std::vector<std::pair<Device*, DeviceBuild>> executables() const;
  // Whether a build, compile or link step is running (clBuildProgram with pfn_notify returns
  // before it ends).
  bool building() const;
  // Before a step runs on a build thread: the devices' build status is CL_BUILD_IN_PROGRESS
  // from now (an application polls it as soon as clCompileProgram returns: CTS compiler
  // compile_and_link_status_options_log), and the step that follows takes over. Throws
  // CL_INVALID_OPERATION when kernels are attached or a build is running.
  void reserve_step(const std::vector<Device*>& devices);

  // clLinkProgram: a linked program allows non-uniform work-groups only if every input was
  // compiled in a way that allows them (the spec, clEnqueueNDRangeKernel).
  void set_inputs_allow_non_uniform(bool allow) { inputs_allow_non_uniform_ = allow; }
  bool inputs_allow_non_uniform() const { return inputs_allow_non_uniform_; }

  void kernel_attached() { attached_kernels_.fetch_add(1); }
  void kernel_detached() { attached_kernels_.fetch_sub(1); }
  bool has_attached_kernels() const { return attached_kernels_.load() != 0; }

 private:
  // `shareable`: the step's result depends only on the device's compiler target (builds and
  // compiles from source), so devices with the same target share one result.
  // Indices in devices_ of the requested devices (all when none is named). Under mutex_.
  std::vector<size_t> step_indices(const std::vector<Device*>& requested) const;
  template <class Step>
  bool run_step(const std::vector<Device*>& devices, const std::string& options, bool shareable,
                Step step);

  Ref<Context> context_;
  const Origin origin_;
  const std::string source_;
  std::vector<Ref<Device>> devices_;
  mutable std::mutex mutex_;
  std::vector<DeviceBuild> builds_;  // parallel to devices_
  bool building_ = false;
  bool reserved_ = false;  // reserve_step() ran: the next run_step is the one it announced
  std::string last_options_;
  compiler::SpecConstantValues spec_values_;
  std::atomic<int> attached_kernels_{0};
  std::atomic<bool> inputs_allow_non_uniform_{true};
};

}  // namespace manifold
