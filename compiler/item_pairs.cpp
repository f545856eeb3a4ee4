#include "compiler/item_pairs.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <string>
#include <vector>

namespace manifold::compiler {
namespace {

using llvm::BasicBlock;
using llvm::Instruction;
using llvm::IRBuilder;
using llvm::Value;

// Element-wise intrinsics whose one overloaded type is the result's and whose other operands
// have that type too (or are constants, such as ctlz's flag): one call on the joined vectors
// computes both work-items.
bool elementwise_intrinsic(llvm::Intrinsic::ID id) {
  namespace I = llvm::Intrinsic;
  switch (id) {
    case I::fmuladd:
    case I::fma:
    case I::fabs:
    case I::sqrt:
    case I::minnum:
    case I::maxnum:
    case I::minimum:
    case I::maximum:
    case I::copysign:
    case I::floor:
    case I::ceil:
    case I::trunc:
    case I::rint:
    case I::nearbyint:
    case I::round:
    case I::roundeven:
    case I::fshl:
    case I::fshr:
    case I::ctpop:
    case I::ctlz:
    case I::cttz:
    case I::bswap:
    case I::bitreverse:
    case I::abs:
    case I::smin:
    case I::smax:
    case I::umin:
    case I::umax:
    case I::sadd_sat:
    case I::uadd_sat:
    case I::ssub_sat:
    case I::usub_sat:
      return true;
    default:
      return false;
  }
}

class Pairing {
 public:
  Pairing(const ItemLoop& loop, unsigned register_bits)
      : loop_(loop), register_bits_(register_bits), context_(loop.function->getContext()) {}

  bool run() {
    if (!collect_body() || !find_varying() || !choose_lanes()) return false;
    build();
    loop_.function->addFnAttr(kItemPairsAttribute, std::to_string(lanes_));
    return true;
  }

 private:
  // How the pair loop holds an original value: once for both work-items, once per work-item,
  // or as one vector of twice the lanes (work-item x in the low half, x + 1 in the high half).
  enum class Shape { Uniform, Pair, Wide };
  struct Held {
    Shape shape = Shape::Uniform;
    Value* first = nullptr;   // Uniform: the value; Pair: work-item x's; Wide: the joined vector
    Value* second = nullptr;  // Pair: work-item x + 1's
  };

  // The body in reverse post-order (every operand but a phi's is built before its user).
  bool collect_body() {
    std::vector<std::pair<BasicBlock*, unsigned>> stack = {{loop_.header, 0}};
    body_set_.insert(loop_.header);
    while (!stack.empty()) {
      auto& [block, next] = stack.back();
      Instruction* terminator = block->getTerminator();
      if (!llvm::isa<llvm::BranchInst>(terminator) && !llvm::isa<llvm::SwitchInst>(terminator) &&
          !llvm::isa<llvm::UnreachableInst>(terminator))
        return false;
      if (next < terminator->getNumSuccessors()) {
        BasicBlock* successor = terminator->getSuccessor(next++);
        if (successor != loop_.latch && body_set_.insert(successor).second)
          stack.push_back({successor, 0});
        continue;
      }
      body_.push_back(block);
      stack.pop_back();
    }
    std::reverse(body_.begin(), body_.end());
    // Values of the body must not be used after it: the pair loop defines them twice.
    for (BasicBlock* block : body_)
      for (Instruction& inst : *block)
        for (llvm::User* user : inst.users())
          if (&inst != loop_.item &&
              !body_set_.contains(llvm::cast<Instruction>(user)->getParent()))
            return false;
    return true;
  }

  // A value is varying when it may differ between two work-items: derived from the x id or
  // from private memory, or produced by an operation with effects, which each work-item does.
  bool find_varying() {
    varying_.insert(loop_.item);
    for (Instruction& inst : loop_.function->getEntryBlock())
      if (llvm::isa<llvm::AllocaInst>(inst)) varying_.insert(&inst);
    for (bool changed = true; changed;) {
      changed = false;
      for (BasicBlock* block : body_)
        for (Instruction& inst : *block) {
          if (varying_.contains(&inst) || inst.isTerminator()) continue;
          bool varies = inst.mayHaveSideEffects() || inst.mayWriteToMemory();
          if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst)) varies |= !load->isSimple();
          for (Value* operand : inst.operands()) varies |= varying_.contains(operand);
          if (varies) changed = varying_.insert(&inst).second || changed;
        }
    }
    // Both work-items must take the same path through the body.
    for (BasicBlock* block : body_) {
      Instruction* terminator = block->getTerminator();
      if (auto* branch = llvm::dyn_cast<llvm::BranchInst>(terminator);
          branch && branch->isConditional() && varying_.contains(branch->getCondition()))
        return false;
      if (auto* choice = llvm::dyn_cast<llvm::SwitchInst>(terminator);
          choice && varying_.contains(choice->getCondition()))
        return false;
    }
    return true;
  }

