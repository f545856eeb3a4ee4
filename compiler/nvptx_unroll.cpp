#include "compiler/nvptx_unroll.h"

#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

namespace manifold::compiler {

namespace {

constexpr unsigned kMaxTripCount = 32;
// IR instructions of the unrolled loop before simplification (constant indices fold much of it).
constexpr unsigned kMaxUnrolledInstructions = 2048;

struct MarkShortLoopsForFullUnroll : llvm::PassInfoMixin<MarkShortLoopsForFullUnroll> {
  llvm::PreservedAnalyses run(llvm::Loop& loop, llvm::LoopAnalysisManager&,
                              llvm::LoopStandardAnalysisResults& analyses, llvm::LPMUpdater&) {
    if (!loop.isInnermost() || llvm::findOptionMDForLoop(&loop, "llvm.loop.unroll.disable") ||
        llvm::findOptionMDForLoop(&loop, "llvm.loop.unroll.count") ||
        llvm::findOptionMDForLoop(&loop, "llvm.loop.unroll.full"))
      return llvm::PreservedAnalyses::all();
    const unsigned trips = analyses.SE.getSmallConstantTripCount(&loop);
    if (trips < 2 || trips > kMaxTripCount) return llvm::PreservedAnalyses::all();
    unsigned size = 0;
    for (const llvm::BasicBlock* block : loop.blocks()) {
      for (const llvm::Instruction& inst : *block)
        if (llvm::isa<llvm::CallBase>(inst) && !llvm::isa<llvm::IntrinsicInst>(inst))
          return llvm::PreservedAnalyses::all();  // a call stays: leave it to the cost model
      size += static_cast<unsigned>(block->size());
    }
    if (size * trips > kMaxUnrolledInstructions) return llvm::PreservedAnalyses::all();
    llvm::addStringMetadataToLoop(&loop, "llvm.loop.unroll.full");
    return llvm::PreservedAnalyses::all();  // metadata only
  }
};

}  // namespace

void register_full_unroll_of_short_loops(llvm::PassBuilder& builder) {
  builder.registerLateLoopOptimizationsEPCallback(
      [](llvm::LoopPassManager& passes, llvm::OptimizationLevel level) {
        if (level.getSpeedupLevel() >= 2) passes.addPass(MarkShortLoopsForFullUnroll());
      });
}

}  // namespace manifold::compiler
