// The footprint analysis of device groups (compiler/footprint.h): per kernel and buffer
// argument, the byte offsets its work-items read and write, proven on a cleaned-up copy of the
// program (helpers inlined, values promoted to registers). Target-independent: clang's output
// for any target, and modules read from SPIR-V.
#pragma once

#include <vector>

#include "compiler/compiler.h"

namespace llvm {
class Module;
}

namespace manifold::compiler {

// Fills KernelInfo::footprint of each of `kernels` (read_kernel_infos of `module`). `module`
// is left as it was.
void analyze_footprints(const llvm::Module& module, std::vector<KernelInfo>& kernels);

}  // namespace manifold::compiler
