// One region of the work-group function: its blocks cloned inside loops over the group's
// work-items (z, y and x; in sub-group mode one loop over the running sub-group's work-items),
// work-item queries resolved against the loop state, the exits to the next regions, and the
// loop metadata that lets the x loop vectorize across work-items.
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/SSAUpdater.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/item_lockstep.h"
#include "compiler/workgroup/passes.h"

namespace manifold::compiler::workgroup {

// What emit_region's steps build and hand on to the next one.
struct KernelLowering::RegionCode {
  RegionCode(Region& region, Function* wg, BasicBlock* preheader)
      : region(region), wg(wg), preheader(preheader), tag("r" + std::to_string(region.id)) {}

  Region& region;
  Function* const wg;
  BasicBlock* const preheader;
  const std::string tag;
  // Work-group form: z, y and x loops over the group. Sub-group mode: one loop over the running
  // sub-group's work-items (the "x" blocks), entering the region's code for those that stand
  // at this region; z_header and y_header are then unused.
  BasicBlock* z_header = nullptr;
  BasicBlock* y_header = nullptr;
  BasicBlock* x_header = nullptr;
  BasicBlock* x_latch = nullptr;
  BasicBlock* y_latch = nullptr;
  BasicBlock* z_latch = nullptr;
  BasicBlock* done = nullptr;
  llvm::PHINode* x = nullptr;  // sub-group mode: the lane, the work-item's linear id
  llvm::PHINode* y = nullptr;
  llvm::PHINode* z = nullptr;
  BasicBlock* lane_latch = nullptr;  // sub-group mode
  // The region's blocks as cloned into the work-group function, and the map from the kernel's.
  llvm::ValueToValueMapTy map;
  std::vector<BasicBlock*> clones;
  // The id of the region each work-item goes to next (a phi in the x latch), and those ids.
  llvm::PHINode* next = nullptr;
  std::vector<unsigned> targets;
  llvm::MDNode* access_group = nullptr;
  bool all_parallel = true;
  std::vector<llvm::StoreInst*> uniform_stores;
};

Value* KernelLowering::x_loop_bound(const Region& region, llvm::ValueToValueMapTy& map,
                                    BasicBlock* preheader, const std::vector<BasicBlock*>& clones) {
  Value* full = uniforms_.local_size[0];
  const Instruction* terminator = region.start->getTerminator();
  auto condition = monotone_condition(terminator, nullptr);
  if (!condition) return full;
  for (const Instruction& inst : *region.start)
    if ((inst.mayHaveSideEffects() && !query_of(&inst)) || is_barrier(&inst)) return full;
  if (!false_edge_is_idle(llvm::cast<llvm::BranchInst>(terminator), barrier_set_)) return full;
  IRBuilder<> b(preheader->getTerminator());
  Value* bound;
  if (condition->equals_zero) {
    bound = llvm::ConstantInt::get(i64_, 1);
  } else {
    // The limit as the preheader sees it: a constant, an argument, or a value computed outside
    // the work-item loops (a hoisted uniform reload).
    Value* limit = condition->limit;
    if (!llvm::isa<llvm::Constant>(limit)) {
      auto it = map.find(limit);
      if (it == map.end()) return full;
      limit = it->second;
      if (auto* inst = llvm::dyn_cast<Instruction>(limit)) {
        const BasicBlock* block = inst->getParent();
        if (std::find(clones.begin(), clones.end(), block) != clones.end()) return full;
      }
    }
    if (!limit->getType()->isIntegerTy() || limit->getType()->getIntegerBitWidth() > 64)
      return full;
    Value* wide = condition->is_signed ? b.CreateSExt(limit, i64_) : b.CreateZExt(limit, i64_);
    if (condition->inclusive) wide = b.CreateAdd(wide, llvm::ConstantInt::get(i64_, 1));
    if (condition->is_signed)
      wide = b.CreateSelect(b.CreateICmpSLT(wide, llvm::ConstantInt::get(i64_, 0)),
                            llvm::ConstantInt::get(i64_, 0), wide);
    if (condition->global) {
      // get_global_id(0) = base + local id: the bound on the local id is limit - base.
      Value* base = b.CreateAdd(b.CreateMul(uniforms_.group_id[0], uniforms_.enqueued[0]),
                                uniforms_.global_offset[0]);
      wide = b.CreateSelect(b.CreateICmpULT(wide, base), llvm::ConstantInt::get(i64_, 0),
                            b.CreateSub(wide, base));
    }
    bound = wide;
  }
  // The work-item loop always runs work-item 0: with a bound of 0 it takes the idle edge.
  return b.CreateSelect(b.CreateICmpULT(bound, full), bound, full, "x.bound");
}

KernelLowering::RegionEnd KernelLowering::emit_region(Region& region, Function* wg,
                                                      llvm::ValueToValueMapTy& base_map,
                                                      BasicBlock* preheader) {
  RegionCode r(region, wg, preheader);
  create_region_blocks(r);
  IRBuilder<> b(preheader);
  if (sub_group_mode_) {
    emit_lane_loop_header(r, b);
  } else {
    emit_item_loop_headers(r, b);
  }
  clone_region_blocks(r, b, base_map);
  lower_region_body(r);
  hoist_uniform_reloads(r);
  if (sub_group_mode_) {
    close_lane_loop(r, b);
    return {r.done, nullptr, {}};
  }
  close_item_loops(r, b);
  store_uniforms_after_loops(r);
  // Every work-item stopped at the same barrier (OpenCL requires barriers to be reached
  // uniformly), so the last work-item's `next` decides where the group continues.
  return {r.done, r.next, r.targets};
}

void KernelLowering::create_region_blocks(RegionCode& r) {
  llvm::LLVMContext& c = context_;
  const std::string& tag = r.tag;
  r.z_header = BasicBlock::Create(c, tag + ".z", r.wg);
  r.y_header = BasicBlock::Create(c, tag + ".y", r.wg);
  r.x_header = BasicBlock::Create(c, tag + ".x", r.wg);
  r.x_latch = BasicBlock::Create(c, tag + ".x.latch", r.wg);
  r.y_latch = BasicBlock::Create(c, tag + ".y.latch", r.wg);
  r.z_latch = BasicBlock::Create(c, tag + ".z.latch", r.wg);
  r.done = BasicBlock::Create(c, tag + ".done", r.wg);
  region_active_ = nullptr;
  region_id_ = r.region.id;
  region_preheader_ = r.preheader;
}

// Sub-group mode: the loop over the running sub-group's lanes enters the region for the
// work-items that stand at it.
void KernelLowering::emit_lane_loop_header(RegionCode& r, IRBuilder<>& b) {
  const Uniforms& u = uniforms_;
  BasicBlock* lane_header = r.z_header;
  r.lane_latch = r.y_latch;
  b.CreateBr(lane_header);
  b.SetInsertPoint(lane_header);
  llvm::PHINode* lane = b.CreatePHI(i64_, 2, "lane");
  lane->addIncoming(u.sub_group_begin, r.preheader);
  Value* state = b.CreateLoad(i32_, b.CreateGEP(i32_, u.lane_state, lane), "lane.state");
  b.CreateCondBr(b.CreateICmpEQ(state, llvm::ConstantInt::get(i32_, r.region.id)), r.x_header,
                 r.lane_latch);
  b.SetInsertPoint(r.x_header);
  // The local id of a linear one: the sizes are the group's own (the last group of a
  // non-uniform NDRange is smaller), as get_local_linear_id counts.
  Value* row = b.CreateUDiv(lane, u.local_size[0]);
  local_id_[0] = b.CreateSub(lane, b.CreateMul(row, u.local_size[0]), "lx");
  local_id_[2] = b.CreateUDiv(row, u.local_size[1], "lz");
  local_id_[1] = b.CreateSub(row, b.CreateMul(local_id_[2], u.local_size[1]), "ly");
  local_linear_ = lane;
  r.x = lane;
}

void KernelLowering::emit_item_loop_headers(RegionCode& r, IRBuilder<>& b) {
  b.CreateBr(r.z_header);
  b.SetInsertPoint(r.z_header);
  r.z = b.CreatePHI(i64_, 2, "lz");
  r.z->addIncoming(llvm::ConstantInt::get(i64_, 0), r.preheader);
  b.CreateBr(r.y_header);
  b.SetInsertPoint(r.y_header);
  r.y = b.CreatePHI(i64_, 2, "ly");
  r.y->addIncoming(llvm::ConstantInt::get(i64_, 0), r.z_header);
  b.CreateBr(r.x_header);
  b.SetInsertPoint(r.x_header);
  r.x = b.CreatePHI(i64_, 2, "lx");
  r.x->addIncoming(llvm::ConstantInt::get(i64_, 0), r.y_header);
  local_id_[0] = r.x;
  local_id_[1] = r.y;
  local_id_[2] = r.z;
  local_linear_ =
      b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(r.z, uniforms_.local_size[1]), r.y),
                              uniforms_.local_size[0]),
                  r.x, "llinear");
}

