// Which form suits a kernel: the item loop or vectorization across work-items
// (KernelExec::item_loop_preferred), and whether any division of the NDRange into groups gives
// the same results (KernelExec::partition_independent). Both look at the kernel as written.
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalValue.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include "compiler/workgroup/passes.h"

namespace manifold::compiler::workgroup {

// Whether the kernel runs faster one work-item at a time (the item-loop form) than
// vectorized across work-items, decided from the kernel's own vector types:
// - its work is mostly done in vectors of two registers or more (uint16 hash rounds on
//   256-bit registers): each of its operations is already full SIMD work, while the work-group
//   form splits the vectors into scalars and packs them again across work-items, with gathers
//   where a work-item's vector sits in contiguous memory (16-element strides are too wide for
//   the vectorizer's interleaved loads; 8-element ones are not, so uint8 hash rounds without
//   loops stay ahead in the work-group form);
// - or its work is mostly in narrower vectors and its loops carry many lanes of vectors that
//   fill a register (8 float8 accumulators on 256-bit registers): the work-group form runs
//   each iteration of such a loop for all work-items in turn, storing and reloading every
//   carried lane in per-work-item arrays, more of them than its registers hold. Vectors
//   narrower than a register (8 float4 or float2 accumulators) leave it half idle in the item
//   loop and run faster across work-items, whose unrolled loops (mark_step_loops_for_unrolling)
//   store and reload once per several iterations;
// - or those loops load and store only each work-item's own vectors (below).
// Scalar code, and narrow vectors with little loop state (float4 pixels, an n-body step's
// float3 accumulator), keep the work-group form, which fills the registers across work-items.
// Work is counted in lanes of arithmetic, loads and stores; 64-bit integer scalars are taken
// for index arithmetic. Kernels whose work-items can run in lockstep in the item loop
// (compiler/item_lockstep.h) take the item loop for groups that fill it whatever this says
// (KernelExec::item_loop_lockstep_items).
bool prefers_item_loop(Function& kernel, unsigned register_bits) {
  uint64_t full_lanes = 0, narrow_lanes = 0, scalar_lanes = 0;
  for (BasicBlock& block : kernel)
    for (Instruction& inst : block) {
      llvm::Type* type = inst.getType();
      if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst))
        type = store->getValueOperand()->getType();
      const bool work = llvm::isa<llvm::BinaryOperator>(inst) || llvm::isa<llvm::LoadInst>(inst) ||
                        llvm::isa<llvm::StoreInst>(inst) || llvm::isa<llvm::SelectInst>(inst) ||
                        llvm::isa<llvm::CmpInst>(inst) || llvm::isa<llvm::CastInst>(inst) ||
                        llvm::isa<llvm::IntrinsicInst>(inst);
      if (!work || type->isVoidTy() || type->isPointerTy()) continue;
      auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
      if (!vector) {
        if (!type->isIntegerTy(64)) ++scalar_lanes;
        continue;
      }
      const uint64_t bits = vector->getPrimitiveSizeInBits().getFixedValue();
      (bits >= 2 * register_bits ? full_lanes : narrow_lanes) += vector->getNumElements();
    }
  if (full_lanes > 0 && full_lanes >= 4 * (narrow_lanes + scalar_lanes)) return true;
  if (full_lanes + narrow_lanes == 0 || full_lanes + narrow_lanes < 4 * scalar_lanes) return false;
  constexpr uint64_t kManyCarriedLanes = 16;
  llvm::DominatorTree dominators(kernel);
  llvm::LoopInfo loops(dominators);
  uint64_t carried_lanes = 0;
  for (llvm::Loop* loop : loops.getLoopsInPreorder())
    for (llvm::PHINode& phi : loop->getHeader()->phis())
      if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(phi.getType());
          vector && vector->getPrimitiveSizeInBits().getFixedValue() >= register_bits)
        carried_lanes += vector->getNumElements();
  if (carried_lanes >= kManyCarriedLanes) return true;
  // Loops that load and store only each work-item's own vectors (a streaming read of float4
  // elements): the work-group form turns every such access into a strided one across
  // work-items. A vector every work-item loads alike (an n-body step's other body) is a single
  // broadcast there instead, which keeps that form ahead.
  const Divergence divergence(kernel);
  bool per_item_access = false;
  for (llvm::Loop* loop : loops.getLoopsInPreorder())
    for (BasicBlock* block : loop->blocks())
      for (Instruction& inst : *block) {
        const Value* address = nullptr;
        llvm::Type* type = nullptr;
        if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
          address = load->getPointerOperand();
          type = load->getType();
        } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
          address = store->getPointerOperand();
          type = store->getValueOperand()->getType();
        }
        if (!address || !llvm::isa<llvm::FixedVectorType>(type)) continue;
        if (!divergence.divergent(address)) return false;
        per_item_access = true;
      }
  return per_item_access;
}

// Whether the kernel computes the same for any division of the NDRange into work-groups (see
// KernelExec::partition_independent). Called on the kernel as written, everything inlined.
bool independent_of_partition(Function& kernel, const KernelInfo& info) {
  for (const KernelArg& arg : info.args)
    if (arg.kind == ArgKind::Local) return false;
  for (BasicBlock& block : kernel)
    for (Instruction& inst : block) {
      if (is_barrier(&inst)) return false;
      for (const Value* operand : inst.operands())
        if (auto* global = llvm::dyn_cast<llvm::GlobalValue>(operand->stripPointerCasts());
            global && global->getAddressSpace() == 3)
          return false;
      const std::optional<Query> query = query_of(&inst);
      if (query && *query != Query::GlobalId && *query != Query::GlobalSize &&
          *query != Query::GlobalOffset && *query != Query::WorkDim &&
          *query != Query::GlobalLinearId)
        return false;
    }
  return true;
}

}  // namespace manifold::compiler::workgroup
