#include "compiler/nvptx_narrow_integers.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/KnownBits.h>

namespace manifold::compiler {

namespace {

// Every value of the set satisfies zext(narrow(v)) == v: its known bits or its evolution put it
// below 2^32, and each rule below computes exactly its low half from its operands' low halves.
class Narrower {
  static constexpr unsigned kMaxDepth = 32;

 public:
  explicit Narrower(llvm::Function& function)
      : library_info_(function.getParent()->getTargetTriple()),
        library_(library_info_, &function),
        assumptions_(function),
        dominators_(function),
        loops_(dominators_),
        evolution_(function, library_, assumptions_, dominators_, loops_),
        layout_(function.getParent()->getDataLayout()),
        i32_(llvm::Type::getInt32Ty(function.getContext())),
        i64_(llvm::Type::getInt64Ty(function.getContext())) {
    for (llvm::BasicBlock* block : llvm::ReversePostOrderTraversal<llvm::Function*>(&function)) {
      blocks_.push_back(block);
      reachable_.insert(block);
    }
  }

  // Whether `value` (i64) can be computed in i32; collects it and what it needs. Index
  // arithmetic is shallow: deeper chains are left alone, which bounds the recursion.
  bool admit(llvm::Value* value, unsigned depth = 0) {
    if (admitted_.count(value)) return true;
    if (auto* constant = llvm::dyn_cast<llvm::ConstantInt>(value))
      return constant->getValue().isIntN(32);
    if (auto* zext = llvm::dyn_cast<llvm::ZExtInst>(value))
      return zext->getSrcTy()->getIntegerBitWidth() <= 32;
    auto* inst = llvm::dyn_cast<llvm::Instruction>(value);
    if (!inst || depth > kMaxDepth || !reachable(inst->getParent()) || !fits(inst)) return false;
    admitted_[inst] = nullptr;  // optimistic for the cycles through phis
    order_.push_back(inst);
    bool ok = true;
    if (auto* phi = llvm::dyn_cast<llvm::PHINode>(inst)) {
      for (llvm::Value* incoming : phi->incoming_values()) ok = ok && admit(incoming, depth + 1);
    } else if (auto* binary = llvm::dyn_cast<llvm::BinaryOperator>(inst);
               binary && binary->getOpcode() == llvm::Instruction::And) {
      // One side below 2^32 bounds the result: the other one is truncated.
      ok = admit(binary->getOperand(0), depth + 1) || admit(binary->getOperand(1), depth + 1);
    } else if (auto* binary = llvm::dyn_cast<llvm::BinaryOperator>(inst)) {
      ok = rule_applies(*binary) && admit(binary->getOperand(0), depth + 1) &&
           admit(binary->getOperand(1), depth + 1);
    } else if (auto* select = llvm::dyn_cast<llvm::SelectInst>(inst)) {
      ok = admit(select->getTrueValue(), depth + 1) && admit(select->getFalseValue(), depth + 1);
    } else {
      ok = false;
    }
    if (!ok) {
      // Nothing admitted after this value may stay: it may rely on this one.
      while (order_.back() != inst) {
        admitted_.erase(order_.back());
        order_.pop_back();
      }
      admitted_.erase(inst);
      order_.pop_back();
    }
    return ok;
  }

  // The i32 form of every admitted value; then the admitted instructions' other 64-bit uses read
  // the zero extension, and `compares` (of two admitted values) compare in i32.
  bool rewrite(llvm::ArrayRef<llvm::ICmpInst*> compares) {
    if (order_.empty()) return false;
    for (llvm::Instruction* inst : order_)
      if (auto* phi = llvm::dyn_cast<llvm::PHINode>(inst)) {
        llvm::IRBuilder<> builder(phi);
        admitted_[inst] = builder.CreatePHI(i32_, phi->getNumIncomingValues(), phi->getName());
      }
    // Definitions before uses: the blocks in reverse post-order.
    for (llvm::BasicBlock* block : blocks_)
      for (llvm::Instruction& inst : *block) {
        auto found = admitted_.find(&inst);
        if (found == admitted_.end() || llvm::isa<llvm::PHINode>(inst)) continue;
        llvm::IRBuilder<> builder(&inst);
        if (auto* binary = llvm::dyn_cast<llvm::BinaryOperator>(&inst))
          found->second =
              builder.CreateBinOp(binary->getOpcode(), narrow(binary->getOperand(0), &inst),
                                  narrow(binary->getOperand(1), &inst), binary->getName());
        else if (auto* select = llvm::dyn_cast<llvm::SelectInst>(&inst))
          found->second =
              builder.CreateSelect(select->getCondition(), narrow(select->getTrueValue(), &inst),
                                   narrow(select->getFalseValue(), &inst), select->getName());
      }
    for (llvm::Instruction* inst : order_)
      if (auto* phi = llvm::dyn_cast<llvm::PHINode>(inst)) {
        auto* narrowed = llvm::cast<llvm::PHINode>(admitted_[inst]);
        for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i) {
          llvm::BasicBlock* from = phi->getIncomingBlock(i);
          narrowed->addIncoming(narrow(phi->getIncomingValue(i), from->getTerminator()), from);
        }
      }
    const llvm::SmallPtrSet<llvm::ICmpInst*, 8> narrowed_compares(compares.begin(), compares.end());
    for (llvm::ICmpInst* compare : compares) {
      llvm::IRBuilder<> builder(compare);
      // Both sides are below 2^32: signed and unsigned order agree in 64 bits, not in 32.
      const llvm::CmpInst::Predicate predicate =
          compare->isEquality() ? compare->getPredicate() : compare->getUnsignedPredicate();
      llvm::Value* narrowed = builder.CreateICmp(predicate, narrow(compare->getOperand(0), compare),
                                                 narrow(compare->getOperand(1), compare));
      narrowed->takeName(compare);
      compare->replaceAllUsesWith(narrowed);
    }
    auto stays = [&](const llvm::Use& use) {
      auto* user = llvm::cast<llvm::Instruction>(use.getUser());
      auto* compare = llvm::dyn_cast<llvm::ICmpInst>(user);
      return !admitted_.count(user) && !(compare && narrowed_compares.count(compare));
    };
    for (llvm::Instruction* inst : order_) {
      if (llvm::none_of(inst->uses(), stays)) continue;
      llvm::IRBuilder<> builder(llvm::isa<llvm::PHINode>(inst)
                                    ? &*inst->getParent()->getFirstInsertionPt()
                                    : inst->getNextNode());
      llvm::Value* wide = builder.CreateZExt(admitted_[inst], i64_, inst->getName() + ".wide");
      inst->replaceUsesWithIf(wide, stays);
    }
    for (llvm::Instruction* inst : order_) inst->replaceAllUsesWith(llvm::PoisonValue::get(i64_));
    for (llvm::ICmpInst* compare : compares) compare->eraseFromParent();
    for (llvm::Instruction* inst : order_) inst->eraseFromParent();
    return true;
  }

