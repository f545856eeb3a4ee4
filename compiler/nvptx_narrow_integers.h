// 64-bit integer arithmetic computed in 32 bits where its values provably fit, for the NVPTX
// pipeline (compiler/nvptx_pipeline.cpp).
#pragma once

namespace llvm {
class Function;
}

namespace manifold::compiler {

// OpenCL's work-item functions return size_t, so index loops over local sizes and strides
// (`for (size_t s = get_local_size(0) / 2; s > 0; s /= 2)`) are 64-bit in the IR, and a GPU does
// 64-bit adds, shifts and compares in two instructions each. Where the values' known bits prove
// that they stay below 2^32 (the work-item ids and sizes carry their ranges), the loop's phis,
// the arithmetic that feeds them and their compares are computed in i32 instead; uses that need
// 64 bits get the zero extension. Returns whether anything changed.
bool narrow_index_arithmetic(llvm::Function& function);

}  // namespace manifold::compiler
