// Unroll counts for the loops the work-group form runs in step (compiler/workgroup.h,
// mark_step_loops_for_unrolling): run before the work-group pass, followed by the loop unroller.
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/SimplifyQuery.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/LCSSA.h>
#include <llvm/Transforms/Utils/LoopRotationUtils.h>
#include <llvm/Transforms/Utils/LoopSimplify.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

#include <algorithm>
#include <bit>

#include "compiler/workgroup.h"
#include "compiler/workgroup/passes.h"

namespace manifold::compiler {

void mark_step_loops_for_unrolling(llvm::Module& module, const std::vector<KernelInfo>& kernels) {
  // Instructions an unrolled body may reach: enough work per spill and reload that the loop
  // runs at the speed of its arithmetic, few enough to keep compile time and code small.
  constexpr size_t kUnrolledBodyBudget = 96;
  constexpr size_t kMaxUnrollCount = 8;
  constexpr unsigned kMaxRotatedHeader = 16;  // instructions copied ahead of the loop
  const llvm::TargetTransformInfo costs(module.getDataLayout());
  for (const KernelInfo& info : kernels) {
    llvm::Function* kernel = module.getFunction(info.name);
    if (!kernel || kernel->isDeclaration()) continue;
    const workgroup::Divergence divergence(*kernel);
    llvm::DominatorTree dominators(*kernel);
    llvm::LoopInfo loops(dominators);
    llvm::TargetLibraryInfoImpl library_info_impl(module.getTargetTriple());
    llvm::TargetLibraryInfo library_info(library_info_impl);
    llvm::AssumptionCache assumptions(*kernel);
    llvm::ScalarEvolution evolution(*kernel, library_info, assumptions, dominators, loops);
    for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
      if (!workgroup::runs_in_step(*loop, divergence) || loop->getLoopID()) continue;
      // A loop of a constant trip count that reaches memory is LLVM's unroller's to judge: a
      // forced partial unroll there let the full unroller expand whole 256-iteration loops of
      // local-memory accesses later (pyopencl's scan kernels). Arithmetic loops keep the unroll.
      const bool reaches_memory =
          std::any_of(loop->block_begin(), loop->block_end(), [](const llvm::BasicBlock* block) {
            return std::any_of(block->begin(), block->end(), [](const llvm::Instruction& inst) {
              return inst.mayReadOrWriteMemory();
            });
          });
      const unsigned constant_trip_count = evolution.getSmallConstantTripCount(loop);
      if (reaches_memory && constant_trip_count != 0) continue;
      size_t body = 0;
      for (llvm::BasicBlock* block : loop->blocks())
        for (llvm::Instruction& inst : *block)
          if (!llvm::isa<llvm::PHINode>(inst) && !inst.isTerminator() &&
              !inst.isDebugOrPseudoInst())
            ++body;
      const size_t count = std::bit_floor(
          std::min(kMaxUnrollCount, kUnrolledBodyBudget / std::max<size_t>(body, 1)));
      if (count < 2) continue;
      llvm::addStringMetadataToLoop(loop, "llvm.loop.unroll.count", count);
      // A trip count known only at run time: tested at the bottom, the loop unrolls with its
      // remainder in an epilogue; tested at the top (as the frontend leaves a `for` loop), every
      // unrolled copy would keep its own exit test, a compare and branch per iteration next to
      // the arithmetic. (A constant trip count tells the unroller which copies can exit.)
      if (constant_trip_count != 0) continue;
      llvm::simplifyLoop(loop, &dominators, &loops, &evolution, &assumptions, nullptr,
                         /*PreserveLCSSA=*/false);
      llvm::formLCSSA(*loop, dominators, &loops, &evolution);
      llvm::LoopRotation(loop, &loops, &costs, &assumptions, &dominators, &evolution, nullptr,
                         llvm::SimplifyQuery(module.getDataLayout(), &dominators, &assumptions),
                         /*RotationOnly=*/true, kMaxRotatedHeader, /*IsUtilMode=*/true);
    }
  }
}

}  // namespace manifold::compiler