 private:
  bool reachable(const llvm::BasicBlock* block) const { return reachable_.contains(block); }

  // Below 2^32 by its known bits (ranges of the work-item functions), or by its evolution (a
  // loop counter bounded by its exit test).
  bool fits(llvm::Value* value) {
    if (llvm::computeKnownBits(value, layout_).countMinLeadingZeros() >= 32) return true;
    return evolution_.getUnsignedRangeMax(evolution_.getSCEV(value)).isIntN(32);
  }

  // The 32-bit operation gives the low half of the 64-bit one when both operands and the result
  // are below 2^32 (no carry, borrow or bit shifted out), shifts by less than 32 excepted.
  bool rule_applies(const llvm::BinaryOperator& binary) const {
    switch (binary.getOpcode()) {
      case llvm::Instruction::Add:
      case llvm::Instruction::Sub:
      case llvm::Instruction::Mul:
      case llvm::Instruction::Or:
      case llvm::Instruction::Xor:
      case llvm::Instruction::UDiv:
      case llvm::Instruction::URem:
        return true;
      case llvm::Instruction::Shl:
      case llvm::Instruction::LShr:
        return llvm::computeKnownBits(binary.getOperand(1), layout_).getMaxValue().ult(32);
      default:
        return false;
    }
  }

  // The low half of `value` for its user `at` (an admitted value's i32 form, or a truncation).
  llvm::Value* narrow(llvm::Value* value, llvm::Instruction* at) {
    if (auto* constant = llvm::dyn_cast<llvm::ConstantInt>(value))
      return llvm::ConstantInt::get(i32_, constant->getValue().trunc(32));
    if (llvm::Value* narrowed = admitted_.lookup(value)) return narrowed;
    if (auto* zext = llvm::dyn_cast<llvm::ZExtInst>(value);
        zext && zext->getSrcTy()->getIntegerBitWidth() <= 32) {
      llvm::Value* source = zext->getOperand(0);
      if (source->getType() == i32_) return source;
      return llvm::IRBuilder<>(at).CreateZExt(source, i32_);
    }
    return llvm::IRBuilder<>(at).CreateTrunc(value, i32_);
  }

  llvm::TargetLibraryInfoImpl library_info_;
  llvm::TargetLibraryInfo library_;
  llvm::AssumptionCache assumptions_;
  llvm::DominatorTree dominators_;
  llvm::LoopInfo loops_;
  llvm::ScalarEvolution evolution_;
  llvm::SmallVector<llvm::BasicBlock*, 16> blocks_;  // reachable, definitions before uses
  llvm::SmallPtrSet<const llvm::BasicBlock*, 16> reachable_;
  const llvm::DataLayout& layout_;
  llvm::Type* i32_;
  llvm::Type* i64_;
  llvm::DenseMap<llvm::Value*, llvm::Value*> admitted_;
  llvm::SmallVector<llvm::Instruction*, 16> order_;
};

}  // namespace

bool narrow_index_arithmetic(llvm::Function& function) {
  if (function.isDeclaration()) return false;
  llvm::Type* i64 = llvm::Type::getInt64Ty(function.getContext());
  // The 64-bit phis (loop variables) and the compares that decide loops and branches.
  llvm::SmallVector<llvm::PHINode*, 8> phis;
  llvm::SmallVector<llvm::ICmpInst*, 8> compares;
  for (llvm::BasicBlock& block : function)
    for (llvm::Instruction& inst : block) {
      if (auto* phi = llvm::dyn_cast<llvm::PHINode>(&inst); phi && phi->getType() == i64)
        phis.push_back(phi);
      if (auto* compare = llvm::dyn_cast<llvm::ICmpInst>(&inst);
          compare && compare->getOperand(0)->getType() == i64)
        compares.push_back(compare);
    }
  // The analyses only for functions that have something to narrow.
  if (phis.empty() && compares.empty()) return false;
  Narrower narrower(function);
  for (llvm::PHINode* phi : phis) narrower.admit(phi);
  // A compare narrows when both of its sides do.
  llvm::SmallVector<llvm::ICmpInst*, 8> narrowed_compares;
  for (llvm::ICmpInst* compare : compares)
    if (narrower.admit(compare->getOperand(0)) && narrower.admit(compare->getOperand(1)))
      narrowed_compares.push_back(compare);
  return narrower.rewrite(narrowed_compares);
}

}  // namespace manifold::compiler
