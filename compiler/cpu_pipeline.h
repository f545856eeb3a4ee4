// The CPU pipeline from linked program IR to an optimized, self-contained executable module.
#pragma once

#include <string>
#include <vector>

#include "compiler/binary_format.h"
#include "compiler/options.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace manifold::compiler {

// Registers the native target with LLVM once per process.
void initialize_llvm();

// A target machine for `target` (empty cpu: the host's). Cached per thread: LLVM target
// machines are not safe to share between threads.
llvm::TargetMachine* target_machine_for(const Target& target);

// Turns OpenCL printf calls into calls of the host's formatter (see printf.cpp).
void lower_printf_calls(llvm::Module& module);

// Links the builtin library (only what the program uses), inlines everything into the kernels,
// forms work-group functions and optimizes. kernels must be read from the module beforehand.
// False with a message in *log when the program calls something undefined.
bool finalize_executable(llvm::Module& module, std::vector<KernelInfo>& kernels,
                         std::vector<KernelExec>& execs, const Target& target,
                         const ParsedOptions& options, std::string* log);

// The CPU name code is generated for: target.cpu, or the host's when empty.
std::string resolved_cpu(const Target& target);

// Generates machine code for an optimized executable module (after finalize_executable) as a
// relocatable object for the JIT linker. The module is changed by code generation: serialize
// it first if its IR is needed.
bool emit_object(llvm::Module& module, const Target& target, std::vector<uint8_t>* object,
                 std::string* log);

// Removes target-cpu/target-features attributes so one pipeline decides them.
void strip_target_attributes(llvm::Module& module);

}  // namespace manifold::compiler
