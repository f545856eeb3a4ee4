// OpenCL C's float accuracy on NVIDIA GPUs: what the language allows that LLVM's NVPTX backend
// does not take on its own, applied by the NVPTX pipeline (compiler/nvptx_pipeline.cpp).
#pragma once

#include <set>
#include <string>

namespace llvm {
class Module;
}

namespace manifold::compiler {

// OpenCL C lets single-precision x / y be 2.5 ulp off unless the program is built with
// -cl-fp32-correctly-rounded-divide-sqrt; clang marks such divisions with !fpmath 2.5 (and
// leaves the mark off under that option). NVPTX ignores the mark and prints the correctly
// rounded div.rn.f32, a subroutine of a few dozen instructions. The marked divisions become
// PTX's div.full.f32 instead: at most 2 ulp over the whole range, subnormals kept (PTX ISA,
// "div"), a handful of instructions; 1 / y becomes rcp.approx.f32 (at most 1 ulp over the whole
// range, subnormals kept: PTX ISA, "rcp"), cheaper still. `ftz` (-cl-denorms-are-zero, where
// subnormals may flush): div.full.ftz.f32. Divisions that allow approximate functions (afn:
// -cl-unsafe-math- optimizations, -cl-fast-relaxed-math) are left to the backend, which prints
// div.approx.f32. Run after optimization: what folds or becomes a multiplication has done so.
void use_full_range_division(llvm::Module& module, bool ftz);

// The builtin libraries' own divisions stay correctly rounded (their error bounds count on it):
// the accuracy marks of divisions in functions other than `program` (the program's own,
// before linking) go. Run before inlining.
void keep_library_divisions_exact(llvm::Module& module, const std::set<std::string>& program);

}  // namespace manifold::compiler
