// Kernel metadata (OpenCL-visible argument and attribute info) read from clang's IR.
#pragma once

#include <vector>

#include "compiler/compiler.h"

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace manifold::compiler {

bool is_kernel(const llvm::Function& function);

// One KernelInfo per kernel of the module, from kernel_arg_* and attribute metadata.
// local_mem_size and private_mem_size are left zero (the CPU pipeline fills them in).
std::vector<KernelInfo> read_kernel_infos(const llvm::Module& module);

}  // namespace manifold::compiler
