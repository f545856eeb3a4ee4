#include "core/kernel.h"

#include <cstring>

namespace manifold {

using compiler::ArgKind;

Kernel::Kernel(Ref<Program> program, compiler::KernelInfo info)
    : program_(std::move(program)), info_(std::move(info)), args_(info_.args.size()) {
  program_->kernel_attached();
}

Kernel::Kernel(const Kernel& source)
    : ApiObject(), program_(source.program_), info_(source.info_), launch_(source.launch_) {
  std::lock_guard lock(source.mutex_);
  args_ = source.args_;
  program_->kernel_attached();
}

Kernel::~Kernel() { program_->kernel_detached(); }

void Kernel::set_arg(cl_uint index, size_t size, const void* value) {
  check(index < info_.args.size(), CL_INVALID_ARG_INDEX, "argument index out of range");
  const compiler::KernelArg& arg = info_.args[index];
  KernelArgSetting v;
  v.set = true;
  switch (arg.kind) {
    case ArgKind::Local:
      // The spec: a __local argument takes a size and a NULL value.
      check(value == nullptr, CL_INVALID_ARG_VALUE, "a __local argument's value must be NULL");
      check(size != 0, CL_INVALID_ARG_SIZE, "a __local argument needs a non-zero size");
      v.local_size = size;
      break;
    case ArgKind::Buffer: {
      check(size == sizeof(cl_mem), CL_INVALID_ARG_SIZE,
            "a buffer argument's size must be sizeof(cl_mem)");
      cl_mem mem = value ? *static_cast<const cl_mem*>(value) : nullptr;
      if (mem) {
        MemObject* m = nullptr;
        try {
          m = resolve<MemObject>(mem);
        } catch (const Error&) {
          fail(CL_INVALID_MEM_OBJECT, "the argument is not a valid buffer");
        }
        check(&m->context() == &program_->context(), CL_INVALID_MEM_OBJECT,
              "the buffer belongs to another context");
        v.buffer = m;
      }
      break;
    }
    case ArgKind::Sampler: {
      check(size == sizeof(cl_sampler), CL_INVALID_ARG_SIZE,
            "a sampler argument's size must be sizeof(cl_sampler)");
      check(value != nullptr, CL_INVALID_ARG_VALUE, "a sampler argument needs a value");
      Sampler* s = nullptr;
      try {
        s = resolve<Sampler>(*static_cast<const cl_sampler*>(value));
      } catch (const Error&) {
        fail(CL_INVALID_SAMPLER, "the argument is not a valid sampler");
      }
      v.sampler = s;
      break;
    }
    case ArgKind::Image:
      fail(CL_INVALID_MEM_OBJECT, "image arguments are not supported by this device");
    case ArgKind::Value:
      check(value != nullptr, CL_INVALID_ARG_VALUE, "a by-value argument needs a value");
      check(size == arg.size, CL_INVALID_ARG_SIZE, "the size does not match the argument's type");
      v.bytes.assign(static_cast<const uint8_t*>(value), static_cast<const uint8_t*>(value) + size);
      break;
  }
  std::lock_guard lock(mutex_);
  args_[index] = std::move(v);
}

void Kernel::set_arg_svm(cl_uint index, const void* pointer) {
  check(index < info_.args.size(), CL_INVALID_ARG_INDEX, "argument index out of range");
  check(info_.args[index].kind == ArgKind::Buffer, CL_INVALID_ARG_VALUE,
        "an SVM pointer can only be set for a pointer argument");
  KernelArgSetting v;
  v.set = true;
  v.svm_pointer = const_cast<void*>(pointer);
  std::lock_guard lock(mutex_);
  args_[index] = std::move(v);
}

size_t Kernel::local_arg_bytes() const {
  std::lock_guard lock(mutex_);
  size_t total = 0;
  for (const KernelArgSetting& a : args_) total += a.local_size;
  return total;
}

std::vector<KernelArgValue> Kernel::snapshot_args() const {
  std::lock_guard lock(mutex_);
  std::vector<KernelArgValue> out(args_.size());
  for (size_t i = 0; i < args_.size(); ++i) {
    const KernelArgSetting& a = args_[i];
    check(a.set, CL_INVALID_KERNEL_ARGS, "not every kernel argument has been set");
    KernelArgValue& v = out[i];
    v.set = true;
    v.bytes = a.bytes;
    v.buffer = Ref<MemObject>(a.buffer);
    v.local_size = a.local_size;
    v.sampler = Ref<Sampler>(a.sampler);
    v.svm_pointer = a.svm_pointer;
  }
  return out;
}

}  // namespace manifold
