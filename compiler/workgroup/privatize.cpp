// Per-work-item state of kernels with barriers: private variables moved to a private area per
// work-item, values live across a barrier stored to slots (one per work-item, or one per group
// for uniform values) or computed again after it.
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/workgroup/passes.h"

namespace manifold::compiler::workgroup {

// A pure computation of constants, arguments and work-item queries: cheaper to compute again
// after a barrier than to keep per work-item, and the copy stays visibly affine in the local
// id (consecutive or invariant addresses for the vectorizer instead of gathers).
bool is_rematerializable_tree(const Value* value, unsigned depth) {
  if (llvm::isa<llvm::Constant>(value) || llvm::isa<llvm::Argument>(value)) return true;
  auto* inst = llvm::dyn_cast<Instruction>(value);
  if (!inst || depth > 8) return false;
  if (is_rematerializable(inst)) return true;
  if (!llvm::isa<llvm::BinaryOperator>(inst) && !llvm::isa<llvm::CastInst>(inst) &&
      !llvm::isa<llvm::GetElementPtrInst>(inst) && !llvm::isa<llvm::CmpInst>(inst) &&
      !llvm::isa<llvm::SelectInst>(inst))
    return false;
  if (inst->mayHaveSideEffects() || inst->mayReadFromMemory()) return false;
  for (const llvm::Use& operand : inst->operands())
    if (!is_rematerializable_tree(operand.get(), depth + 1)) return false;
  return true;
}

Function* KernelLowering::placeholder(const char* name, llvm::Type* arg) {
  llvm::FunctionType* type = llvm::FunctionType::get(ptr_, {arg}, false);
  llvm::FunctionCallee callee = module_.getOrInsertFunction(name, type);
  auto* function = llvm::cast<Function>(callee.getCallee());
  function->setDoesNotAccessMemory();
  function->setDoesNotThrow();
  return function;
}

Value* KernelLowering::rematerialize_tree_before(Value* original,
                                                 llvm::BasicBlock::iterator where) {
  auto* inst = llvm::dyn_cast<Instruction>(original);
  if (!inst) return original;  // constants and arguments
  Instruction* copy = inst->clone();
  for (llvm::Use& operand : copy->operands())
    operand.set(rematerialize_tree_before(operand.get(), where));
  copy->insertBefore(where);
  return copy;
}

// Kernels with barriers: every private variable needs one copy per work-item that survives
// from region to region, so allocas become addresses in the per-work-item private area.
void KernelLowering::privatize_allocas() {
  std::vector<llvm::AllocaInst*> allocas;
  for (BasicBlock& block : kernel_)
    for (Instruction& inst : block)
      if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst)) allocas.push_back(alloca);
  if (allocas.empty()) return;
  Function* private_fn = placeholder(kPrivateFunction, i64_);
  for (llvm::AllocaInst* alloca : allocas) {
    // Lifetime markers must name an alloca directly; the private area needs none.
    for (llvm::User* user : llvm::make_early_inc_range(alloca->users()))
      if (auto* inst = llvm::dyn_cast<Instruction>(user); inst && inst->isLifetimeStartOrEnd())
        inst->eraseFromParent();
    const uint64_t size =
        alloca->getAllocationSize(layout_).value_or(llvm::TypeSize::getFixed(0)).getFixedValue();
    const uint64_t alignment = std::max<uint64_t>(alloca->getAlign().value(), 16);
    const uint64_t offset = align_to(private_bytes_, alignment);
    private_bytes_ = offset + std::max<uint64_t>(size, 1);
    // One fresh placeholder per use: no pointer to private memory needs spilling.
    for (llvm::Use& use : llvm::make_early_inc_range(alloca->uses())) {
      auto* user = llvm::cast<Instruction>(use.getUser());
      llvm::BasicBlock::iterator where = user->getIterator();
      if (auto* phi = llvm::dyn_cast<llvm::PHINode>(user))
        where = phi->getIncomingBlock(use)->getTerminator()->getIterator();
      auto* address = CallInst::Create(private_fn, {llvm::ConstantInt::get(i64_, offset)},
                                       alloca->getName() + ".wi", where);
      Value* value = address;
      if (alloca->getType()->getAddressSpace() != 0)
        value = new llvm::AddrSpaceCastInst(address, alloca->getType(), "", where);
      use.set(value);
    }
    alloca->eraseFromParent();
  }
  private_bytes_ = align_to(private_bytes_, 16);
}

