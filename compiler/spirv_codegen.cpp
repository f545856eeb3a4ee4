#include "compiler/spirv_codegen.h"

#include <llvm/CodeGen/MachineFunction.h>
#include <llvm/CodeGen/MachineModuleInfo.h>
#include <llvm/CodeGen/TargetSubtargetInfo.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Pass.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <mutex>
#include <unordered_set>

namespace manifold::compiler {
namespace {

// LLVM 22's SPIR-V backend numbers basic blocks through a process-wide table keyed by
// (MachineFunction address, block number) that no module clears (SPIRVModuleAnalysis::MAI's
// BBNumToRegMap). A MachineFunction allocated where one of an earlier build lived inherits that
// build's label ids, which then collide with this module's ids. This pass, run before code
// generation, creates every function's MachineFunction itself, at an address no earlier build
// handed to the backend; the backend then finds and uses them.
class FreshMachineFunctions final : public llvm::ModulePass {
 public:
  static char ID;
  FreshMachineFunctions(llvm::MachineModuleInfoWrapperPass& info, const llvm::TargetMachine& tm)
      : llvm::ModulePass(ID), info_(info), machine_(tm) {}

  llvm::StringRef getPassName() const override { return "Manifold fresh MachineFunctions"; }
  void getAnalysisUsage(llvm::AnalysisUsage& usage) const override { usage.setPreservesAll(); }

  bool runOnModule(llvm::Module& module) override {
    llvm::MachineModuleInfo& info = info_.getMMI();
    // Functions numbered apart from those the backend may still create on its own.
    unsigned number = 1u << 20;
    std::vector<std::unique_ptr<llvm::MachineFunction>> refused;  // freed after this pass
    for (llvm::Function& function : module) {
      // The backend replaces functions passing aggregates by value (SPIRVPrepareFunctions):
      // theirs are made later, unguarded; the emitted module's validation still catches a
      // collision. Kernels never pass aggregates by value.
      if (function.isDeclaration() || has_aggregate_signature(function) ||
          info.getMachineFunction(function))
        continue;
      const llvm::TargetSubtargetInfo& subtarget = *machine_.getSubtargetImpl(function);
      for (;;) {
        auto created = std::make_unique<llvm::MachineFunction>(function, machine_, subtarget,
                                                               info.getContext(), number++);
        if (!used_addresses().insert(created.get()).second) {
          refused.push_back(std::move(created));  // held so that the next one lands elsewhere
          continue;
        }
        created->initTargetMachineFunctionInfo(subtarget);
        machine_.registerMachineRegisterInfoCallback(*created);
        info.insertFunction(function, std::move(created));
        break;
      }
    }
    return false;
  }

 private:
  static bool has_aggregate_signature(const llvm::Function& function) {
    if (function.getReturnType()->isAggregateType()) return true;
    for (const llvm::Argument& argument : function.args())
      if (argument.getType()->isAggregateType()) return true;
    return false;
  }

  // Addresses of every MachineFunction given to the backend in this process (8 bytes per
  // kernel built: the backend's own table grows faster). Guarded by emit_spirv's lock.
  static std::unordered_set<const void*>& used_addresses() {
    static std::unordered_set<const void*> addresses;
    return addresses;
  }

  llvm::MachineModuleInfoWrapperPass& info_;
  const llvm::TargetMachine& machine_;
};

char FreshMachineFunctions::ID = 0;

}  // namespace

bool emit_spirv(llvm::Module& module, llvm::TargetMachine& machine, std::vector<uint8_t>* code,
                std::string* log) {
  static std::mutex codegen;
  std::lock_guard lock(codegen);
  module.setDataLayout(machine.createDataLayout());
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  // Owned by `passes` once added (by addPassesToEmitFile).
  auto* info = new llvm::MachineModuleInfoWrapperPass(&machine);
  passes.add(new FreshMachineFunctions(*info, machine));
  if (machine.addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::ObjectFile,
                                  /*DisableVerify=*/true, info)) {
    *log += "internal error: the SPIR-V backend cannot emit object files\n";
    return false;
  }
  passes.run(module);
  code->assign(buffer.begin(), buffer.end());
  return true;
}

}  // namespace manifold::compiler
