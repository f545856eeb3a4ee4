#include "core/kernel.h"

#include <algorithm>
#include <cstring>

namespace manifold {

using compiler::ArgKind;

namespace {

// The image type an image argument's type name asks for; 0 when not known.
cl_mem_object_type image_type_of(const std::string& type_name) {
  std::string t = type_name;
  for (const char* q : {"__read_only ", "__write_only ", "__read_write ", "read_only ",
                        "write_only ", "read_write "})
    if (t.rfind(q, 0) == 0) t = t.substr(std::strlen(q));
  if (t == "image1d_t") return CL_MEM_OBJECT_IMAGE1D;
  if (t == "image1d_buffer_t") return CL_MEM_OBJECT_IMAGE1D_BUFFER;
  if (t == "image1d_array_t") return CL_MEM_OBJECT_IMAGE1D_ARRAY;
  if (t == "image2d_t" || t == "image2d_depth_t") return CL_MEM_OBJECT_IMAGE2D;
  if (t == "image2d_array_t" || t == "image2d_array_depth_t") return CL_MEM_OBJECT_IMAGE2D_ARRAY;
  if (t == "image3d_t") return CL_MEM_OBJECT_IMAGE3D;
  return 0;
}

}  // namespace

Kernel::Kernel(Ref<Program> program, compiler::KernelInfo info)
    : program_(std::move(program)), info_(std::move(info)), args_(info_.args.size()) {
  program_->kernel_attached();
}

Kernel::Kernel(const Kernel& source)
    : ApiObject(), program_(source.program_), info_(source.info_), launch_(source.launch_) {
  std::lock_guard lock(source.mutex_);
  args_ = source.args_;
  svm_allocations_ = source.svm_allocations_;
  program_->kernel_attached();
}

Kernel::~Kernel() { program_->kernel_detached(); }

MemObject* Kernel::memory_argument(cl_mem mem, const char* what) const {
  // The spec: CL_INVALID_MEM_OBJECT if the argument is a memory object and arg_value is not a
  // valid memory object (of the kernel's context).
  MemObject* m = nullptr;
  try {
    m = resolve<MemObject>(mem);
  } catch (const Error&) {
    fail(CL_INVALID_MEM_OBJECT, std::string("the argument is not a valid ") + what);
  }
  if (&m->context() != &program_->context())
    fail(CL_INVALID_MEM_OBJECT, std::string("the ") + what + " belongs to another context");
  return m;
}

void Kernel::set_arg(cl_uint index, size_t size, const void* value) {
  KernelArgSetting v = check_arg(index, size, value);
  std::lock_guard lock(mutex_);
  args_[index] = std::move(v);
  snapshot_.reset();
}

KernelArgSetting Kernel::check_arg(cl_uint index, size_t size, const void* value) const {
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
        MemObject* m = memory_argument(mem, "buffer");
        check(m->type() == CL_MEM_OBJECT_BUFFER, CL_INVALID_MEM_OBJECT,
              "a pointer argument needs a buffer, not an image");
        v.buffer = m;
      }
      break;
    }
    case ArgKind::Sampler: {
      check(size == sizeof(cl_sampler), CL_INVALID_ARG_SIZE,
            "a sampler argument's size must be sizeof(cl_sampler)");
      // The spec: CL_INVALID_SAMPLER for an argument declared to be of type sampler_t when the
      // specified arg_value is not a valid sampler object (a NULL arg_value included: CTS api).
      check(value != nullptr, CL_INVALID_SAMPLER, "a sampler argument needs a sampler");
      Sampler* s = nullptr;
      try {
        s = resolve<Sampler>(*static_cast<const cl_sampler*>(value));
      } catch (const Error&) {
        fail(CL_INVALID_SAMPLER, "the argument is not a valid sampler");
      }
      v.sampler = s;
      break;
    }
    case ArgKind::Image: {
      // The spec: CL_INVALID_ARG_SIZE if the argument is a memory object and arg_size !=
      // sizeof(cl_mem); CL_INVALID_MEM_OBJECT when arg_value is not a valid memory object.
      check(size == sizeof(cl_mem), CL_INVALID_ARG_SIZE,
            "an image argument's size must be sizeof(cl_mem)");
      check(value != nullptr, CL_INVALID_ARG_VALUE, "an image argument needs a value");
      MemObject* m = memory_argument(*static_cast<const cl_mem*>(value), "image");
      check(m->image() != nullptr, CL_INVALID_MEM_OBJECT, "the argument is not an image");
      // The spec: the memory object must be an image of the argument's type (image2d_t: a 2D
      // image, image1d_buffer_t: a 1D image buffer, ...).
      const cl_mem_object_type expected = image_type_of(arg.type_name);
      check(expected == 0 || expected == m->type(), CL_INVALID_ARG_VALUE,
            "the image's type does not match the argument's");
      // The spec: CL_INVALID_ARG_VALUE if the argument is an image declared with the read_only
      // qualifier and arg_value refers to an image object created with CL_MEM_WRITE_ONLY, or
      // with the write_only qualifier and an image created with CL_MEM_READ_ONLY.
      check(!(arg.access == CL_KERNEL_ARG_ACCESS_READ_ONLY && (m->flags() & CL_MEM_WRITE_ONLY)),
            CL_INVALID_ARG_VALUE, "a read_only image argument given a CL_MEM_WRITE_ONLY image");
      check(!(arg.access == CL_KERNEL_ARG_ACCESS_WRITE_ONLY && (m->flags() & CL_MEM_READ_ONLY)),
            CL_INVALID_ARG_VALUE, "a write_only image argument given a CL_MEM_READ_ONLY image");
      v.buffer = m;
      break;
    }
    case ArgKind::Value:
      check(value != nullptr, CL_INVALID_ARG_VALUE, "a by-value argument needs a value");
      check(size == arg.size, CL_INVALID_ARG_SIZE, "the size does not match the argument's type");
      v.bytes.assign(static_cast<const uint8_t*>(value), static_cast<const uint8_t*>(value) + size);
      break;
  }
  return v;
}