// Values defined before a barrier and used after it (on some path) go through a per-work-item
// slot: stored right after the definition, loaded right before each such use.
void KernelLowering::spill_cross_barrier_values() {
  Function* slot_fn = placeholder(kSlotFunction, i32_);
  Function* uniform_fn = placeholder(kUniformFunction, i32_);
  // Sub-group mode keeps every value per work-item: a group's one copy of a uniform value
  // would be overwritten by the sub-groups that run ahead (a loop's next iteration).
  std::optional<Divergence> divergence;
  if (!sub_group_mode_) divergence.emplace(kernel_);
  for (BasicBlock& def_block : kernel_) {
    if (barrier_set_.contains(&def_block)) continue;
    std::vector<BasicBlock*> successors(llvm::succ_begin(&def_block), llvm::succ_end(&def_block));
    BlockSet after_def = reachable(successors, &def_block);
    std::vector<BasicBlock*> barriers_hit;
    for (BasicBlock* barrier : barrier_blocks_)
      if (after_def.contains(barrier)) barriers_hit.push_back(barrier);
    if (barriers_hit.empty()) continue;
    // Blocks reachable from the definition through a barrier without redefining the value.
    BlockSet crossed = reachable(barriers_hit, &def_block);

    std::vector<Instruction*> definitions;
    for (Instruction& inst : def_block)
      if (!inst.getType()->isVoidTy() && !inst.use_empty()) definitions.push_back(&inst);
    for (Instruction* def : definitions) {
      std::vector<llvm::Use*> crossing;
      for (llvm::Use& use : def->uses()) {
        auto* user = llvm::cast<Instruction>(use.getUser());
        BasicBlock* use_block = user->getParent();
        if (auto* phi = llvm::dyn_cast<llvm::PHINode>(user)) use_block = phi->getIncomingBlock(use);
        if (use_block != &def_block && crossed.contains(use_block)) crossing.push_back(&use);
      }
      if (crossing.empty()) continue;

      if (is_rematerializable(def) || is_rematerializable_tree(def)) {
        for (llvm::Use* use : crossing) {
          auto* user = llvm::cast<Instruction>(use->getUser());
          llvm::BasicBlock::iterator where = user->getIterator();
          if (auto* phi = llvm::dyn_cast<llvm::PHINode>(user))
            where = phi->getIncomingBlock(*use)->getTerminator()->getIterator();
          use->set(rematerialize_tree_before(def, where));
        }
        continue;
      }

      // A uniform value gets one slot per group. Its reloads move to the start of their
      // region (emit_region), before any work-item of that pass stores a new value: valid only
      // when every crossing use sees the value from an earlier pass, i.e. is not also
      // reachable from the definition without a barrier.
      if (divergence && !divergence->divergent(def) && def->getType()->isFirstClassType()) {
        std::vector<BasicBlock*> def_successors(llvm::succ_begin(&def_block),
                                                llvm::succ_end(&def_block));
        const BlockSet direct = reachable_avoiding(def_successors, barrier_set_);
        bool all_through_barrier = true;
        for (llvm::Use* use : crossing) {
          auto* user = llvm::cast<Instruction>(use->getUser());
          BasicBlock* use_block = user->getParent();
          if (auto* phi = llvm::dyn_cast<llvm::PHINode>(user))
            use_block = phi->getIncomingBlock(*use);
          all_through_barrier &= !direct.contains(use_block);
        }
        if (all_through_barrier) {
          const unsigned slot = uniform_types_.size();
          uniform_types_.push_back(def->getType());
          llvm::Constant* slot_index = llvm::ConstantInt::get(i32_, slot);
          llvm::BasicBlock::iterator store_at = llvm::isa<llvm::PHINode>(def)
                                                    ? def_block.getFirstInsertionPt()
                                                    : std::next(def->getIterator());
          auto* store_address = CallInst::Create(uniform_fn, {slot_index}, "", store_at);
          new llvm::StoreInst(def, store_address, store_at);
          for (llvm::Use* use : crossing) {
            auto* user = llvm::cast<Instruction>(use->getUser());
            llvm::BasicBlock::iterator where = user->getIterator();
            if (auto* phi = llvm::dyn_cast<llvm::PHINode>(user))
              where = phi->getIncomingBlock(*use)->getTerminator()->getIterator();
            auto* address = CallInst::Create(uniform_fn, {slot_index}, "", where);
            use->set(
                new llvm::LoadInst(def->getType(), address, def->getName() + ".uniform", where));
          }
          continue;
        }
      }

      // A vector value gets one slot per component: each slot is an array over work-items, so
      // the vectorized work-item loop reads component k of 16 work-items with one load instead
      // of gathering it out of 16-byte elements.
      llvm::Type* type = def->getType();
      auto* vector_type = llvm::dyn_cast<llvm::FixedVectorType>(type);
      llvm::Type* part_type = vector_type ? vector_type->getElementType() : type;
      const unsigned parts = vector_type ? vector_type->getNumElements() : 1;
      const uint64_t size = layout_.getTypeAllocSize(part_type);
      std::vector<llvm::Constant*> slot_indices;
      for (unsigned part = 0; part < parts; ++part) {
        slot_indices.push_back(llvm::ConstantInt::get(i32_, slot_sizes_.size()));
        slot_sizes_.push_back(size);
        // Reserved per work-item: the array, 64-byte aligned, and room for the line between
        // arrays (KernelLowering's entry block lays them out).
        slot_bytes_ += align_to(size, 64);
      }

      llvm::BasicBlock::iterator store_at = llvm::isa<llvm::PHINode>(def)
                                                ? def_block.getFirstInsertionPt()
                                                : std::next(def->getIterator());
      for (unsigned part = 0; part < parts; ++part) {
        auto* store_address = CallInst::Create(slot_fn, {slot_indices[part]}, "", store_at);
        Value* value = def;
        if (vector_type)
          value = llvm::ExtractElementInst::Create(def, llvm::ConstantInt::get(i32_, part), "",
                                                   store_at);
        new llvm::StoreInst(value, store_address, store_at);
      }

      // One reload per (user, incoming block): a phi may list the same block twice.
      llvm::DenseMap<std::pair<Instruction*, BasicBlock*>, Value*> reloads;
      for (llvm::Use* use : crossing) {
        auto* user = llvm::cast<Instruction>(use->getUser());
        BasicBlock* key_block = nullptr;
        llvm::BasicBlock::iterator where = user->getIterator();
        if (auto* phi = llvm::dyn_cast<llvm::PHINode>(user)) {
          key_block = phi->getIncomingBlock(*use);
          where = key_block->getTerminator()->getIterator();
        }
        Value*& reload = reloads[{user, key_block}];
        if (!reload) {
          Value* assembled = vector_type ? llvm::PoisonValue::get(type) : nullptr;
          for (unsigned part = 0; part < parts; ++part) {
            auto* address = CallInst::Create(slot_fn, {slot_indices[part]}, "", where);
            Value* loaded =
                new llvm::LoadInst(part_type, address, def->getName() + ".reload", where);
            assembled = vector_type
                            ? llvm::InsertElementInst::Create(
                                  assembled, loaded, llvm::ConstantInt::get(i32_, part), "", where)
                            : loaded;
          }
          reload = assembled;
        }
        use->set(reload);
      }
    }
  }
}

}  // namespace manifold::compiler::workgroup
