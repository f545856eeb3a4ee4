// The CPU pipeline (x86-64): its TargetPipeline is made by make_cpu_pipeline
// (compiler/target_pipeline.h); the executables it builds run in backends/cpu/cpu_executable.h.
#pragma once

namespace llvm {
class Module;
}  // namespace llvm

namespace manifold::compiler {

// Turns OpenCL printf calls into calls of the host's formatter (see printf.cpp).
void lower_printf_calls(llvm::Module& module);

}  // namespace manifold::compiler
