#include "compiler/nvptx_math.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>

#include <vector>

namespace manifold::compiler {

namespace {

// Whether `division` may be off by at least 2 ulp (div.full.f32's bound).
bool allows_two_ulp(const llvm::BinaryOperator& division) {
  const auto* fp = llvm::dyn_cast<llvm::FPMathOperator>(&division);
  return fp && fp->getFPAccuracy() >= 2.0f;
}

}  // namespace

void use_full_range_division(llvm::Module& module, bool ftz) {
  std::vector<llvm::BinaryOperator*> divisions;
  for (llvm::Function& f : module)
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& inst : block)
        if (auto* op = llvm::dyn_cast<llvm::BinaryOperator>(&inst);
            op && op->getOpcode() == llvm::Instruction::FDiv &&
            op->getType()->getScalarType()->isFloatTy() && !op->hasApproxFunc() &&
            allows_two_ulp(*op))
          divisions.push_back(op);
  if (divisions.empty()) return;
  llvm::Function* full = llvm::Intrinsic::getOrInsertDeclaration(
      &module, ftz ? llvm::Intrinsic::nvvm_div_full_ftz : llvm::Intrinsic::nvvm_div_full);
  for (llvm::BinaryOperator* division : divisions) {
    // 1 / y: rcp.approx.f32, which the backend prints for an approximate division of 1.
    if (const auto* one = llvm::dyn_cast<llvm::Constant>(division->getOperand(0));
        one && one->isElementWiseEqual(llvm::ConstantFP::get(division->getType(), 1.0))) {
      division->setHasApproxFunc(true);
      continue;
    }
    llvm::IRBuilder<> b(division);
    llvm::Value* x = division->getOperand(0);
    llvm::Value* y = division->getOperand(1);
    llvm::Value* result;
    if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(division->getType())) {
      result = llvm::PoisonValue::get(vector);
      for (unsigned lane = 0; lane < vector->getNumElements(); ++lane)
        result = b.CreateInsertElement(
            result,
            b.CreateCall(full, {b.CreateExtractElement(x, lane), b.CreateExtractElement(y, lane)}),
            lane);
    } else {
      result = b.CreateCall(full, {x, y});
    }
    result->takeName(division);
    division->replaceAllUsesWith(result);
    division->eraseFromParent();
  }
}

void keep_library_divisions_exact(llvm::Module& module, const std::set<std::string>& program) {
  for (llvm::Function& f : module) {
    if (program.count(f.getName().str())) continue;
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& inst : block)
        if (inst.getOpcode() == llvm::Instruction::FDiv)
          inst.setMetadata(llvm::LLVMContext::MD_fpmath, nullptr);
  }
}

}  // namespace manifold::compiler