  bool half_register(llvm::Type* type) const {
    auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
    return vector && !vector->getElementType()->isPointerTy() &&
           2 * vector->getPrimitiveSizeInBits().getFixedValue() == register_bits_;
  }

  // The lane count of the kernel's half-register vectors, when they carry the work: pairing
  // pays where most varying operations become one full-register operation.
  bool choose_lanes() {
    llvm::DenseMap<unsigned, unsigned> by_lanes;
    for (Value* value : varying_)
      if (auto* inst = llvm::dyn_cast<Instruction>(value); inst && half_register(inst->getType()))
        ++by_lanes[llvm::cast<llvm::FixedVectorType>(inst->getType())->getNumElements()];
    for (auto [lanes, count] : by_lanes)
      if (!lanes_ || count > by_lanes[lanes_]) lanes_ = lanes;
    if (!lanes_) return false;
    unsigned wide = 0, per_item = 0;
    for (Value* value : varying_) {
      auto* inst = llvm::dyn_cast<Instruction>(value);
      if (!inst || !body_set_.contains(inst->getParent()) || inst == loop_.item) continue;
      if (widens(*inst))
        ++wide;
      else if (!llvm::isa<llvm::GetElementPtrInst>(inst) && !llvm::isa<llvm::PHINode>(inst) &&
               !llvm::isa<llvm::ExtractElementInst>(inst) && !llvm::isa<llvm::CastInst>(inst))
        ++per_item;
    }
    return wide >= 4 && wide >= 2 * per_item;
  }

  bool lanes_of(llvm::Type* type) const {
    auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
    return vector && vector->getNumElements() == lanes_ && !vector->getElementType()->isPointerTy();
  }

