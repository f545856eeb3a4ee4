// CpuExecutable: JIT-compiles an executable binary with ORC LLJIT and runs NDRanges over TBB.
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/ExecutionEngine/Orc/AbsoluteSymbols.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <pthread.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/binary_format.h"
#include "compiler/stages.h"
#include "compiler/workgroup.h"
#include "core/small_array.h"

extern "C" int __manifold_printf(const char* format, const char* descriptor, const char* values);
extern "C" int __manifold_address_space_of(const void* pointer);
// libgcc's half-precision conversions (GCC 12 and later, _Float16 in SSE registers as LLVM passes
// it). Only their addresses are taken, so their types need not be spelled.
extern "C" void __truncdfhf2();
extern "C" void __truncsfhf2();
extern "C" void __extendhfsf2();
extern "C" void __extendhfdf2();

namespace manifold::cpu {

using compiler::ArgKind;
using compiler::KernelExec;
using compiler::KernelInfo;
using compiler::NDRange;
using compiler::Target;
using compiler::WorkGroupContext;

using WorkGroupFunction = void (*)(const void* const* args, WorkGroupContext* context);

class CpuExecutable::Impl {
 public:
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::vector<KernelInfo> kernels;
  std::vector<KernelExec> execs;
  std::vector<WorkGroupFunction> entries;
  std::vector<WorkGroupFunction> item_loop_entries;  // null where the binary has none
};

namespace {

// Grow-only, 128-byte aligned memory reused by one thread for group after group.
class ThreadBuffer {
 public:
  ~ThreadBuffer() { std::free(data_); }
  void* get(size_t bytes) {
    if (bytes == 0) return nullptr;
    if (bytes > capacity_) {
      std::free(data_);
      capacity_ = (bytes + 4095) / 4096 * 4096;
      data_ = std::aligned_alloc(128, capacity_);
      if (!data_) {
        capacity_ = 0;
        throw std::bad_alloc();
      }
    }
    return data_;
  }
  const char* begin() const { return static_cast<const char*>(data_); }
  const char* end() const { return begin() + capacity_; }

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

// The memory a thread that runs work-groups keeps work-items' data in: its stack (the work-group
// function's private variables), a buffer for the running group's __local bytes (its variables,
// its __local arguments, the collectives' scratch) and one for its per-work-item private arrays.
// What to_local/to_private/get_fence of a generic pointer ask about: every such thread is
// registered, since a work-item may hold a pointer into another group's memory, which another
// thread runs (published through global memory, CTS generic_address_space language_struct), and
// the answer must not depend on which thread asks. The buffers only grow, and all of each counts:
// nothing else ever lies there.
class WorkerMemory {
 public:
  WorkerMemory() {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* base = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &base, &size) == 0) {
        stack_low_ = static_cast<const char*>(base);
        stack_high_ = stack_low_ + size;
      }
      pthread_attr_destroy(&attr);
    }
    Registry& r = registry();
    std::unique_lock lock(r.mutex);
    r.workers.push_back(this);
  }
  ~WorkerMemory() {
    Registry& r = registry();
    std::unique_lock lock(r.mutex);
    r.workers.erase(std::find(r.workers.begin(), r.workers.end(), this));
  }
  WorkerMemory(const WorkerMemory&) = delete;
  WorkerMemory& operator=(const WorkerMemory&) = delete;

  char* local_memory(size_t bytes) { return grow(local_, local_range_, bytes); }
  char* private_memory(size_t bytes) { return grow(private_, private_range_, bytes); }

  // 2: __local memory, 0: private memory, -1: neither of this thread's.
  int space_of(const char* p) const {
    if (local_range_.holds(p)) return 2;
    if (private_range_.holds(p) || (p >= stack_low_ && p < stack_high_)) return 0;
    return -1;
  }
  // Where another registered thread's work-items keep `p`: 2, 0, or -1 (global memory).
  static int space_elsewhere(const char* p, const WorkerMemory& asking) {
    Registry& r = registry();
    std::shared_lock lock(r.mutex);
    for (const WorkerMemory* worker : r.workers)
      if (int space = worker != &asking ? worker->space_of(p) : -1; space >= 0) return space;
    return -1;
  }