KernelArgSetting Kernel::check_arg_svm(cl_uint index, const void* pointer,
                                       Ref<MemObject> allocation) const {
  check(index < info_.args.size(), CL_INVALID_ARG_INDEX, "argument index out of range");
  check(info_.args[index].kind == ArgKind::Buffer, CL_INVALID_ARG_VALUE,
        "an SVM pointer can only be set for a pointer argument");
  KernelArgSetting v;
  v.set = true;
  v.svm_pointer = const_cast<void*>(pointer);
  v.svm_allocation = std::move(allocation);
  return v;
}

void Kernel::set_arg_svm(cl_uint index, const void* pointer, Ref<MemObject> allocation) {
  KernelArgSetting v = check_arg_svm(index, pointer, std::move(allocation));
  std::lock_guard lock(mutex_);
  args_[index] = std::move(v);
  snapshot_.reset();
}

void Kernel::set_svm_pointers(std::vector<Ref<MemObject>> allocations) {
  std::lock_guard lock(mutex_);
  svm_allocations_ = std::move(allocations);
  snapshot_.reset();
}

size_t Kernel::local_arg_bytes() const {
  std::lock_guard lock(mutex_);
  size_t total = 0;
  for (const KernelArgSetting& a : args_) total += a.local_size;
  return total;
}

std::shared_ptr<const KernelArgs> Kernel::snapshot_args() const {
  std::lock_guard lock(mutex_);
  if (auto shared = snapshot_.lock()) return shared;
  auto snapshot = std::make_shared<KernelArgs>();
  snapshot->kernel = Ref<Kernel>(const_cast<Kernel*>(this));
  std::vector<KernelArgValue>& out = snapshot->values;
  out.resize(args_.size());
  for (size_t i = 0; i < args_.size(); ++i) {
    const KernelArgSetting& a = args_[i];
    check(a.set, CL_INVALID_KERNEL_ARGS, "not every kernel argument has been set");
    out[i] = KernelArgs::value_of(a);
  }
  snapshot->svm_allocations = svm_allocations_;
  snapshot_ = snapshot;
  return snapshot;
}

std::shared_ptr<const KernelArgs> Kernel::snapshot_set_args() const {
  auto snapshot = std::make_shared<KernelArgs>();
  snapshot->kernel = Ref<Kernel>(const_cast<Kernel*>(this));
  std::lock_guard lock(mutex_);
  snapshot->values.resize(args_.size());
  for (size_t i = 0; i < args_.size(); ++i)
    if (args_[i].set) snapshot->values[i] = KernelArgs::value_of(args_[i]);
  return snapshot;
}

KernelArgValue KernelArgs::value_of(const KernelArgSetting& a) {
  KernelArgValue v;
  v.set = true;
  v.bytes = a.bytes;
  v.buffer = Ref<MemObject>(a.buffer);
  v.local_size = a.local_size;
  v.sampler = Ref<Sampler>(a.sampler);
  v.svm_pointer = a.svm_pointer;
  v.svm_allocation = a.svm_allocation;
  return v;
}

}  // namespace manifold
