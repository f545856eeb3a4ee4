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
// unrolled body stays small are marked for full unrolling (llvm.loop.unroll.full), unless the
// program asked otherwise (#pragma unroll N / nounroll). Registers the marking just before
// the simplification pipeline's full unrolling.
void register_full_unroll_of_short_loops(llvm::PassBuilder& builder);

}  // namespace manifold::compiler