  // Whether a varying instruction becomes one operation on joined vectors (its shape before
  // operands are known: operands that are not joined get joined).
  bool widens(const Instruction& inst) const {
    if (!lanes_of(inst.getType())) return false;
    if (llvm::isa<llvm::BinaryOperator>(inst) || llvm::isa<llvm::UnaryOperator>(inst) ||
        llvm::isa<llvm::CmpInst>(inst) || llvm::isa<llvm::PHINode>(inst) ||
        llvm::isa<llvm::FreezeInst>(inst))
      return true;
    if (auto* cast = llvm::dyn_cast<llvm::CastInst>(&inst)) return lanes_of(cast->getSrcTy());
    if (auto* select = llvm::dyn_cast<llvm::SelectInst>(&inst))
      return select->getCondition()->getType()->isVectorTy() ||
             !varying_.contains(select->getCondition());
    if (auto* shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(&inst))
      return lanes_of(shuffle->getOperand(0)->getType());
    if (auto* insert = llvm::dyn_cast<llvm::InsertElementInst>(&inst))
      return llvm::isa<llvm::ConstantInt>(insert->getOperand(2));
    if (auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst)) {
      if (!elementwise_intrinsic(call->getIntrinsicID())) return false;
      for (const Value* arg : call->args())
        if (arg->getType() != inst.getType() && !llvm::isa<llvm::Constant>(arg)) return false;
      return true;
    }
    return false;
  }

  llvm::FixedVectorType* wide_type(llvm::Type* type) const {
    auto* vector = llvm::cast<llvm::FixedVectorType>(type);
    return llvm::FixedVectorType::get(vector->getElementType(), 2 * lanes_);
  }

  // Where a value derived from `value` can be computed once `value` exists.
  IRBuilder<> right_after(Value* value) {
    if (auto* inst = llvm::dyn_cast<Instruction>(value)) {
      if (llvm::isa<llvm::PHINode>(inst))
        return IRBuilder<>(inst->getParent(), inst->getParent()->getFirstInsertionPt());
      return IRBuilder<>(inst->getParent(), std::next(inst->getIterator()));
    }
    BasicBlock& entry = loop_.function->getEntryBlock();
    return IRBuilder<>(&entry, entry.getFirstInsertionPt());
  }

  Held held(Value* original) {
    if (auto it = held_.find(original); it != held_.end()) return it->second;
    return {Shape::Uniform, original, nullptr};  // defined before the loop, or a constant
  }

  llvm::SmallVector<int, 32> half_mask(unsigned half) const {
    llvm::SmallVector<int, 32> mask;
    for (unsigned i = 0; i < lanes_; ++i) mask.push_back(static_cast<int>(half * lanes_ + i));
    return mask;
  }

  // Work-item x's (half 0) or x + 1's (half 1) value.
  Value* of_item(Value* original, unsigned half) {
    Held h = held(original);
    if (h.shape == Shape::Uniform) return h.first;
    if (h.shape == Shape::Pair) return half ? h.second : h.first;
    Value*& split = halves_[{h.first, half}];
    if (!split) split = right_after(h.first).CreateShuffleVector(h.first, half_mask(half));
    return split;
  }

  // Both work-items' values as one vector of 2 x lanes_.
  Value* joined(Value* original) {
    Held h = held(original);
    if (h.shape == Shape::Wide) return h.first;
    Value*& join = joins_[original];
    if (join) return join;
    llvm::SmallVector<int, 32> mask;
    for (unsigned i = 0; i < 2 * lanes_; ++i) mask.push_back(static_cast<int>(i));
    if (h.shape == Shape::Uniform)
      join = right_after(h.first).CreateShuffleVector(h.first, h.first, mask);
    else
      join = right_after(h.second).CreateShuffleVector(h.first, h.second, mask);
    return join;
  }

  void build();
  void build_instruction(IRBuilder<>& b, Instruction& inst);
  Value* build_wide(IRBuilder<>& b, Instruction& inst);

  const ItemLoop& loop_;
  unsigned register_bits_;
  llvm::LLVMContext& context_;
  unsigned lanes_ = 0;
  std::vector<BasicBlock*> body_;
  llvm::SmallPtrSet<BasicBlock*, 32> body_set_;
  llvm::SmallPtrSet<Value*, 32> varying_;
  llvm::DenseMap<Value*, Held> held_;
  llvm::DenseMap<Value*, Value*> joins_;
  llvm::DenseMap<std::pair<Value*, unsigned>, Value*> halves_;
  llvm::DenseMap<BasicBlock*, BasicBlock*> blocks_;
};

