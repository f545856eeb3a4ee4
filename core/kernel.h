// A kernel: a program's entry point and the argument values set so far. Enqueueing takes a
// snapshot of the arguments, so later clSetKernelArg calls do not affect queued launches.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "compiler/compiler.h"
#include "core/memory.h"
#include "core/object.h"
#include "core/program.h"
#include "core/sampler.h"

namespace manifold {

// One argument's value as a launch sees it: a queued command holds references to its buffers
// and sampler until it finishes.
struct KernelArgValue {
  bool set = false;
  std::vector<uint8_t> bytes;     // Value args; for buffers the (null) pointer is filled at launch
  Ref<MemObject> buffer;          // Buffer args (null: a NULL buffer)
  size_t local_size = 0;          // Local args
  Ref<Sampler> sampler;           // Sampler args
  void* svm_pointer = nullptr;    // clSetKernelArgSVMPointer
  Ref<MemObject> svm_allocation;  // the SVM allocation svm_pointer lies in (null: none)
};

// What launching the kernel on one device needs. Fixed for the kernel's lifetime: a program
// cannot be rebuilt while kernels are attached to it.
struct KernelLaunchInfo {
  const Device* device = nullptr;
  std::shared_ptr<const LoadedProgram> loaded;
  compiler::KernelInfo info;        // this device's metadata (work-group attributes, memory)
  bool non_uniform_groups = false;  // the build options and the device allow them
  const void* handle = nullptr;     // the backend's own handle of it (LoadedProgram::kernel_handle)
  // A device group's: each member's launch data, in the group's order (the fields above are the
  // first member's, with limits every member satisfies).
  std::vector<KernelLaunchInfo> members;
};

// One argument as clSetKernelArg stored it. Buffers and samplers are plain pointers: the spec
// deletes a memory object (and fires its destructor callbacks) once the application's
// references are gone and the commands using it have finished; clSetKernelArg does not retain
// it. Enqueueing a kernel whose argument was released is undefined behaviour in the spec.
struct KernelArgSetting {
  bool set = false;
  std::vector<uint8_t> bytes;
  MemObject* buffer = nullptr;
  size_t local_size = 0;
  Sampler* sampler = nullptr;
  void* svm_pointer = nullptr;
  // The allocation of clSVMAlloc the pointer lies in: held, so that memory freed with clSVMFree
  // while the kernel still names it is not reused under the kernel's feet.
  Ref<MemObject> svm_allocation;
};

struct KernelArgs;

class Kernel : public ApiObject<_cl_kernel, ObjectKind::Kernel, CL_INVALID_KERNEL> {
 public:
  Kernel(Ref<Program> program, compiler::KernelInfo info);
  Kernel(const Kernel& source);  // clCloneKernel
  ~Kernel() override;

  Program& program() const { return *program_; }
  const compiler::KernelInfo& info() const { return info_; }
  const std::string& name() const { return info_.name; }

  // Validates and stores one argument (clSetKernelArg rules).
  void set_arg(cl_uint index, size_t size, const void* value);
  // An SVM pointer argument; `allocation` is the SVM allocation it lies in (svm/svm_space.h:
  // svm_argument_allocation), null for a pointer outside the SVM range.
  void set_arg_svm(cl_uint index, const void* pointer, Ref<MemObject> allocation);
  // CL_KERNEL_EXEC_INFO_SVM_PTRS: the SVM allocations the kernel reaches through other
  // pointers (svm/svm_space.h: svm_allocations_of).
  void set_svm_pointers(std::vector<Ref<MemObject>> allocations);
  // The same checks, without storing: an argument of one recorded launch
  // (cl_khr_command_buffer_mutable_dispatch), which leaves the kernel's own settings alone.
  KernelArgSetting check_arg(cl_uint index, size_t size, const void* value) const;
  KernelArgSetting check_arg_svm(cl_uint index, const void* pointer,
                                 Ref<MemObject> allocation) const;

  // Every argument, with references to its buffers and samplers (shared with commands
  // already launched with the same settings); throws CL_INVALID_KERNEL_ARGS when one is not set.
  std::shared_ptr<const KernelArgs> snapshot_args() const;
  // The same, where arguments not set yet stay unset (`set` false): a command buffer's launch
  // whose arguments come later (mutable dispatch).
  std::shared_ptr<const KernelArgs> snapshot_set_args() const;
  // Bytes of __local memory requested through the arguments set so far.
  size_t local_arg_bytes() const;

  // Per-device launch data, set once by the creator before the handle is handed out.
  void set_launch_info(std::vector<KernelLaunchInfo> launch) { launch_ = std::move(launch); }
  const std::vector<KernelLaunchInfo>& launch_info() const { return launch_; }

 private:
  Ref<Program> program_;
  compiler::KernelInfo info_;
  // The memory object a buffer or image argument names (`what`: "buffer" or "image").
  MemObject* memory_argument(cl_mem mem, const char* what) const;

  std::vector<KernelLaunchInfo> launch_;
  mutable std::mutex mutex_;
  std::vector<KernelArgSetting> args_;
  std::vector<Ref<MemObject>> svm_allocations_;       // set_svm_pointers
  mutable std::weak_ptr<const KernelArgs> snapshot_;  // the newest one made, while in use
};

// The arguments of launches. Made once from the settings and shared, immutable, by the commands
// that launch the kernel until an argument changes: a run of launches copies no argument and
// takes no buffer or kernel reference per launch. Only commands hold it (the kernel keeps a weak
// link), so the buffers it references are released once those commands have finished.
struct KernelArgs {
  // Alive while a command launches it: the kernel, its launch data per device (and the loaded
  // programs these hold) stay valid for commands that point at them.
  Ref<Kernel> kernel;
  std::vector<KernelArgValue> values;
  std::vector<Ref<MemObject>> svm_allocations;  // CL_KERNEL_EXEC_INFO_SVM_PTRS
  // A launch's value of a setting (it holds the buffer and sampler).
  static KernelArgValue value_of(const KernelArgSetting& setting);
  bool complete() const {
    for (const KernelArgValue& v : values)
      if (!v.set) return false;
    return true;
  }
};

}  // namespace manifold