// Clone the region's blocks. Barrier blocks it reaches become exits to the x latch.
void KernelLowering::clone_region_blocks(RegionCode& r, IRBuilder<>& b,
                                         llvm::ValueToValueMapTy& base_map) {
  llvm::LLVMContext& c = context_;
  const std::string& tag = r.tag;
  llvm::ValueToValueMapTy& map = r.map;
  for (auto it = base_map.begin(); it != base_map.end(); ++it) map[it->first] = it->second;
  BlockSet members(r.region.blocks.begin(), r.region.blocks.end());
  for (BasicBlock* block : r.region.blocks) {
    BasicBlock* clone = llvm::CloneBasicBlock(block, map, "." + tag, r.wg);
    map[block] = clone;
    r.clones.push_back(clone);
  }
  r.next = llvm::PHINode::Create(i32_, 4, tag + ".next");
  r.next->insertInto(r.x_latch, r.x_latch->end());
  for (BasicBlock* block : r.region.blocks) {
    for (BasicBlock* s : llvm::successors(block)) {
      if (!barrier_set_.contains(s) || map.count(s)) continue;
      BasicBlock* exit = BasicBlock::Create(c, tag + ".to.barrier", r.wg);
      llvm::BranchInst::Create(r.x_latch, exit);
      add_region_exit(r, region_after_barrier_[s], exit);
      map[s] = exit;
    }
  }
  // Phis keep only the edges that exist inside this region.
  for (BasicBlock* clone : r.clones) {
    for (llvm::PHINode& phi : llvm::make_early_inc_range(clone->phis())) {
      for (unsigned i = phi.getNumIncomingValues(); i-- > 0;)
        if (!members.contains(phi.getIncomingBlock(i))) phi.removeIncomingValue(i, false);
    }
  }
  llvm::remapInstructionsInBlocks(r.clones, map);
  b.SetInsertPoint(r.x_header);
  b.CreateBr(llvm::cast<BasicBlock>(map[r.region.start]));
}

