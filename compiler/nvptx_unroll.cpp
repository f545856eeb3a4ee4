#include "compiler/nvptx_unroll.h"

#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

#include <vector>

namespace manifold::compiler {

namespace {

constexpr unsigned kMaxTripCount = 32;
constexpr unsigned kRuntimeUnrollCount = 4;
// Bodies LLVM would unroll by more than four (its NVPTX threshold allows about 75 instructions).
constexpr unsigned kMaxRuntimeUnrolledBody = 16;
// Carried by a loop unrolled by kRuntimeUnrollCount: LLVM marks a loop it unrolled by a given
// count as done (llvm.loop.unroll.disable, which becomes PTX's nounroll), and ptxas must be free
// to unroll it again.
constexpr const char* kUnrollAgainMark = "manifold.ptxas.unroll";
// IR instructions of the unrolled loop before simplification (constant indices fold much of it).
constexpr unsigned kMaxUnrolledInstructions = 2048;

struct MarkLoopsForCudaStyleUnrolling : llvm::PassInfoMixin<MarkLoopsForCudaStyleUnrolling> {
  llvm::PreservedAnalyses run(llvm::Loop& loop, llvm::LoopAnalysisManager&,
                              llvm::LoopStandardAnalysisResults& analyses, llvm::LPMUpdater&) {
    if (!loop.isInnermost() || llvm::findOptionMDForLoop(&loop, "llvm.loop.unroll.disable") ||
        llvm::findOptionMDForLoop(&loop, "llvm.loop.unroll.count") ||
        llvm::findOptionMDForLoop(&loop, "llvm.loop.unroll.full"))
      return llvm::PreservedAnalyses::all();
    unsigned size = 0;
    for (const llvm::BasicBlock* block : loop.blocks()) {
      for (const llvm::Instruction& inst : *block)
        if (llvm::isa<llvm::CallBase>(inst) && !llvm::isa<llvm::IntrinsicInst>(inst))
          return llvm::PreservedAnalyses::all();  // a call stays: leave it to the cost model
      size += static_cast<unsigned>(block->size());
    }
    const unsigned trips = analyses.SE.getSmallConstantTripCount(&loop);
    if (trips == 0 && size <= kMaxRuntimeUnrolledBody &&
        !llvm::isa<llvm::SCEVCouldNotCompute>(analyses.SE.getBackedgeTakenCount(&loop))) {
      llvm::addStringMetadataToLoop(&loop, "llvm.loop.unroll.count", kRuntimeUnrollCount);
      llvm::addStringMetadataToLoop(&loop, kUnrollAgainMark);
      return llvm::PreservedAnalyses::all();  // metadata only
    }
    if (trips < 2 || trips > kMaxTripCount) return llvm::PreservedAnalyses::all();
    if (size * trips > kMaxUnrolledInstructions) return llvm::PreservedAnalyses::all();
    llvm::addStringMetadataToLoop(&loop, "llvm.loop.unroll.full");
    return llvm::PreservedAnalyses::all();  // metadata only
  }
};

// After the pipeline: the loops unrolled by kRuntimeUnrollCount lose LLVM's "done" mark, except
// their remainder loops (at most kRuntimeUnrollCount - 1 iterations), which stay rolled.
struct LetPtxasUnrollAgain : llvm::PassInfoMixin<LetPtxasUnrollAgain> {
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses) {
    llvm::LoopInfo& loops = analyses.getResult<llvm::LoopAnalysis>(function);
    llvm::ScalarEvolution& evolution = analyses.getResult<llvm::ScalarEvolutionAnalysis>(function);
    for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
      llvm::MDNode* id = loop->getLoopID();
      if (!id || !llvm::findOptionMDForLoopID(id, kUnrollAgainMark)) continue;
      const unsigned most = evolution.getSmallConstantMaxTripCount(loop);
      const bool remainder = most > 0 && most < kRuntimeUnrollCount;
      std::vector<llvm::StringRef> removed{kUnrollAgainMark};
      if (!remainder) removed.push_back("llvm.loop.unroll.");
      loop->setLoopID(llvm::makePostTransformationMetadata(function.getContext(), id, removed, {}));
    }
    return llvm::PreservedAnalyses::all();  // metadata only
  }
};

}  // namespace

void register_cuda_style_unrolling(llvm::PassBuilder& builder) {
  builder.registerLateLoopOptimizationsEPCallback(
      [](llvm::LoopPassManager& passes, llvm::OptimizationLevel level) {
        if (level.getSpeedupLevel() >= 2) passes.addPass(MarkLoopsForCudaStyleUnrolling());
      });
  builder.registerOptimizerLastEPCallback(
      [](llvm::ModulePassManager& passes, llvm::OptimizationLevel level, llvm::ThinOrFullLTOPhase) {
        if (level.getSpeedupLevel() >= 2)
          passes.addPass(llvm::createModuleToFunctionPassAdaptor(LetPtxasUnrollAgain()));
      });
}

}  // namespace manifold::compiler
