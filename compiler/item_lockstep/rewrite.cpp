// The lockstep loop itself: blocks, instructions and phis of the body built again for N
// work-items at a time, ahead of the original loop.
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/item_lockstep/lockstep.h"

namespace manifold::compiler::lockstep {

llvm::FixedVectorType* Lockstep::wide_type(llvm::Type* type) const {
  return llvm::FixedVectorType::get(type->getScalarType(), ways_ * lanes_);
}

// Where a value derived from `value` can be computed once `value` exists.
IRBuilder<> Lockstep::right_after(Value* value) {
  if (auto* inst = llvm::dyn_cast<Instruction>(value)) {
    if (llvm::isa<llvm::PHINode>(inst))
      return IRBuilder<>(inst->getParent(), inst->getParent()->getFirstInsertionPt());
    return IRBuilder<>(inst->getParent(), std::next(inst->getIterator()));
  }
  BasicBlock& entry = loop_.function->getEntryBlock();
  return IRBuilder<>(&entry, entry.getFirstInsertionPt());
}

Lockstep::Held Lockstep::held(Value* original) {
  if (auto it = held_.find(original); it != held_.end()) return it->second;
  return {Shape::Uniform, {original}};  // defined before the loop, or a constant
}

// Work-item x + i's value.
Value* Lockstep::of_item(Value* original, unsigned i) {
  Held h = held(original);
  if (h.shape == Shape::Uniform) return h.values[0];
  if (h.shape == Shape::PerItem) return h.values[i];
  Value*& part = parts_[{h.values[0], i}];
  if (!part && scalar_) part = right_after(h.values[0]).CreateExtractElement(h.values[0], i);
  if (!part) {
    llvm::SmallVector<int, 16> mask;
    for (unsigned lane = 0; lane < lanes_; ++lane)
      mask.push_back(static_cast<int>(i * lanes_ + lane));
    part = right_after(h.values[0]).CreateShuffleVector(h.values[0], mask);
  }
  return part;
}

// The work-items' values as one vector of ways_ x lanes_, work-item x's lanes first.
Value* Lockstep::joined(Value* original) {
  Held h = held(original);
  if (h.shape == Shape::Wide) return h.values[0];
  Value*& join = joins_[original];
  if (join) return join;
  llvm::SmallVector<Value*, 8> level;
  for (unsigned i = 0; i < ways_; ++i)
    level.push_back(h.shape == Shape::Uniform ? h.values[0] : h.values[i]);
  IRBuilder<> b = right_after(level.back());
  if (scalar_) {
    if (h.shape == Shape::Uniform) return join = b.CreateVectorSplat(ways_, level[0]);
    join = llvm::PoisonValue::get(wide_type(original->getType()));
    for (unsigned i = 0; i < ways_; ++i) join = b.CreateInsertElement(join, level[i], i);
    return join;
  }
  while (level.size() > 1) {
    llvm::SmallVector<Value*, 8> next;
    for (size_t i = 0; i < level.size(); i += 2) {
      const unsigned n = llvm::cast<llvm::FixedVectorType>(level[i]->getType())->getNumElements();
      llvm::SmallVector<int, 32> mask;
      for (unsigned lane = 0; lane < 2 * n; ++lane) mask.push_back(static_cast<int>(lane));
      next.push_back(b.CreateShuffleVector(level[i], level[i + 1], mask));
    }
    level = std::move(next);
  }
  return join = level[0];
}

Value* Lockstep::build_wide(IRBuilder<>& b, Instruction& inst) {
  // Work-item x's element first, as joined vectors hold them.
  if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
    llvm::LoadInst* wide =
        b.CreateAlignedLoad(wide_type(load->getType()), of_item(load->getPointerOperand(), 0),
                            load->getAlign(), load->getName());
    wide->copyMetadata(*load, {llvm::LLVMContext::MD_tbaa, llvm::LLVMContext::MD_nontemporal});
    return wide;
  }
  if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
    llvm::StoreInst* wide =
        b.CreateAlignedStore(joined(store->getValueOperand()),
                             of_item(store->getPointerOperand(), 0), store->getAlign());
    wide->copyMetadata(*store, {llvm::LLVMContext::MD_tbaa, llvm::LLVMContext::MD_nontemporal});
    return wide;
  }
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
    condition = condition->getType()->isVectorTy() || varying_.contains(condition)
                    ? joined(condition)
                    : of_item(condition, 0);
    Value* result =
        b.CreateSelect(condition, joined(select->getTrueValue()), joined(select->getFalseValue()));
    if (auto* made = llvm::dyn_cast<Instruction>(result)) made->copyIRFlags(select);
    return result;
  }
  if (auto* shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(&inst)) {
    // Work-item x + i's lane l of the first operand is lane i x lanes_ + l of its joined vector;
    // the second operand's lanes follow the first's ways_ x lanes_.
    llvm::SmallVector<int, 32> mask;
    for (unsigned i = 0; i < ways_; ++i)
      for (int m : shuffle->getShuffleMask()) {
        if (m < 0) {
          mask.push_back(-1);
          continue;
        }
        const unsigned operand = static_cast<unsigned>(m) / lanes_;
        const unsigned lane = static_cast<unsigned>(m) % lanes_;
        mask.push_back(static_cast<int>((operand * ways_ + i) * lanes_ + lane));
      }
    return b.CreateShuffleVector(joined(shuffle->getOperand(0)), joined(shuffle->getOperand(1)),
                                 mask);
  }
  if (auto* insert = llvm::dyn_cast<llvm::InsertElementInst>(&inst)) {
    const uint64_t lane = llvm::cast<llvm::ConstantInt>(insert->getOperand(2))->getZExtValue();
    Value* vector = joined(insert->getOperand(0));
    for (unsigned i = 0; i < ways_; ++i)
      vector = b.CreateInsertElement(vector, of_item(insert->getOperand(1), i), i * lanes_ + lane);
    return vector;
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

void Lockstep::build_instruction(IRBuilder<>& b, Instruction& inst) {
  auto clone_with = [&](unsigned i) -> Value* {
    Instruction* copy = inst.clone();
    for (llvm::Use& operand : copy->operands())
      if (!llvm::isa<BasicBlock>(operand.get())) operand.set(of_item(operand.get(), i));
    b.Insert(copy, inst.getName());
    return copy;
  };
  if (!varying_.contains(&inst)) {
    held_[&inst] = {Shape::Uniform, {clone_with(0)}};
    return;
  }
  if (auto* extract = llvm::dyn_cast<llvm::ExtractElementInst>(&inst);
      extract && held(extract->getVectorOperand()).shape == Shape::Wide &&
      llvm::isa<llvm::ConstantInt>(extract->getIndexOperand())) {
    const uint64_t lane = llvm::cast<llvm::ConstantInt>(extract->getIndexOperand())->getZExtValue();
    Value* vector = joined(extract->getVectorOperand());
    Held h{Shape::PerItem, {}};
    for (unsigned i = 0; i < ways_; ++i)
      h.values.push_back(b.CreateExtractElement(vector, i * lanes_ + lane));
    held_[&inst] = std::move(h);
    return;
  }
  if (widens(inst)) {
    held_[&inst] = {Shape::Wide, {build_wide(b, inst)}};
    return;
  }
  Held h{Shape::PerItem, {}};
  for (unsigned i = 0; i < ways_; ++i) h.values.push_back(clone_with(i));
  held_[&inst] = std::move(h);
}

void Lockstep::build() {
  llvm::Function& f = *loop_.function;
  llvm::Type* index = loop_.item->getType();
  auto constant = [&](uint64_t v) { return llvm::ConstantInt::get(index, v); };
  BasicBlock* guard = BasicBlock::Create(context_, "lockstep.guard", &f);
  BasicBlock* latch = BasicBlock::Create(context_, "lockstep.latch", &f);
  BasicBlock* leave = BasicBlock::Create(context_, "lockstep.exit", &f);
  for (BasicBlock* block : body_)
    blocks_[block] = BasicBlock::Create(context_, block->getName() + ".lockstep", &f);
  blocks_[loop_.latch] = latch;

  // Private memory: each work-item of an iteration gets its own copy of every alloca.
  for (Instruction& inst : llvm::make_early_inc_range(f.getEntryBlock()))
    if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst)) {
      Held h{Shape::PerItem, {alloca}};
      for (unsigned i = 1; i < ways_; ++i) {
        Instruction* copy = alloca->clone();
        copy->insertAfter(alloca->getIterator());
        copy->setName(alloca->getName() + ".item" + std::to_string(i));
        h.values.push_back(copy);
      }
      held_[alloca] = std::move(h);
    }

  // Entry: ways_ work-items at a time while that many are left, then the original loop for the
  // rest.
  loop_.preheader->getTerminator()->replaceSuccessorWith(loop_.header, guard);
  IRBuilder<> b(guard);
  Value* enter = b.CreateICmpULT(constant(ways_ - 1), loop_.end);
  for (Value* no_wrap : no_wrap_) enter = b.CreateAnd(enter, no_wrap);
  b.CreateCondBr(enter, blocks_[loop_.header], loop_.header);
  b.SetInsertPoint(blocks_[loop_.header]);
  llvm::PHINode* item = b.CreatePHI(index, 2, "lx.ways");
  Held items{Shape::PerItem, {item}};
  for (unsigned i = 1; i < ways_; ++i)
    items.values.push_back(
        b.CreateAdd(item, constant(i), "lx.item" + std::to_string(i), true, true));
  held_[loop_.item] = std::move(items);
  item->addIncoming(constant(0), guard);
  b.SetInsertPoint(latch);
  Value* stepped = b.CreateAdd(item, constant(ways_), "lx.ways.next", true, true);
  item->addIncoming(stepped, latch);
  b.CreateCondBr(
      b.CreateICmpULT(b.CreateAdd(stepped, constant(ways_ - 1), "", true, true), loop_.end),
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
          h = {Shape::Uniform, {b.CreatePHI(phi->getType(), n, phi->getName())}};
        } else if (widens(*phi)) {
          h = {Shape::Wide, {b.CreatePHI(wide_type(phi->getType()), n, phi->getName())}};
        } else {
          h.shape = Shape::PerItem;
          for (unsigned i = 0; i < ways_; ++i)
            h.values.push_back(b.CreatePHI(phi->getType(), n, phi->getName()));
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
            operand.set(of_item(operand.get(), 0));
        }
        b.Insert(copy);
        continue;
      }
      build_instruction(b, inst);
    }
  }
  for (auto& [phi, h] : phis) {
    for (unsigned edge = 0; edge < phi->getNumIncomingValues(); ++edge) {
      Value* value = phi->getIncomingValue(edge);
      BasicBlock* from = blocks_.lookup(phi->getIncomingBlock(edge));
      if (h.shape == Shape::Wide) {
        llvm::cast<llvm::PHINode>(h.values[0])->addIncoming(joined(value), from);
        continue;
      }
      for (unsigned i = 0; i < h.values.size(); ++i)
        llvm::cast<llvm::PHINode>(h.values[i])->addIncoming(of_item(value, i), from);
    }
  }
}

}  // namespace manifold::compiler::lockstep
