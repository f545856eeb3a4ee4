// The NVPTX pipeline: linked program IR -> PTX text for one compute capability.
#pragma once

#include <string>
#include <vector>

#include "compiler/binary_format.h"
#include "compiler/options.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace manifold::compiler {

// True for targets this pipeline serves (triple nvptx64-*).
bool is_nvptx_target(const Target& target);

// Rewrites __local pointer arguments into offsets in dynamic shared memory, lowers printf to
// CUDA's vprintf, links the shim, libclc and libdevice (only what is used), optimizes and
// emits PTX into *ptx. kernels must be read from the module beforehand; execs gets one entry
// per kernel. False with a message in *log when something is undefined or codegen fails.
bool finalize_nvptx_executable(llvm::Module& module, const std::vector<KernelInfo>& kernels,
                               std::vector<KernelExec>& execs, const Target& target,
                               const ParsedOptions& options, std::string* ptx, std::string* log);

}  // namespace manifold::compiler