 private:
  // A buffer's extent, read by other threads.
  struct Range {
    std::atomic<const char*> begin{nullptr}, end{nullptr};
    bool holds(const char* p) const {
      return p >= begin.load(std::memory_order_acquire) && p < end.load(std::memory_order_acquire);
    }
  };
  struct Registry {
    std::shared_mutex mutex;
    std::vector<const WorkerMemory*> workers;
  };
  // Never destroyed: threads may end after static destruction has begun.
  static Registry& registry() {
    static Registry* r = new Registry;
    return *r;
  }
  static char* grow(ThreadBuffer& buffer, Range& range, size_t bytes) {
    const char* before = buffer.begin();
    auto* data = static_cast<char*>(buffer.get(bytes));
    if (buffer.begin() != before) {  // reallocated: the old extent is no longer this thread's
      range.end.store(nullptr, std::memory_order_release);
      range.begin.store(buffer.begin(), std::memory_order_release);
      range.end.store(buffer.end(), std::memory_order_release);
    }
    return data;
  }

  ThreadBuffer local_, private_;
  Range local_range_, private_range_;
  const char* stack_low_ = nullptr;
  const char* stack_high_ = nullptr;
};
thread_local WorkerMemory this_worker;

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

llvm::Error add_host_symbols(llvm::orc::LLJIT& jit) {
  llvm::orc::JITDylib& main = jit.getMainJITDylib();
  const char prefix = jit.getDataLayout().getGlobalPrefix();
  llvm::orc::SymbolMap symbols;
  symbols[jit.mangleAndIntern("__manifold_printf")] = {
      llvm::orc::ExecutorAddr::fromPtr(&__manifold_printf), llvm::JITSymbolFlags::Exported};
  symbols[jit.mangleAndIntern("__manifold_address_space_of")] = {
      llvm::orc::ExecutorAddr::fromPtr(&__manifold_address_space_of),
      llvm::JITSymbolFlags::Exported};
  // x86 code converts half through these where the CPU lacks AVX512-FP16 (from double) or F16C
  // (from and to float). Named here: the process's symbol search sees only what the application
  // loaded globally, and a C application need not have loaded libgcc_s.
  const std::pair<const char*, void (*)()> half_conversions[] = {{"__truncdfhf2", &__truncdfhf2},
                                                                 {"__truncsfhf2", &__truncsfhf2},
                                                                 {"__extendhfsf2", &__extendhfsf2},
                                                                 {"__extendhfdf2", &__extendhfdf2}};
  for (const auto& [name, function] : half_conversions)
    symbols[jit.mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                                          llvm::JITSymbolFlags::Exported};
  if (auto error = main.define(llvm::orc::absoluteSymbols(std::move(symbols)))) return error;
  // SLEEF provides the vector and scalar math the builtin library calls.
  auto sleef = llvm::orc::DynamicLibrarySearchGenerator::Load("libsleef.so.3", prefix);
  if (!sleef) return sleef.takeError();
  main.addGenerator(std::move(*sleef));
  // libc/libm for what LLVM itself may emit (memcpy, memset, fmod...).
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process) return process.takeError();
  main.addGenerator(std::move(*process));
  return llvm::Error::success();
}

}  // namespace

CpuExecutable::CpuExecutable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CpuExecutable::~CpuExecutable() = default;

