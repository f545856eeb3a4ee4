// The device operations on the CPU device, where every memory object is host memory (or an
// emulated GPU's private memory): each runs at once, on the thread running the queue.
#include <cstring>
#include <mutex>

#include "backends/cpu/cpu_device.h"
#include "backends/cpu/cpu_program.h"
#include "backends/cpu/cpu_queue.h"
#include "compiler/image_abi.h"
#include "core/job.h"
#include "core/operations.h"
#include "core/small_array.h"

namespace manifold::cpu {
namespace {

void copy_rect_bytes(const std::byte* src, std::byte* dst, const Rect& r) {
  for (size_t z = 0; z < r.region[2]; ++z)
    for (size_t y = 0; y < r.region[1]; ++y)
      std::memmove(dst + z * r.dst_slice_pitch + y * r.dst_row_pitch,
                   src + z * r.src_slice_pitch + y * r.src_row_pitch, r.region[0]);
}

void fill_bytes(std::byte* dst, size_t size, const std::byte* pattern, size_t pattern_size) {
  if (pattern_size == 1) {
    std::memset(dst, static_cast<int>(pattern[0]), size);
    return;
  }
  // Write the pattern once, then double the filled prefix with memcpy.
  size_t done = std::min(pattern_size, size);
  std::memcpy(dst, pattern, done);
  while (done < size) {
    const size_t n = std::min(done, size - done);
    std::memcpy(dst + done, dst, n);
    done += n;
  }
}

void run_kernel(CpuDevice& device, const KernelOp& op) {
  const auto& program = static_cast<const CpuProgram&>(op.program());
  const auto& info = op.launch->info;
  const size_t n = op.args->values.size();
  SmallArray<const void*> values(n);
  SmallArray<size_t> local_sizes(n, 0);
  // Storage for buffer and image addresses and sampler bits (all pointer-sized).
  SmallArray<void*> pointers(n, nullptr);
  // Descriptors of image arguments (compiler/image_abi.h): made only for kernels that take images,
  // sized once so that the pointers into it stay valid.
  std::vector<ManifoldImage> images;
  for (size_t i = 0; i < n; ++i) {
    const KernelArgValue& a = op.args->values[i];
    switch (info.args[i].kind) {
      case compiler::ArgKind::Buffer:
        pointers[i] = a.buffer ? static_cast<void*>(device.address(*a.buffer)) : a.svm_pointer;
        values[i] = &pointers[i];
        break;
      case compiler::ArgKind::Local:
        local_sizes[i] = a.local_size;
        values[i] = nullptr;
        break;
      case compiler::ArgKind::Image: {
        if (images.empty()) images.resize(n);
        images[i] = image_descriptor(*a.buffer->image(),
                                     reinterpret_cast<uintptr_t>(device.address(*a.buffer)));
        // The kernel receives a pointer to the descriptor, like a buffer's.
        pointers[i] = &images[i];
        values[i] = &pointers[i];
        break;
      }
      case compiler::ArgKind::Sampler:
        pointers[i] = reinterpret_cast<void*>(uintptr_t{a.sampler ? a.sampler->kernel_bits() : 0});
        values[i] = &pointers[i];
        break;
      case compiler::ArgKind::Value:
        values[i] = a.bytes.data();
        break;
    }
  }
  if (!op.printf_sink.callback) {
    program.executable().run(info.name, op.range, values.data(), local_sizes.data());
    return;
  }
  compiler::PrintfBuffer output(device.info().printf_buffer_size);
  program.executable().run(info.name, op.range, values.data(), local_sizes.data(), &output);
  const std::string text = output.take();
  if (!text.empty()) op.printf_sink.callback(text.data(), text.size(), op.printf_sink.user_data);
}

void run_native_kernel(const NativeKernelOp& op) {
  std::vector<std::byte> args = op.args;  // the function may scribble on its copy
  for (auto& [mem, offset] : op.mem_slots) {
    void* address = mem->host_data();
    std::memcpy(args.data() + offset, &address, sizeof(address));
  }
  op.fn(args.data());
}

// The copy locks of the buffers two locations lie in (at most two roots, taken without deadlock):
// a copy by this command must not overlap another queue's copy of the same bytes into this
// device's memory (scheduler/migration.cpp lets two queues make the same copy).
class CopyLocks {
 public:
  CopyLocks(const Location& a, const Location& b) {
    std::mutex* x = a.mem ? &a.mem->copy_mutex() : nullptr;
    std::mutex* y = b.mem ? &b.mem->copy_mutex() : nullptr;
    if (x == y) y = nullptr;
    if (!x) std::swap(x, y);
    if (x && y)
      std::lock(*x, *y);
    else if (x)
      x->lock();
    first_ = x;
    second_ = y;
  }
  ~CopyLocks() {
    if (first_) first_->unlock();
    if (second_) second_->unlock();
  }

 private:
  std::mutex* first_;
  std::mutex* second_;
};

}  // namespace

// One per device: the operations carry no state of a stream (they run at once).
class CpuOps final : public DeviceOps {
 public:
  explicit CpuOps(CpuDevice& device) : device_(device) {}

  // Moves bytes into host memory, or into an emulated GPU's memory, from wherever they are
  // current.
  void transfer(const Transfer& t) override {
    MemObject& root = *t.root;
    // An SVM allocation is at its own address here, the host's and an emulated GPU's alike: only
    // another backend's copy has bytes to bring (to the pages' address that drivers copy to).
    const bool in_place = root.svm();
    std::byte* dst = t.to == kHostPlace || in_place ? root.dma_host_data() + t.offset
                                                    : device_.address(root) + t.offset;
    std::lock_guard lock(root.copy_mutex());
    if (DeviceBacking* from = t.source())
      from->read_to_host(dst, t.offset, t.size);  // another device's memory (a GPU's: a DMA)
    else if (!in_place)
      std::memcpy(dst, root.host_data() + t.offset, t.size);
  }
  void copy(const CopyOp& op) override {
    CopyLocks locks(op.src, op.dst);
    std::memmove(device_.address(op.dst), device_.address(op.src), op.size);
  }
  void copy_rect(const CopyRectOp& op) override {
    CopyLocks locks(op.src, op.dst);
    copy_rect_bytes(device_.address(op.src), device_.address(op.dst), op.rect);
  }
  void fill(const FillOp& op) override {
    CopyLocks locks(op.dst, Location{});
    fill_bytes(device_.address(op.dst), op.size, op.pattern.data(), op.pattern_size);
  }
  // A mapping is the buffer's host memory (zero-copy on the CPU); on an emulated GPU the
  // transfer before it brought the bytes there.
  void map(const MapOp&) override {}
  void make_resident(MemObject& mem) override { device_.address(mem); }
  void launch(const KernelOp& op) override { run_kernel(device_, op); }
  void native_kernel(const NativeKernelOp& op) override { run_native_kernel(op); }
  void host_function(const HostFunctionOp& op) override { op.fn(); }

 private:
  CpuDevice& device_;
};

void execute(CpuDevice& device, Job& job) {
  CpuOps ops(device);
  job.running();
  job.finish(job.run(ops));  // CL_SUCCESS is CL_COMPLETE
}

}  // namespace manifold::cpu
