// The compilation stages every target pipeline (compiler/target_pipeline.h) shares: target
// machines, builtin library linking, common IR cleanups, optimization and code emission.
#pragma once

#include <llvm/IR/PassManager.h>  // ModulePassManager: an alias, not forward-declarable

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/compiler.h"

namespace llvm {
class Function;
class LLVMContext;
class MemoryBufferRef;
class Module;
class PassBuilder;
class PassInstrumentationCallbacks;
class PipelineTuningOptions;
class TargetMachine;
}  // namespace llvm

namespace manifold::compiler {

// ---- Target machines ----

// Registers the native (host) target with LLVM once per process. Other targets register in
// their pipeline before asking for a machine.
void initialize_llvm();

// The CPU name code is generated for: target.cpu, or the host's when empty.
std::string resolved_cpu(const Target& target);

// Where generated code goes, which decides relocation, code model and machine reuse.
enum class CodeDestination {
  // Linked into this process by JITLink. Its machines are kept per thread: they are costly to
  // make, and the x86 code generator's output does not depend on earlier modules.
  HostJit,
  // Handed to a vendor driver (PTX text, code objects), with the target's defaults. A machine
  // per build: NVPTX numbers call sequences across modules, so a reused machine would make a
  // program's PTX depend on what was built before it.
  Driver,
};

// A new target machine for `target`; null when LLVM has no code generator for its triple.
std::unique_ptr<llvm::TargetMachine> make_target_machine(const Target& target,
                                                         CodeDestination destination);
// The calling thread's machine for `target` (LLVM target machines are not safe to share between
// threads); null as above.
llvm::TargetMachine* thread_target_machine(const Target& target, CodeDestination destination);

// ---- Builtin libraries ----

// A builtin library's bitcode: `embedded` when its size is not 0, else the first of `paths`
// that exists, read once per process (an empty buffer when none does).
llvm::MemoryBufferRef library_bytes(const char* embedded, uint64_t size, const char* name,
                                    const std::vector<std::string>& paths);

// Builtin library functions whose names start so stay calls on every target, never inlined
// (compiler/builtins/image.cl: the general image format conversions, whose copies in every read
// would make big kernels, slow to compile on the CPU and to JIT-compile in a GPU's driver).
inline constexpr std::string_view kOutlinedBuiltinPrefix = "__manifold_outlined_";

// Links the bitcode library `library` into `module`, only what the module uses: functions it
// does not reach are never parsed. False with a message in *log.
bool link_lazily(llvm::Module& module, const llvm::MemoryBufferRef& library, std::string* log);

// A large bitcode library split into parts (one module each, a multi-module bitcode file:
// compiler/builtins/split_library.cmake) with an index from each defined symbol to its part.
// Only the parts a program needs are parsed. Immutable after construction: threads share it.
class SplitLibrary {
 public:
  // symbol_index: line i lists the symbols part i defines, space-separated (made at build time
  // by split_library.cmake). When empty, or not one line per part, the index is made by
  // parsing every part: correct, but it costs a process's first build tens of milliseconds.
  explicit SplitLibrary(const llvm::MemoryBufferRef& bitcode, std::string_view symbol_index = {});
  ~SplitLibrary();
  // Links parts into `module` until nothing the library defines is left undefined (a part's
  // functions may call functions of other parts).
  bool link_into(llvm::Module& module, std::string* log) const;
  // The index, sorted by symbol (tests compare the build-time index with the parsed one), and
  // whether it came from the build-time text.
  std::vector<std::pair<std::string, unsigned>> symbol_index() const;
  bool index_was_given() const;
  // Why the library cannot be read; empty when it can.
  const std::string& error() const;

 private:
  class Parts;
  std::unique_ptr<Parts> parts_;
};

// ---- Common IR cleanups and checks ----

// Removes target-cpu/target-features attributes (and no-builtins, which the builtin libraries
// carry) so that one pipeline decides them.
void strip_target_attributes(llvm::Module& module);

// Bytes of the program's own variables in the global address space (program-scope and static
// ones), before the builtin libraries join the module and optimization folds any away:
// CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE.
uint64_t program_global_variable_bytes(const llvm::Module& module);

// Reports every called function still only declared (intrinsics aside) unless `resolved`
// says a later stage or the loader provides it. builtin_note follows the name of an undefined
// OpenCL builtin (a mangled name). False when anything is undefined.
bool check_all_defined(const llvm::Module& module,
                       const std::function<bool(const llvm::Function&)>& resolved,
                       std::string_view builtin_note, std::string* log);

// False with "internal compiler error (<what>)" and the verifier's findings in *log.
bool verify(const llvm::Module& module, std::string_view what, std::string* log);

// ---- Lowering shared by GPU targets ----

// The zero-length __local array at the start of a launch's dynamic shared memory.
inline constexpr const char* kDynamicLocalSymbol = "__manifold_dynamic_shared";

// __local pointer arguments become u32 byte offsets into the launch's dynamic shared memory
// (compiler/gpu_launch_abi.h): CUDA and HIP give a launch one block of it, sized at launch.
void rewrite_local_arguments(llvm::Module& module, const std::vector<KernelInfo>& kernels,
                             unsigned local_address_space);

// Bytes of the module's static __local variables (the dynamic block's symbol aside): what a
// launch of any of its kernels needs before its __local arguments.
uint64_t static_local_bytes(const llvm::Module& module, unsigned local_address_space);

// ---- Optimization ----

// Runs the passes `populate` adds, with analyses registered for `machine`. tuning: null for
// LLVM's defaults. instrumentation: callbacks around each pass (one may skip optional passes on
// some functions), or null.
void run_module_passes(
    llvm::Module& module, llvm::TargetMachine* machine,
    const std::function<void(llvm::PassBuilder&, llvm::ModulePassManager&)>& populate,
    const llvm::PipelineTuningOptions* tuning = nullptr,
    llvm::PassInstrumentationCallbacks* instrumentation = nullptr);

// ---- Emission ----

enum class CodeKind { Object, Assembly };

// Generates code for a finished module: a relocatable object, or assembly text (PTX). Code
// generation changes the module: serialize it first if its IR is needed.
bool emit_code(llvm::Module& module, llvm::TargetMachine& machine, CodeKind kind,
               std::vector<uint8_t>* code, std::string* log);

std::vector<uint8_t> to_bitcode(const llvm::Module& module);

// MANIFOLD_COMPILER_DUMP=<directory>: writes the module's IR there (debugging aid).
void dump_module_if_requested(const llvm::Module& module);

}  // namespace manifold::compiler