Value* Pairing::build_wide(IRBuilder<>& b, Instruction& inst) {
  llvm::Type* type = wide_type(inst.getType());
  if (auto* binary = llvm::dyn_cast<llvm::BinaryOperator>(&inst)) {
    Value* result = b.CreateBinOp(binary->getOpcode(), joined(binary->getOperand(0)),
                                  joined(binary->getOperand(1)));
    if (auto* made = llvm::dyn_cast<Instruction>(result)) made->copyIRFlags(binary);
    return result;
  }
  if (auto* unary = llvm::dyn_cast<llvm::UnaryOperator>(&inst)) {
    Value* result = b.CreateUnOp(unary->getOpcode(), joined(unary->getOperand(0)));
    if (auto* made = llvm::dyn_cast<Instruction>(result)) made->copyIRFlags(unary);
    return result;
  }
  if (auto* compare = llvm::dyn_cast<llvm::CmpInst>(&inst)) {
    Value* result = b.CreateCmp(compare->getPredicate(), joined(compare->getOperand(0)),
                                joined(compare->getOperand(1)));
    if (auto* made = llvm::dyn_cast<Instruction>(result)) made->copyIRFlags(compare);
    return result;
  }
  if (auto* freeze = llvm::dyn_cast<llvm::FreezeInst>(&inst))
    return b.CreateFreeze(joined(freeze->getOperand(0)));
  if (auto* cast = llvm::dyn_cast<llvm::CastInst>(&inst))
    return b.CreateCast(cast->getOpcode(), joined(cast->getOperand(0)), type);
  if (auto* select = llvm::dyn_cast<llvm::SelectInst>(&inst)) {
    Value* condition = select->getCondition();
    condition = condition->getType()->isVectorTy() ? joined(condition) : held(condition).first;
    Value* result =
        b.CreateSelect(condition, joined(select->getTrueValue()), joined(select->getFalseValue()));
    if (auto* made = llvm::dyn_cast<Instruction>(result)) made->copyIRFlags(select);
    return result;
  }
  if (auto* shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(&inst)) {
    // Lane i of the first operand is lane i (x) or lanes_ + i (x + 1) of its joined vector; the
    // second operand's lanes follow the first's 2 x lanes_.
    llvm::SmallVector<int, 32> mask;
    for (unsigned half = 0; half < 2; ++half)
      for (int m : shuffle->getShuffleMask()) {
        if (m < 0) {
          mask.push_back(-1);
          continue;
        }
        const unsigned operand = static_cast<unsigned>(m) / lanes_;
        const unsigned lane = static_cast<unsigned>(m) % lanes_;
        mask.push_back(static_cast<int>(operand * 2 * lanes_ + half * lanes_ + lane));
      }
    return b.CreateShuffleVector(joined(shuffle->getOperand(0)), joined(shuffle->getOperand(1)),
                                 mask);
  }
  if (auto* insert = llvm::dyn_cast<llvm::InsertElementInst>(&inst)) {
    const uint64_t lane = llvm::cast<llvm::ConstantInt>(insert->getOperand(2))->getZExtValue();
    Value* vector = joined(insert->getOperand(0));
    vector = b.CreateInsertElement(vector, of_item(insert->getOperand(1), 0), lane);
    return b.CreateInsertElement(vector, of_item(insert->getOperand(1), 1), lanes_ + lane);
  }
  auto* call = llvm::cast<llvm::IntrinsicInst>(&inst);
  llvm::SmallVector<Value*, 4> args;
  for (Value* arg : call->args())
    args.push_back(arg->getType() == inst.getType() ? joined(arg) : arg);
  llvm::Function* wide = llvm::Intrinsic::getOrInsertDeclaration(loop_.function->getParent(),
                                                                 call->getIntrinsicID(), {type});
  llvm::CallInst* result = b.CreateCall(wide, args);
  result->copyIRFlags(call);
  return result;
}

void Pairing::build_instruction(IRBuilder<>& b, Instruction& inst) {
  auto clone_with = [&](unsigned half) {
    Instruction* copy = inst.clone();
    for (llvm::Use& operand : copy->operands())
      if (!llvm::isa<BasicBlock>(operand.get())) operand.set(of_item(operand.get(), half));
    b.Insert(copy, inst.getName());
    return copy;
  };
  if (!varying_.contains(&inst)) {
    held_[&inst] = {Shape::Uniform, clone_with(0), nullptr};
    return;
  }
  if (auto* extract = llvm::dyn_cast<llvm::ExtractElementInst>(&inst);
      extract && held(extract->getVectorOperand()).shape == Shape::Wide &&
      llvm::isa<llvm::ConstantInt>(extract->getIndexOperand())) {
    const uint64_t lane = llvm::cast<llvm::ConstantInt>(extract->getIndexOperand())->getZExtValue();
    Value* vector = joined(extract->getVectorOperand());
    held_[&inst] = {Shape::Pair, b.CreateExtractElement(vector, lane),
                    b.CreateExtractElement(vector, lanes_ + lane)};
    return;
  }
  if (widens(inst)) {
    held_[&inst] = {Shape::Wide, build_wide(b, inst), nullptr};
    return;
  }
  Instruction* first = clone_with(0);
  held_[&inst] = {Shape::Pair, first, clone_with(1)};
}

