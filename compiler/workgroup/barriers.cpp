// Barriers and regions: the implicit barriers the pass adds (uniform loops, monotone
// conditions, back edges of loops holding sub-group barriers), each barrier in a block of its
// own, and the regions between barriers that become loops over the work-items.
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "compiler/workgroup/passes.h"

namespace manifold::compiler::workgroup {

// The item-loop form runs a group's work-items one after another: only right for groups of
// one work-item or kernels without barriers, where a barrier has nothing to wait for.
void KernelLowering::drop_barriers() {
  for (BasicBlock& block : kernel_)
    for (Instruction& inst : llvm::make_early_inc_range(block))
      if (is_barrier(&inst)) inst.eraseFromParent();
}

// Innermost loops that every work-item runs the same number of times get barriers on the
// edges out of their exiting blocks (into the loop and out of it). Each iteration then becomes
// a region that starts with the loop body and ends with the exit test choosing the next
// region: the work-item loop runs inside the kernel's loop, so the body is vectorized across
// work-items (a naive matrix product's k loop: one broadcast of A and one consecutive load of
// B per 16 work-items) instead of each work-item running the whole loop alone, and neither
// the body nor the code after the loop sits under a condition inside the work-item loop.
// The barriers are legal: all work-items take these edges together.
void KernelLowering::insert_implicit_loop_barriers() {
  Divergence divergence(kernel_);
  llvm::DominatorTree dominators(kernel_);
  llvm::LoopInfo loops(dominators);
  std::vector<std::pair<BasicBlock*, BasicBlock*>> edges;
  for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
    if (!runs_in_step(*loop, divergence)) continue;
    llvm::SmallVector<BasicBlock*, 4> exiting;
    loop->getExitingBlocks(exiting);
    for (BasicBlock* block : exiting)
      for (BasicBlock* successor : llvm::successors(block))
        if (std::find(edges.begin(), edges.end(), std::make_pair(block, successor)) == edges.end())
          edges.emplace_back(block, successor);
  }
  // Blocks all work-items reach that end in `if (local_id(0) < U)` with an idle false edge get
  // a barrier at their top: the region starting there runs only the work-items below the bound
  // (emit_region), e.g. 128, 64, ..., 1 work-items in the steps of a tree reduction instead
  // of the whole group each time.
  std::vector<BasicBlock*> monotone_blocks;
  BlockSet existing_barriers;
  for (BasicBlock& block : kernel_)
    for (Instruction& inst : block)
      if (is_barrier(&inst)) existing_barriers.insert(&block);
  for (BasicBlock& block : kernel_) {
    if (&block == &kernel_.getEntryBlock() || !divergence.reached_by_all(&block)) continue;
    auto* branch = llvm::dyn_cast<llvm::BranchInst>(block.getTerminator());
    if (!branch || !monotone_condition(branch, &divergence)) continue;
    if (!false_edge_is_idle(branch, existing_barriers)) continue;
    bool side_effects = false;
    for (Instruction& inst : block)
      side_effects |= (inst.mayHaveSideEffects() && !query_of(&inst)) || is_barrier(&inst);
    if (!side_effects) monotone_blocks.push_back(&block);
  }
  if (edges.empty() && monotone_blocks.empty()) return;
  llvm::FunctionCallee barrier = module_.getOrInsertFunction(
      kImplicitBarrier, llvm::FunctionType::get(llvm::Type::getVoidTy(context_), false));
  for (BasicBlock* block : monotone_blocks)
    CallInst::Create(barrier, "", block->getFirstInsertionPt());
  for (auto [from, to] : edges) {
    // A block of its own on the edge: phis in `to` keep working, and the barrier is reached
    // exactly when the edge is taken.
    BasicBlock* on_edge = BasicBlock::Create(context_, "implicit.barrier", &kernel_, to);
    CallInst::Create(barrier, "", on_edge);
    llvm::BranchInst::Create(to, on_edge);
    from->getTerminator()->replaceSuccessorWith(to, on_edge);
    for (llvm::PHINode& phi : to->phis())
      for (unsigned i = 0; i < phi.getNumIncomingValues(); ++i)
        if (phi.getIncomingBlock(i) == from) phi.setIncomingBlock(i, on_edge);
  }
}

