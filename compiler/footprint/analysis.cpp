#include "compiler/footprint/analysis.h"

#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/InstSimplifyPass.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "compiler/footprint/kernel.h"
#include "compiler/kernel_info.h"
#include "compiler/stages.h"

namespace manifold::compiler {

void analyze_footprints(const llvm::Module& module, std::vector<KernelInfo>& kernels) {
  if (kernels.empty()) return;
  // A copy with every helper inlined into the kernels and values in registers, so that index
  // arithmetic is one expression; the program's own module goes on to its pipeline unchanged.
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
  for (llvm::Function& function : *copy) {
    if (function.isDeclaration()) continue;
    function.removeFnAttr(llvm::Attribute::OptimizeNone);
    function.removeFnAttr(llvm::Attribute::NoInline);
    if (!is_kernel(function)) {
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
      function.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  }
  run_module_passes(*copy, nullptr, [](llvm::PassBuilder&, llvm::ModulePassManager& passes) {
    passes.addPass(llvm::AlwaysInlinerPass(/*InsertLifetime=*/false));
    llvm::FunctionPassManager cleanup;
    // No CFG changes (folding branches into selects would hide induction variables), and no
    // instcombine: it widens 32-bit index arithmetic into 64-bit shifts and drops nsw flags,
    // which is exactly what the analysis reads.
    cleanup.addPass(llvm::SROAPass(llvm::SROAOptions::PreserveCFG));
    cleanup.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/false));
    cleanup.addPass(llvm::InstSimplifyPass());
    passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(cleanup)));
  });
  for (KernelInfo& info : kernels) {
    const llvm::Function* kernel = copy->getFunction(info.name);
    if (kernel && !kernel->isDeclaration() && is_kernel(*kernel))
      info.footprint = footprint::analyze_kernel(*kernel, info);
  }
}

}  // namespace manifold::compiler