std::unique_ptr<CpuExecutable> CpuExecutable::load(std::span<const uint8_t> binary,
                                                   const Target& target, std::string* error) {
  auto fail = [&](std::string message) -> std::unique_ptr<CpuExecutable> {
    if (error) *error = std::move(message);
    return nullptr;
  };
  std::string why;
  std::optional<compiler::ProgramBinary> program = compiler::deserialize(binary, &why);
  if (!program) return fail(why);
  if (program->type != compiler::BinaryType::Executable) return fail("binary is not an executable");
  if (program->producer != compiler::producer_id())
    return fail("binary was produced by another compiler version");
  if (llvm::Triple(program->triple).getArch() != llvm::Triple(target.triple).getArch())
    return fail("binary was built for " + program->triple + ", not " + target.triple);
  if (program->execs.size() != program->kernels.size())
    return fail("binary lacks work-group entry points");

  compiler::initialize_llvm();
  llvm::orc::JITTargetMachineBuilder machine{llvm::Triple(target.triple)};
  machine.setCPU(target.cpu.empty() ? llvm::sys::getHostCPUName().str() : target.cpu);
  if (!target.features.empty()) {
    llvm::SubtargetFeatures features(target.features);
    machine.addFeatures(features.getFeatures());
  }
  machine.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  machine.setCodeModel(llvm::CodeModel::Small);
  // The common case only JIT-links machine code made at build time: no code generator is needed
  // then. LLJIT by default makes two target machines up front (one for the data layout, one for
  // its IR compiler); here the data layout comes from the compiler's per-thread machine and the
  // IR compiler makes a machine only when it compiles (a binary built for another CPU).
  llvm::TargetMachine* layout_source =
      compiler::thread_target_machine(target, compiler::CodeDestination::HostJit);
  if (!layout_source) return fail("no code generator for " + target.triple);
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(machine))
                 .setDataLayout(layout_source->createDataLayout())
                 .setCompileFunctionCreator(
                     [](llvm::orc::JITTargetMachineBuilder builder)
                         -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                       return std::make_unique<llvm::orc::ConcurrentIRCompiler>(std::move(builder));
                     })
                 .create();
  if (!jit) return fail("cannot create the JIT: " + llvm::toString(jit.takeError()));
  if (auto err = add_host_symbols(**jit))
    return fail("cannot set up host symbols: " + llvm::toString(std::move(err)));

  const bool object_fits = !program->object.empty() &&
                           program->cpu == compiler::resolved_cpu(target) &&
                           program->features == target.features;
  if (object_fits) {
    // Machine code made for this very CPU at build time: only JIT-link it.
    auto object = llvm::MemoryBuffer::getMemBufferCopy(
        llvm::StringRef(reinterpret_cast<const char*>(program->object.data()),
                        program->object.size()),
        "program.o");
    if (auto err = (*jit)->addObjectFile(std::move(object)))
      return fail("cannot add the program's code to the JIT: " + llvm::toString(std::move(err)));
  } else {
    auto context = std::make_unique<llvm::LLVMContext>();
    llvm::StringRef bytes(reinterpret_cast<const char*>(program->bitcode.data()),
                          program->bitcode.size());
    auto module = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bytes, "program"), *context);
    if (!module)
      return fail("binary has unreadable bitcode: " + llvm::toString(module.takeError()));
    (*module)->setDataLayout((*jit)->getDataLayout());
    llvm::orc::ThreadSafeModule safe_module(std::move(*module), std::move(context));
    if (auto err = (*jit)->addIRModule(std::move(safe_module)))
      return fail("cannot add the program to the JIT: " + llvm::toString(std::move(err)));
  }

  auto impl = std::make_unique<Impl>();
  for (const KernelExec& exec : program->execs) {
    auto address = (*jit)->lookup(exec.entry_symbol);
    if (!address)
      return fail("cannot compile kernel entry " + exec.entry_symbol + ": " +
                  llvm::toString(address.takeError()));
    impl->entries.push_back(address->toPtr<WorkGroupFunction>());
    WorkGroupFunction item_loop = nullptr;
    if (!exec.item_loop_symbol.empty()) {
      auto item_loop_address = (*jit)->lookup(exec.item_loop_symbol);
      if (!item_loop_address)
        return fail("cannot compile kernel entry " + exec.item_loop_symbol + ": " +
                    llvm::toString(item_loop_address.takeError()));
      item_loop = item_loop_address->toPtr<WorkGroupFunction>();
    }
    impl->item_loop_entries.push_back(item_loop);
  }
  impl->jit = std::move(*jit);
  impl->kernels = std::move(program->kernels);
  impl->execs = std::move(program->execs);
  return std::unique_ptr<CpuExecutable>(new CpuExecutable(std::move(impl)));
}