// A work-item leaving the region from `from` for region `target` (kExit: it returned).
void KernelLowering::add_region_exit(RegionCode& r, unsigned target, BasicBlock* from) {
  uint32_t state = target;
  if (sub_group_mode_ && target != kExit && after_work_group_barrier_[target])
    state |= kWaitsForGroup;
  r.next->addIncoming(llvm::ConstantInt::get(i32_, state), from);
  if (std::find(r.targets.begin(), r.targets.end(), target) == r.targets.end())
    r.targets.push_back(target);
}

// Returns end the work-item; resolve work-item queries against the loop state.
void KernelLowering::lower_region_body(RegionCode& r) {
  r.access_group = llvm::MDNode::getDistinct(context_, {});
  for (BasicBlock* clone : r.clones) {
    if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(clone->getTerminator())) {
      ret->eraseFromParent();
      llvm::BranchInst::Create(r.x_latch, clone);
      add_region_exit(r, kExit, clone);
    }
    for (Instruction& inst : llvm::make_early_inc_range(*clone)) {
      if (auto query = query_of(&inst)) {
        IRBuilder<> at(&inst);
        Value* value = resolve_query(at, llvm::cast<CallInst>(&inst), *query);
        inst.replaceAllUsesWith(value);
        inst.eraseFromParent();
        continue;
      }
      if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst)) {
        // No barriers: one private copy reused by the work-items in turn, allocated once.
        alloca->moveBefore(r.wg->getEntryBlock().getFirstInsertionPt());
        r.all_parallel = false;
        continue;
      }
      if (form_ == Form::WorkGroup && inst.mayReadOrWriteMemory())
        inst.setMetadata(llvm::LLVMContext::MD_access_group, r.access_group);
    }
  }
}

