// Loop unrolling the way CUDA compilers do it, for the NVPTX pipeline
// (compiler/nvptx_pipeline.cpp).
#pragma once

namespace llvm {
class PassBuilder;
}

namespace manifold::compiler {

// LLVM's cost model keeps a short loop of known trip count rolled (or unrolls it by two) as soon
// as its unrolled body looks large, where nvcc unrolls it fully: a loop over a private array
// (the 19 populations of a lattice-Boltzmann cell) then leaves the array in local memory, and a
// loop over a constant table reads the table at run time. Loops of at most 32 iterations whose
// unrolled body stays small are marked for full unrolling (llvm.loop.unroll.full). Small loops
// of a trip count known only at run time are unrolled by four, as NVVM does, not LLVM's eight:
// ptxas unrolls them again, and the remainder loop, which waits on every iteration's loads in
// turn, runs at most three iterations. Loops the program marked (#pragma unroll N / nounroll)
// keep their marks. Registers the marking just before the simplification pipeline's full
// unrolling.
void register_cuda_style_unrolling(llvm::PassBuilder& builder);

}  // namespace manifold::compiler