const KernelInfo* CpuExecutable::find(std::string_view name) const {
  for (const KernelInfo& kernel : impl_->kernels)
    if (kernel.name == name) return &kernel;
  return nullptr;
}

const std::vector<KernelInfo>& CpuExecutable::kernels() const { return impl_->kernels; }

size_t regrouped_local_size(const compiler::KernelExec& exec, const compiler::NDRange& range) {
  constexpr size_t kSmallGroup = 16, kLargestGroup = 64;
  if (!exec.partition_independent || (exec.item_loop_preferred && !exec.item_loop_lockstep_items))
    return 0;
  size_t items = 1;
  for (unsigned d = 0; d < range.work_dim; ++d) items *= std::max<size_t>(range.local_size[d], 1);
  if (items >= kSmallGroup) return 0;
  const size_t threads = static_cast<size_t>(tbb::this_task_arena::max_concurrency());
  const size_t smallest = std::max<size_t>(kSmallGroup, exec.item_loop_lockstep_items);
  size_t local = std::max<size_t>(kLargestGroup, smallest);
  while (local > smallest && range.global_size[0] / local < 4 * threads) local /= 2;
  return std::min(local, range.global_size[0]);
}

void CpuExecutable::run(std::string_view kernel_name, const NDRange& range,
                        const void* const* arg_values, const size_t* local_sizes,
                        compiler::PrintfBuffer* printf_buffer) const {
  size_t index = 0;
  while (index < impl_->kernels.size() && impl_->kernels[index].name != kernel_name) ++index;
  if (index == impl_->kernels.size()) return;
  const KernelInfo& info = impl_->kernels[index];
  const KernelExec& exec = impl_->execs[index];

  // The context keeps the whole NDRange's sizes; only the groups of this launch run:
  // [first[d], first[d] + count[d]) in each dimension.
  WorkGroupContext shape{};
  size_t first[3], count[3];
  const bool whole = range.whole();  // the usual launch: one division per dimension
  const size_t regrouped_x = whole ? regrouped_local_size(exec, range) : 0;
  for (unsigned d = 0; d < 3; ++d) {
    const bool used = d < range.work_dim;
    const size_t global = used ? range.global_size[d] : 1;
    const size_t local = regrouped_x ? (d == 0 ? regrouped_x : 1)
                         : used      ? std::max<size_t>(range.local_size[d], 1)
                                     : 1;
    shape.global_size[d] = global;
    shape.enqueued_local_size[d] = local;
    shape.global_offset[d] = used ? range.global_offset[d] : 0;
    shape.num_groups[d] = local == 1 ? global : (global + local - 1) / local;
    first[d] = whole ? 0 : range.launch_first(d);
    count[d] = whole ? shape.num_groups[d] : range.launch_end(d) - first[d];
  }
  shape.work_dim = range.work_dim;
  const size_t total_groups = count[0] * count[1] * count[2];
  if (total_groups == 0) return;

  // Local memory of one group: static variables first, then each __local argument.
  const size_t arg_count = info.args.size();
  SmallArray<uint64_t> local_offsets(arg_count, 0);
  uint64_t local_bytes = exec.static_local_size;
  for (size_t i = 0; i < arg_count; ++i) {
    if (info.args[i].kind != ArgKind::Local) continue;
    local_bytes = align_up(local_bytes, 128);
    local_offsets[i] = local_bytes;
    local_bytes += local_sizes ? local_sizes[i] : 0;
  }
  const uint64_t items_per_group =
      shape.enqueued_local_size[0] * shape.enqueued_local_size[1] * shape.enqueued_local_size[2];
  // A group of one work-item runs as straight code (the item-loop form: no per-work-item
  // arrays, no regions, the kernel's own vectors as SIMD). So do small groups of kernels
  // without barriers, which would not fill one vector of work-items (the work-group form's
  // vector loop needs 8 or 16), larger groups of kernels that prefer it (compiler/
  // compiler/workgroup/form_choice.cpp, prefers_item_loop), and groups that fill the item loop's
  // work-items in lockstep (compiler/item_lockstep.h).
  constexpr uint64_t kSmallGroup = 8;
  const bool fills_lockstep =
      exec.item_loop_lockstep_items && items_per_group >= exec.item_loop_lockstep_items;
  WorkGroupFunction entry = impl_->entries[index];
  if (WorkGroupFunction item_loop = impl_->item_loop_entries[index];
      item_loop && (items_per_group == 1 || (exec.item_loop_fits_any_group &&
                                             (items_per_group < kSmallGroup ||
                                              exec.item_loop_preferred || fills_lockstep))))
    entry = item_loop;
  const uint64_t scratch_bytes = exec.scratch_bytes_per_item * items_per_group;
  const uint64_t collective_offset = align_up(local_bytes, 128);
  const uint64_t local_buffer_bytes = collective_offset + 8 * (items_per_group + 2);

  auto run_groups = [&](const tbb::blocked_range<size_t>& groups) {
    const compiler::PrintfBufferScope printf_scope(printf_buffer);
    WorkerMemory& worker = this_worker;
    char* memory = worker.local_memory(local_buffer_bytes);
    char* scratch = scratch_bytes ? worker.private_memory(scratch_bytes) : nullptr;
    SmallArray<const void*> args(arg_count);
    std::copy(arg_values, arg_values + arg_count, args.data());
    SmallArray<void*> local_pointers(arg_count, nullptr);
    for (size_t i = 0; i < arg_count; ++i) {
      if (info.args[i].kind != ArgKind::Local) continue;
      local_pointers[i] = memory + local_offsets[i];
      args[i] = &local_pointers[i];
    }
    WorkGroupContext context = shape;
    context.local_memory = memory;
    context.scratch = scratch;
    context.collective_scratch = memory + collective_offset;
    // Group coordinates of the first group by division, then by counting: a division per
    // dimension and group costs as much as a small group's whole work.
    size_t rest = groups.begin();
    for (unsigned d = 0; d < 3; ++d) {
      context.group_id[d] = first[d] + (rest ? rest % count[d] : 0);
      if (rest) rest /= count[d];
    }
    auto set_local_size = [&](unsigned d) {
      const size_t first_item = context.group_id[d] * shape.enqueued_local_size[d];
      context.local_size[d] =
          std::min<size_t>(shape.enqueued_local_size[d], shape.global_size[d] - first_item);
    };
    for (unsigned d = 0; d < 3; ++d) set_local_size(d);
    for (size_t group = groups.begin(); group != groups.end(); ++group) {
      entry(args.data(), &context);
      for (unsigned d = 0; d < 3; ++d) {
        if (++context.group_id[d] < first[d] + count[d]) {
          set_local_size(d);
          break;
        }
        context.group_id[d] = first[d];
        set_local_size(d);
      }
    }
  };
  if (total_groups == 1) {
    run_groups(tbb::blocked_range<size_t>(0, 1));
  } else {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, total_groups), run_groups);
  }
  if (exec.uses_printf) std::fflush(stdout);
}

}  // namespace manifold::cpu

// Called by kernels (compiler/cpu_pipeline.cpp lowers to_global/to_local/to_private to it, the
// builtin library's get_fence calls it): the named address space a generic pointer points
// into. 2: a group's __local memory; 0: a work-item's private memory (a stack of a thread that
// runs groups, or a group's per-work-item arrays); 1: anything else, global memory. The calling
// thread's own memory first, without a lock.
extern "C" int __manifold_address_space_of(const void* pointer) {
  using manifold::cpu::WorkerMemory;
  const char* p = static_cast<const char*>(pointer);
  const WorkerMemory& own = manifold::cpu::this_worker;
  if (int space = own.space_of(p); space >= 0) return space;
  const int space = WorkerMemory::space_elsewhere(p, own);
  return space >= 0 ? space : 1;
}
