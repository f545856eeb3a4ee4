// What each operation means on the CPU device, where every memory object is host memory.
#include <cstring>
#include <new>

#include "backends/cpu/cpu_program.h"
#include "backends/cpu/cpu_queue.h"
#include "core/log.h"
#include "scheduler/command.h"

namespace manifold::cpu {
namespace {

void copy_rect(const std::byte* src, std::byte* dst, const Rect& r) {
  for (size_t z = 0; z < r.region[2]; ++z)
    for (size_t y = 0; y < r.region[1]; ++y)
      std::memmove(dst + z * r.dst_slice_pitch + y * r.dst_row_pitch,
                   src + z * r.src_slice_pitch + y * r.src_row_pitch, r.region[0]);
}

void fill(std::byte* dst, size_t size, const std::byte* pattern, size_t pattern_size) {
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

void run_kernel(KernelOp& op) {
  const auto& program = static_cast<const CpuProgram&>(*op.program);
  const auto& info = op.kernel->info();
  const size_t n = op.args.size();
  std::vector<const void*> values(n);
  std::vector<size_t> local_sizes(n, 0);
  std::vector<void*> pointers(n, nullptr);  // storage for buffer addresses
  for (size_t i = 0; i < n; ++i) {
    KernelArgValue& a = op.args[i];
    switch (info.args[i].kind) {
      case compiler::ArgKind::Buffer:
        pointers[i] = a.buffer ? static_cast<void*>(a.buffer->host_data()) : a.svm_pointer;
        values[i] = &pointers[i];
        break;
      case compiler::ArgKind::Local:
        local_sizes[i] = a.local_size;
        values[i] = nullptr;
        break;
      case compiler::ArgKind::Sampler:
      case compiler::ArgKind::Image:
      case compiler::ArgKind::Value:
        values[i] = a.bytes.data();
        break;
    }
  }
  program.executable().run(info.name, op.range, values.data(), local_sizes.data());
}

void run_native_kernel(NativeKernelOp& op) {
  std::vector<std::byte> args = op.args;  // the function may scribble on its copy
  for (auto& [mem, offset] : op.mem_slots) {
    void* address = mem->host_data();
    std::memcpy(args.data() + offset, &address, sizeof(address));
  }
  op.fn(args.data());
}

struct Executor {
  void operator()(NoOp&) {}
  void operator()(CopyOp& op) { std::memmove(host_address(op.dst), host_address(op.src), op.size); }
  void operator()(CopyRectOp& op) { copy_rect(host_address(op.src), host_address(op.dst), op.rect); }
  void operator()(FillOp& op) { fill(host_address(op.dst), op.size, op.pattern.data(), op.pattern_size); }
  void operator()(MapOp&) {}    // zero-copy: the mapping is the object's own memory
  void operator()(UnmapOp&) {}  // likewise
  void operator()(MigrateOp&) {}
  void operator()(KernelOp& op) { run_kernel(op); }
  void operator()(NativeKernelOp& op) { run_native_kernel(op); }
  void operator()(HostFunctionOp& op) { op.fn(); }
};

}  // namespace

void execute(Command& command) {
  command.running();
  cl_int status = CL_COMPLETE;
  try {
    std::visit(Executor{}, command.operation());
  } catch (const std::bad_alloc&) {
    status = CL_OUT_OF_HOST_MEMORY;
  } catch (const std::exception& e) {
    log_debug("command failed: %s", e.what());
    status = CL_OUT_OF_RESOURCES;
  }
  command.finish(status);
}

}  // namespace manifold::cpu
