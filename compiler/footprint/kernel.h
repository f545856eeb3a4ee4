// The footprint of one kernel, from its function once everything it calls is inlined.
#pragma once

#include "compiler/compiler.h"

namespace llvm {
class Function;
}

namespace manifold::compiler::footprint {

KernelFootprint analyze_kernel(const llvm::Function& kernel, const KernelInfo& info);

}  // namespace manifold::compiler::footprint