void KernelLowering::insert_reconvergence_barriers() {
  llvm::DominatorTree dominators(kernel_);
  llvm::LoopInfo loops(dominators);
  std::vector<std::pair<BasicBlock*, BasicBlock*>> edges;
  for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
    bool holds_barrier = false;
    for (BasicBlock* block : loop->blocks())
      for (Instruction& inst : *block) holds_barrier |= is_sub_group_barrier(&inst);
    if (!holds_barrier) continue;
    llvm::SmallVector<BasicBlock*, 4> latches;
    loop->getLoopLatches(latches);
    for (BasicBlock* latch : latches)
      if (std::find(edges.begin(), edges.end(), std::make_pair(latch, loop->getHeader())) ==
          edges.end())
        edges.emplace_back(latch, loop->getHeader());
  }
  if (edges.empty()) return;
  llvm::FunctionCallee barrier = module_.getOrInsertFunction(
      kSubGroupBarrier, llvm::FunctionType::get(llvm::Type::getVoidTy(context_), false));
  for (auto [from, to] : edges) {
    BasicBlock* on_edge = BasicBlock::Create(context_, "reconverge", &kernel_, to);
    CallInst::Create(barrier, "", on_edge);
    llvm::BranchInst::Create(to, on_edge);
    from->getTerminator()->replaceSuccessorWith(to, on_edge);
    for (llvm::PHINode& phi : to->phis())
      for (unsigned i = 0; i < phi.getNumIncomingValues(); ++i)
        if (phi.getIncomingBlock(i) == from) phi.setIncomingBlock(i, on_edge);
  }
}

// Sub-group mode numbers the regions in program order with loops kept together: each loop's
// blocks after what leads into it and before what follows it, its back edges last. The
// scheduler runs the lowest-numbered region a sub-group's work-items stand at, so the
// work-items that meet at a barrier are all those that reach it in this pass over the code.
void KernelLowering::order_barriers_for_sub_groups() {
  llvm::DominatorTree dominators(kernel_);
  llvm::LoopInfo loops(dominators);
  llvm::DenseMap<const BasicBlock*, unsigned> rpo_index;
  std::vector<BasicBlock*> rpo_blocks;
  for (BasicBlock* block : llvm::ReversePostOrderTraversal<Function*>(&kernel_)) {
    rpo_index[block] = rpo_blocks.size();
    rpo_blocks.push_back(block);
  }
  llvm::DenseMap<const BasicBlock*, unsigned> position;
  unsigned next_position = 0;
  // Places the blocks of `loop` (the whole function when null): a topological order of its
  // blocks and inner loops (each inner loop one node, named by its header), ties broken by
  // reverse post-order; then each inner loop's blocks in its place. Cycles that are no natural
  // loops (irreducible control flow) keep reverse post-order.
  std::function<void(llvm::Loop*)> place = [&](llvm::Loop* loop) {
    auto node_of = [&](BasicBlock* block) {
      llvm::Loop* inner = loops.getLoopFor(block);
      if (inner == loop) return block;
      while (inner && inner->getParentLoop() != loop) inner = inner->getParentLoop();
      return inner ? inner->getHeader() : block;
    };
    std::vector<BasicBlock*> members;
    if (loop) {
      members.assign(loop->block_begin(), loop->block_end());
    } else {
      members = rpo_blocks;
    }
    const BlockSet member_set(members.begin(), members.end());
    llvm::DenseMap<BasicBlock*, unsigned> pending;
    llvm::DenseMap<BasicBlock*, std::vector<BasicBlock*>> successors;
    for (BasicBlock* block : members) pending.try_emplace(node_of(block), 0);
    for (BasicBlock* block : members)
      for (BasicBlock* s : llvm::successors(block)) {
        if (!member_set.contains(s) || (loop && s == loop->getHeader())) continue;
        BasicBlock* from = node_of(block);
        BasicBlock* to = node_of(s);
        if (from == to) continue;
        successors[from].push_back(to);
        ++pending[to];
      }
    std::set<std::pair<unsigned, BasicBlock*>> ready;
    for (auto& [node, count] : pending)
      if (count == 0) ready.emplace(rpo_index.lookup(node), node);
    llvm::SmallPtrSet<BasicBlock*, 16> placed;
    auto emit = [&](BasicBlock* node) {
      placed.insert(node);
      llvm::Loop* inner = loops.getLoopFor(node);
      if (inner != loop && inner->getHeader() == node) {
        place(inner);
      } else {
        position[node] = next_position++;
      }
    };
    while (placed.size() < pending.size()) {
      if (ready.empty()) {
        // A cycle no loop covers: take the earliest remaining node in reverse post-order.
        BasicBlock* first = nullptr;
        for (auto& [node, count] : pending)
          if (!placed.contains(node) &&
              (!first || rpo_index.lookup(node) < rpo_index.lookup(first)))
            first = node;
        ready.emplace(rpo_index.lookup(first), first);
      }
      BasicBlock* node = ready.begin()->second;
      ready.erase(ready.begin());
      if (placed.contains(node)) continue;
      emit(node);
      for (BasicBlock* s : successors[node])
        if (--pending[s] == 0 && !placed.contains(s)) ready.emplace(rpo_index.lookup(s), s);
    }
  };
  place(nullptr);
  std::stable_sort(
      barrier_blocks_.begin(), barrier_blocks_.end(),
      [&](BasicBlock* a, BasicBlock* b) { return position.lookup(a) < position.lookup(b); });
}