void Pairing::build() {
  llvm::Function& f = *loop_.function;
  llvm::Type* index = loop_.item->getType();
  auto constant = [&](uint64_t v) { return llvm::ConstantInt::get(index, v); };
  BasicBlock* guard = BasicBlock::Create(context_, "pairs.guard", &f);
  BasicBlock* latch = BasicBlock::Create(context_, "pairs.latch", &f);
  BasicBlock* leave = BasicBlock::Create(context_, "pairs.exit", &f);
  for (BasicBlock* block : body_)
    blocks_[block] = BasicBlock::Create(context_, block->getName() + ".pair", &f);
  blocks_[loop_.latch] = latch;

  // Private memory: work-item x + 1 gets its own copy of every alloca.
  for (Instruction& inst : llvm::make_early_inc_range(f.getEntryBlock()))
    if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst)) {
      Instruction* copy = alloca->clone();
      copy->insertAfter(alloca->getIterator());
      copy->setName(alloca->getName() + ".pair");
      held_[alloca] = {Shape::Pair, alloca, copy};
    }

  // Entry: pairs while two work-items are left, then the original loop for an odd last one.
  loop_.preheader->getTerminator()->replaceSuccessorWith(loop_.header, guard);
  IRBuilder<> b(guard);
  b.CreateCondBr(b.CreateICmpULT(constant(1), loop_.end), blocks_[loop_.header], loop_.header);
  b.SetInsertPoint(blocks_[loop_.header]);
  llvm::PHINode* item = b.CreatePHI(index, 2, "lx.pair");
  Value* next_item = b.CreateAdd(item, constant(1), "lx.second", true, true);
  held_[loop_.item] = {Shape::Pair, item, next_item};
  item->addIncoming(constant(0), guard);
  b.SetInsertPoint(latch);
  Value* stepped = b.CreateAdd(item, constant(2), "lx.pair.next", true, true);
  item->addIncoming(stepped, latch);
  b.CreateCondBr(b.CreateICmpULT(b.CreateAdd(stepped, constant(1), "", true, true), loop_.end),
                 blocks_[loop_.header], leave);
  b.SetInsertPoint(leave);
  b.CreateCondBr(b.CreateICmpULT(stepped, loop_.end), loop_.header, loop_.exit);
  for (unsigned i = 0; i < loop_.item->getNumIncomingValues(); ++i)
    if (loop_.item->getIncomingBlock(i) == loop_.preheader) loop_.item->setIncomingBlock(i, guard);
  loop_.item->addIncoming(stepped, leave);

  std::vector<std::pair<llvm::PHINode*, Held>> phis;
  for (BasicBlock* block : body_) {
    b.SetInsertPoint(blocks_[block]);
    for (Instruction& inst : *block) {
      if (&inst == loop_.item) continue;
      if (auto* phi = llvm::dyn_cast<llvm::PHINode>(&inst)) {
        Held h;
        const unsigned n = phi->getNumIncomingValues();
        if (!varying_.contains(phi)) {
          h = {Shape::Uniform, b.CreatePHI(phi->getType(), n, phi->getName()), nullptr};
        } else if (widens(*phi)) {
          h = {Shape::Wide, b.CreatePHI(wide_type(phi->getType()), n, phi->getName()), nullptr};
        } else {
          h = {Shape::Pair, b.CreatePHI(phi->getType(), n, phi->getName()),
               b.CreatePHI(phi->getType(), n, phi->getName())};
        }
        held_[phi] = h;
        phis.push_back({phi, h});
        continue;
      }
      if (inst.isTerminator()) {
        Instruction* copy = inst.clone();
        for (llvm::Use& operand : copy->operands()) {
          if (auto* target = llvm::dyn_cast<BasicBlock>(operand.get()))
            operand.set(blocks_.lookup(target));
          else
            operand.set(held(operand.get()).first);
        }
        b.Insert(copy);
        continue;
      }
      build_instruction(b, inst);
    }
  }
  for (auto& [phi, h] : phis) {
    auto* first = llvm::cast<llvm::PHINode>(h.first);
    for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i) {
      Value* value = phi->getIncomingValue(i);
      BasicBlock* from = blocks_.lookup(phi->getIncomingBlock(i));
      if (!from)
        continue;  // an edge from outside the body cannot reach a body block but the header
      if (h.shape == Shape::Uniform) {
        first->addIncoming(held(value).first, from);
      } else if (h.shape == Shape::Wide) {
        first->addIncoming(joined(value), from);
      } else {
        first->addIncoming(of_item(value, 0), from);
        llvm::cast<llvm::PHINode>(h.second)->addIncoming(of_item(value, 1), from);
      }
    }
  }
}

}  // namespace

bool pair_work_items(const ItemLoop& loop, unsigned register_bits) {
  if (register_bits < 256) return false;
  return Pairing(loop, register_bits).run();
}

}  // namespace manifold::compiler