// Reloads of uniform slots read the value an earlier pass stored: load once, before the
// work-item loops (the stores of this pass must not be seen by later work-items).
void KernelLowering::hoist_uniform_reloads(RegionCode& r) {
  const llvm::SmallPtrSet<Value*, 8> uniform_slots(uniforms_.uniform_slots.begin(),
                                                   uniforms_.uniform_slots.end());
  for (BasicBlock* clone : r.clones)
    for (Instruction& inst : llvm::make_early_inc_range(*clone)) {
      if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst);
          load && uniform_slots.contains(load->getPointerOperand()))
        load->moveBefore(r.preheader->getTerminator()->getIterator());
      if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst);
          store && uniform_slots.contains(store->getPointerOperand()))
        r.uniform_stores.push_back(store);
    }
}

// Sub-group mode: each work-item records where it stopped; the region ends with the
// sub-group's last one.
void KernelLowering::close_lane_loop(RegionCode& r, IRBuilder<>& b) {
  llvm::LLVMContext& c = context_;
  if (r.next->getNumIncomingValues() == 0) {
    r.next->eraseFromParent();
    r.next = nullptr;
    new llvm::UnreachableInst(c, r.x_latch);
  } else {
    b.SetInsertPoint(r.x_latch);
    b.CreateStore(r.next, b.CreateGEP(i32_, uniforms_.lane_state, r.x));
    b.CreateBr(r.lane_latch);
  }
  b.SetInsertPoint(r.lane_latch);
  Value* lane_next = b.CreateAdd(r.x, llvm::ConstantInt::get(i64_, 1), "lane.next", true, true);
  auto* lane_branch =
      b.CreateCondBr(b.CreateICmpULT(lane_next, uniforms_.sub_group_end), r.z_header, r.done);
  llvm::cast<llvm::PHINode>(r.x)->addIncoming(lane_next, r.lane_latch);
  llvm::SmallVector<llvm::Metadata*, 3> loop_md = {nullptr};
  loop_md.push_back(llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.mustprogress")}));
  if (r.all_parallel)
    loop_md.push_back(llvm::MDNode::get(
        c, {llvm::MDString::get(c, "llvm.loop.parallel_accesses"), r.access_group}));
  llvm::MDNode* loop_id = llvm::MDNode::getDistinct(c, loop_md);
  loop_id->replaceOperandWith(0, loop_id);
  lane_branch->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  r.y_header->eraseFromParent();
  r.z_latch->eraseFromParent();
}

// The latches of the x, y and z loops, with the metadata that makes the x loop the one the
// vectorizer takes (work-group form) or leaves alone (item-loop form).
void KernelLowering::close_item_loops(RegionCode& r, IRBuilder<>& b) {
  llvm::LLVMContext& c = context_;
  if (r.next->getNumIncomingValues() == 0) {
    // The region never finishes (an infinite loop, or `unreachable` after a barrier): the
    // latches are unreachable.
    r.next->eraseFromParent();
    r.next = nullptr;
    for (BasicBlock* latch : {r.x_latch, r.y_latch, r.z_latch}) new llvm::UnreachableInst(c, latch);
    return;
  }
  Value* x_end = x_loop_bound(r.region, r.map, r.preheader, r.clones);
  b.SetInsertPoint(r.x_latch);
  Value* x_next = b.CreateAdd(r.x, llvm::ConstantInt::get(i64_, 1), "lx.next", true, true);
  auto* x_branch = b.CreateCondBr(b.CreateICmpULT(x_next, x_end), r.x_header, r.y_latch);
  r.x->addIncoming(x_next, r.x_latch);
  llvm::SmallVector<llvm::Metadata*, 3> loop_md = {nullptr};
  loop_md.push_back(llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.mustprogress")}));
  if (form_ == Form::WorkGroup) {
    // The x loop runs independent work-items: tell the vectorizer.
    if (r.all_parallel)
      loop_md.push_back(llvm::MDNode::get(
          c, {llvm::MDString::get(c, "llvm.loop.parallel_accesses"), r.access_group}));
    // One vector of work-items per iteration: groups are often just one vector wide (16x16
    // with AVX-512), and interleaving would send them all to the epilogue.
    loop_md.push_back(
        llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.interleave.count"),
                              llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(i32_, 1))}));
  } else {
    // One work-item per iteration, as written: the kernel's own vectors are the SIMD, and
    // copies of the whole kernel body would cost compile time for groups of one item.
    loop_md.push_back(
        llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.vectorize.enable"),
                              llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(c))}));
    loop_md.push_back(llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.unroll.disable")}));
  }
  llvm::MDNode* loop_id = llvm::MDNode::getDistinct(c, loop_md);
  loop_id->replaceOperandWith(0, loop_id);
  x_branch->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  // The y and z loops stay loops: unrolling them copies the vectorized x loop, costing
  // compile time for no speed.
  auto outer_loop_id = [&] {
    llvm::MDNode* id = llvm::MDNode::getDistinct(
        c, {nullptr, llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.unroll.disable")}),
            llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.mustprogress")})});
    id->replaceOperandWith(0, id);
    return id;
  };

  b.SetInsertPoint(r.y_latch);
  Value* y_next = b.CreateAdd(r.y, llvm::ConstantInt::get(i64_, 1), "ly.next", true, true);
  b.CreateCondBr(b.CreateICmpULT(y_next, uniforms_.local_size[1]), r.y_header, r.z_latch)
      ->setMetadata(llvm::LLVMContext::MD_loop, outer_loop_id());
  r.y->addIncoming(y_next, r.y_latch);
  b.SetInsertPoint(r.z_latch);
  Value* z_next = b.CreateAdd(r.z, llvm::ConstantInt::get(i64_, 1), "lz.next", true, true);
  b.CreateCondBr(b.CreateICmpULT(z_next, uniforms_.local_size[2]), r.z_header, r.done)
      ->setMetadata(llvm::LLVMContext::MD_loop, outer_loop_id());
  r.z->addIncoming(z_next, r.z_latch);
  if (form_ == Form::ItemLoop && lockstep_register_bits_ && r.uniform_stores.empty())
    lockstep_ = run_items_in_lockstep(
        {r.wg, r.x, r.y_header, r.x_header, r.x_latch, r.y_latch, x_end}, lockstep_register_bits_);
}

// Uniform values are stored once, after the work-item loops: a store inside the x loop
// would make the slot a value carried from work-item to work-item, which the vectorizer
// rejects. The value stored is the last work-item's, or the slot's previous value where its
// path did not define it. A pass that does not reach the definition at all must leave the
// slot alone: a loop counter defined at the top of an outer loop, used in the next outer
// iteration, is carried through passes of an inner loop that never define it (poison there
// made CLBlast's gemm kernels read a garbage counter).
void KernelLowering::store_uniforms_after_loops(RegionCode& r) {
  for (llvm::StoreInst* store : r.uniform_stores) {
    if (r.next) {
      llvm::SSAUpdater updater;
      Value* value = store->getValueOperand();
      updater.Initialize(value->getType(), value->getName());
      auto* previous = new llvm::LoadInst(value->getType(), store->getPointerOperand(),
                                          value->getName() + ".previous",
                                          r.preheader->getTerminator()->getIterator());
      updater.AddAvailableValue(r.x_header, previous);
      updater.AddAvailableValue(store->getParent(), value);
      Value* last = updater.GetValueInMiddleOfBlock(r.done);
      new llvm::StoreInst(last, store->getPointerOperand(), r.done);
    }
    store->eraseFromParent();
  }
}

}  // namespace manifold::compiler::workgroup