void KernelLowering::split_at_barriers() {
  // Back-to-back barriers (two wait_group_events in a row) act as one; keeping both would start
  // a region at a barrier.
  for (BasicBlock& block : kernel_) {
    Instruction* previous = nullptr;
    for (Instruction& inst : llvm::make_early_inc_range(block)) {
      if (llvm::isa<llvm::DbgInfoIntrinsic>(inst)) continue;
      if (previous && is_barrier(previous) && is_barrier(&inst)) {
        // A sub-group barrier next to a work-group barrier adds nothing; the reverse would
        // lose the wait for the whole group.
        if (is_sub_group_barrier(previous) && is_work_group_barrier(&inst)) {
          previous->eraseFromParent();
          previous = &inst;
        } else {
          inst.eraseFromParent();
        }
        continue;
      }
      previous = &inst;
    }
  }
  std::vector<Instruction*> barriers;
  for (BasicBlock& block : kernel_)
    for (Instruction& inst : block)
      if (is_barrier(&inst)) barriers.push_back(&inst);
  for (Instruction* barrier : barriers) {
    BasicBlock* block = barrier->getParent();
    // Regions start at the entry block and after each barrier (form_regions): a barrier that
    // is a kernel's first statement still gets a block of its own, else region 0 would take it
    // in as ordinary code. The entry block in front of it stays empty.
    if (barrier != &block->front() || block->isEntryBlock())
      block = block->splitBasicBlock(barrier, "barrier");
    block->splitBasicBlock(barrier->getNextNode(), "after.barrier");
    barrier_blocks_.push_back(block);
    barrier_set_.insert(block);
  }
}

void KernelLowering::form_regions() {
  std::vector<BasicBlock*> starts = {&kernel_.getEntryBlock()};
  for (BasicBlock* barrier : barrier_blocks_) {
    region_after_barrier_[barrier] = starts.size();
    starts.push_back(barrier->getSingleSuccessor());
  }
  for (unsigned id = 0; id < starts.size(); ++id) {
    Region region{id, starts[id], {}};
    BlockSet seen;
    std::deque<BasicBlock*> work = {starts[id]};
    seen.insert(starts[id]);
    while (!work.empty()) {
      BasicBlock* block = work.front();
      work.pop_front();
      region.blocks.push_back(block);
      for (BasicBlock* s : llvm::successors(block))
        if (!barrier_set_.contains(s) && seen.insert(s).second) work.push_back(s);
    }
    regions_.push_back(std::move(region));
    if (sub_group_mode_) {
      const BasicBlock* barrier = id == 0 ? nullptr : barrier_blocks_[id - 1];
      after_work_group_barrier_.push_back(barrier &&
                                          llvm::any_of(*barrier, [](const Instruction& inst) {
                                            return is_work_group_barrier(&inst);
                                          }));
    }
  }
}

}  // namespace manifold::compiler::workgroup
