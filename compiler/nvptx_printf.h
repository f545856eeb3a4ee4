// printf on NVIDIA GPUs, a pass of the NVPTX pipeline (compiler/nvptx_pipeline.cpp).
#pragma once

#include <string>

namespace llvm {
class Module;
}

namespace manifold::compiler {

// ---- printf -> CUDA's vprintf(format, packed arguments) ----
// vprintf knows C's conversions only: OpenCL's vector conversions (%v4f) are expanded into
// one conversion per element here, from the constant format string.
bool lower_printf(llvm::Module& module, std::string* log);

}  // namespace manifold::compiler
