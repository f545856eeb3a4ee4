// Divergence analysis: which values may differ between the work-items of a group and which
// blocks not all of them reach; and what the pass builds on it: loops all work-items run in
// step, and branches whose true edge is taken by the work-items below a uniform bound.
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

#include <utility>
#include <vector>

#include "compiler/workgroup/passes.h"

namespace manifold::compiler::workgroup {

BlockSet reachable(llvm::ArrayRef<BasicBlock*> sources, const BasicBlock* avoid) {
  BlockSet seen;
  std::vector<BasicBlock*> work;
  for (BasicBlock* b : sources)
    if (b != avoid && seen.insert(b).second) work.push_back(b);
  while (!work.empty()) {
    BasicBlock* b = work.back();
    work.pop_back();
    for (BasicBlock* s : llvm::successors(b))
      if (s != avoid && seen.insert(s).second) work.push_back(s);
  }
  return seen;
}

BlockSet reachable_avoiding(llvm::ArrayRef<BasicBlock*> sources, const BlockSet& avoid) {
  BlockSet seen;
  std::vector<BasicBlock*> work;
  for (BasicBlock* b : sources)
    if (!avoid.contains(b) && seen.insert(b).second) work.push_back(b);
  while (!work.empty()) {
    BasicBlock* b = work.back();
    work.pop_back();
    for (BasicBlock* s : llvm::successors(b))
      if (!avoid.contains(s) && seen.insert(s).second) work.push_back(s);
  }
  return seen;
}

bool Divergence::is_source(const Instruction& inst) {
  if (llvm::isa<llvm::AllocaInst>(inst) || llvm::isa<llvm::LoadInst>(inst) ||
      llvm::isa<llvm::AtomicRMWInst>(inst) || llvm::isa<llvm::AtomicCmpXchgInst>(inst))
    return true;
  auto* call = llvm::dyn_cast<CallInst>(&inst);
  if (!call || call->getType()->isVoidTy()) return false;
  if (auto query = query_of(call)) {
    switch (*query) {
      case Query::GlobalId:
      case Query::LocalId:
      case Query::GlobalLinearId:
      case Query::LocalLinearId:
      case Query::Slot:
      case Query::Private:
      case Query::SubGroupSize:
      case Query::SubGroupId:
      case Query::SubGroupLocalId:
      case Query::SubGroupActive:
        return true;
      default:
        return false;
    }
  }
  return !call->doesNotAccessMemory();
}

void Divergence::compute(Function& function) {
  for (BasicBlock& block : function)
    for (Instruction& inst : block)
      if (is_source(inst)) values_.insert(&inst);
  llvm::PostDominatorTree post_dominators(function);
  llvm::SmallPtrSet<BasicBlock*, 16> handled;
  for (bool changed = true; changed;) {
    changed = false;
    for (BasicBlock& block : function)
      for (Instruction& inst : block) {
        if (values_.contains(&inst)) continue;
        for (const llvm::Use& operand : inst.operands())
          if (values_.contains(operand.get())) {
            values_.insert(&inst);
            changed = true;
            break;
          }
      }
    for (BasicBlock& block : function) {
      const Value* condition = condition_of(block.getTerminator());
      if (!condition || !values_.contains(condition) || !handled.insert(&block).second) continue;
      changed = true;
      BlockSet join;
      if (auto* node = post_dominators.getNode(&block); node && node->getIDom())
        if (BasicBlock* post = node->getIDom()->getBlock()) join.insert(post);
      std::vector<BasicBlock*> successors(llvm::succ_begin(&block), llvm::succ_end(&block));
      BlockSet region = reachable_avoiding(successors, join);
      for (BasicBlock* b : region) influenced_.insert(b);
      for (BasicBlock* b : join)
        for (llvm::PHINode& phi : b->phis()) values_.insert(&phi);
      for (BasicBlock* b : region)
        for (llvm::PHINode& phi : b->phis()) values_.insert(&phi);
      if (!region.contains(&block)) continue;
      // A loop with a divergent exit: values used after it differ per work-item.
      for (BasicBlock* b : region)
        for (Instruction& inst : *b)
          for (const llvm::User* user : inst.users())
            if (auto* use = llvm::dyn_cast<Instruction>(user);
                use && !region.contains(use->getParent()))
              values_.insert(&inst);
    }
  }
}

namespace {

// The work-item query an id expression reads through casts, if it is get_local_id(0) or
// get_global_id(0).
std::optional<Query> id_zero_query(Value* value) {
  while (auto* cast = llvm::dyn_cast<llvm::CastInst>(value)) {
    if (!llvm::isa<llvm::TruncInst>(cast) && !llvm::isa<llvm::ZExtInst>(cast) &&
        !llvm::isa<llvm::SExtInst>(cast))
      return std::nullopt;
    value = cast->getOperand(0);
  }
  auto* call = llvm::dyn_cast<CallInst>(value);
  if (!call) return std::nullopt;
  auto query = query_of(call);
  if (!query || (*query != Query::LocalId && *query != Query::GlobalId)) return std::nullopt;
  auto* dim = llvm::dyn_cast<llvm::ConstantInt>(call->getArgOperand(0));
  if (!dim || !dim->isZero()) return std::nullopt;
  return query;
}

}  // namespace

std::optional<MonotoneCondition> monotone_condition(const Instruction* terminator,
                                                    const Divergence* divergence) {
  auto* branch = llvm::dyn_cast<llvm::BranchInst>(terminator);
  if (!branch || !branch->isConditional()) return std::nullopt;
  auto* compare = llvm::dyn_cast<llvm::ICmpInst>(branch->getCondition());
  if (!compare) return std::nullopt;
  Value* id = compare->getOperand(0);
  Value* limit = compare->getOperand(1);
  llvm::CmpInst::Predicate predicate = compare->getPredicate();
  if (!id_zero_query(id)) {
    std::swap(id, limit);
    predicate = llvm::CmpInst::getSwappedPredicate(predicate);
  }
  auto query = id_zero_query(id);
  if (!query) return std::nullopt;
  if (divergence && divergence->divergent(limit)) return std::nullopt;
  MonotoneCondition out;
  out.global = *query == Query::GlobalId;
  out.limit = limit;
  switch (predicate) {
    case llvm::CmpInst::ICMP_ULT:
      break;
    case llvm::CmpInst::ICMP_SLT:
      out.is_signed = true;
      break;
    case llvm::CmpInst::ICMP_ULE:
      out.inclusive = true;
      break;
    case llvm::CmpInst::ICMP_SLE:
      out.is_signed = out.inclusive = true;
      break;
    case llvm::CmpInst::ICMP_EQ: {
      auto* constant = llvm::dyn_cast<llvm::ConstantInt>(limit);
      if (out.global || !constant || !constant->isZero()) return std::nullopt;
      out.equals_zero = true;
      out.limit = nullptr;
      break;
    }
    default:
      return std::nullopt;
  }
  return out;
}

bool false_edge_is_idle(const llvm::BranchInst* branch, const BlockSet& barriers) {
  const BasicBlock* block = branch->getSuccessor(1);
  for (int steps = 0; steps < 8; ++steps) {
    if (barriers.contains(const_cast<BasicBlock*>(block))) return true;
    for (const Instruction& inst : *block)
      if ((inst.mayHaveSideEffects() && !query_of(&inst)) || is_barrier(&inst)) return false;
    const Instruction* terminator = block->getTerminator();
    if (llvm::isa<llvm::ReturnInst>(terminator)) return true;
    auto* next = llvm::dyn_cast<llvm::BranchInst>(terminator);
    if (!next || next->isConditional()) return false;
    block = next->getSuccessor(0);
  }
  return false;
}

// An innermost loop without barriers that every work-item of a group enters and leaves
// together (uniform exit conditions): insert_implicit_loop_barriers makes its iterations
// regions.
bool runs_in_step(const llvm::Loop& loop, const Divergence& divergence) {
  if (!loop.isInnermost() || !divergence.reached_by_all(loop.getHeader())) return false;
  llvm::SmallVector<BasicBlock*, 4> exiting;
  loop.getExitingBlocks(exiting);
  if (exiting.empty()) return false;
  for (BasicBlock* block : loop.blocks())
    for (Instruction& inst : *block)
      if (is_barrier(&inst)) return false;
  for (BasicBlock* block : exiting) {
    const Instruction* terminator = block->getTerminator();
    const Value* condition = Divergence::condition_of(terminator);
    if (!condition || divergence.divergent(condition) || !llvm::isa<llvm::BranchInst>(terminator))
      return false;
  }
  return true;
}

}  // namespace manifold::compiler::workgroup
