// Work-item queries and barriers: which call is which (by the builtin's mangled name or the
// pass's own placeholders), and what each query becomes inside the work-group function, given
// the loop state of the region being emitted.
#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>

#include <algorithm>

#include "compiler/workgroup/passes.h"

namespace manifold::compiler::workgroup {

std::optional<Query> query_of(const Function* callee) {
  if (!callee) return std::nullopt;
  static const llvm::DenseMap<llvm::StringRef, Query> kNames = {
      {"_Z13get_global_idj", Query::GlobalId},
      {"_Z12get_local_idj", Query::LocalId},
      {"_Z12get_group_idj", Query::GroupId},
      {"_Z14get_local_sizej", Query::LocalSize},
      {"_Z23get_enqueued_local_sizej", Query::EnqueuedLocalSize},
      {"_Z14get_num_groupsj", Query::NumGroups},
      {"_Z15get_global_sizej", Query::GlobalSize},
      {"_Z17get_global_offsetj", Query::GlobalOffset},
      {"_Z12get_work_dimv", Query::WorkDim},
      {"_Z20get_global_linear_idv", Query::GlobalLinearId},
      {"_Z19get_local_linear_idv", Query::LocalLinearId},
      {kSlotFunction, Query::Slot},
      {kPrivateFunction, Query::Private},
      {kUniformFunction, Query::UniformSlot},
      {"__manifold_collective_scratch", Query::CollectiveScratch},
      {"_Z18get_sub_group_sizev", Query::SubGroupSize},
      {"_Z22get_max_sub_group_sizev", Query::MaxSubGroupSize},
      {"_Z18get_num_sub_groupsv", Query::NumSubGroups},
      {"_Z27get_enqueued_num_sub_groupsv", Query::EnqueuedNumSubGroups},
      {"_Z16get_sub_group_idv", Query::SubGroupId},
      {"_Z22get_sub_group_local_idv", Query::SubGroupLocalId},
      {"__manifold_sub_group_active", Query::SubGroupActive},
      {"__manifold_sub_group_exchange", Query::SubGroupExchange},
  };
  auto it = kNames.find(callee->getName());
  if (it == kNames.end()) return std::nullopt;
  return it->second;
}

std::optional<Query> query_of(const Instruction* inst) {
  auto* call = llvm::dyn_cast<CallInst>(inst);
  return call ? query_of(call->getCalledFunction()) : std::nullopt;
}

bool is_work_group_barrier(const Instruction* inst) {
  auto* call = llvm::dyn_cast<CallInst>(inst);
  if (!call || !call->getCalledFunction()) return false;
  llvm::StringRef name = call->getCalledFunction()->getName();
  return name == "_Z7barrierj" || name == "_Z18work_group_barrierj" ||
         name == "_Z18work_group_barrierj12memory_scope" || name == "__manifold_barrier" ||
         name == kImplicitBarrier;
}

bool is_sub_group_barrier(const Instruction* inst) {
  auto* call = llvm::dyn_cast<CallInst>(inst);
  return call && call->getCalledFunction() &&
         call->getCalledFunction()->getName() == kSubGroupBarrier;
}

bool is_barrier(const Instruction* inst) {
  return is_work_group_barrier(inst) || is_sub_group_barrier(inst);
}

// A work-item query (or placeholder) with constant operands gives the same value wherever it is
// evaluated for the same work-item: rather than spilling it across a barrier, re-evaluate it.
// Not the active lanes of a sub-group, which differ from one sub-group barrier to the next.
bool is_rematerializable(const Instruction* inst) {
  auto query = query_of(inst);
  if (!query || *query == Query::SubGroupActive) return false;
  auto* call = llvm::cast<CallInst>(inst);
  return std::all_of(call->arg_begin(), call->arg_end(),
                     [](const llvm::Use& u) { return llvm::isa<llvm::Constant>(u.get()); });
}

bool has_barriers(Function& kernel) {
  for (BasicBlock& block : kernel)
    for (Instruction& inst : block)
      if (is_barrier(&inst)) return true;
  return false;
}

Value* KernelLowering::resolve_query(IRBuilder<>& b, CallInst* call, Query query) {
  const Uniforms& u = uniforms_;
  auto dimension_select = [&](auto&& per_dimension, uint64_t out_of_range) -> Value* {
    Value* dim = call->getArgOperand(0);
    if (auto* constant = llvm::dyn_cast<llvm::ConstantInt>(dim)) {
      uint64_t d = constant->getZExtValue();
      return d < 3 ? per_dimension(unsigned(d)) : llvm::ConstantInt::get(i64_, out_of_range);
    }
    Value* result = llvm::ConstantInt::get(i64_, out_of_range);
    for (int d = 2; d >= 0; --d) {
      Value* is_d = b.CreateICmpEQ(dim, llvm::ConstantInt::get(dim->getType(), d));
      result = b.CreateSelect(is_d, per_dimension(unsigned(d)), result);
    }
    return result;
  };
  auto global_id = [&](unsigned d) -> Value* {
    return b.CreateAdd(b.CreateAdd(b.CreateMul(u.group_id[d], u.enqueued[d]), local_id_[d]),
                       u.global_offset[d]);
  };
  switch (query) {
    case Query::GlobalId:
      return dimension_select(global_id, 0);
    case Query::LocalId:
      return dimension_select([&](unsigned d) { return local_id_[d]; }, 0);
    case Query::GroupId:
      return dimension_select([&](unsigned d) { return u.group_id[d]; }, 0);
    case Query::LocalSize:
      return dimension_select([&](unsigned d) { return u.local_size[d]; }, 1);
    case Query::EnqueuedLocalSize:
      return dimension_select([&](unsigned d) { return u.enqueued[d]; }, 1);
    case Query::NumGroups:
      return dimension_select([&](unsigned d) { return u.num_groups[d]; }, 1);
    case Query::GlobalSize:
      return dimension_select([&](unsigned d) { return u.global_size[d]; }, 1);
    case Query::GlobalOffset:
      return dimension_select([&](unsigned d) { return u.global_offset[d]; }, 0);
    case Query::WorkDim:
      return b.CreateTrunc(u.work_dim, call->getType());
    case Query::GlobalLinearId: {
      Value* id0 = b.CreateSub(global_id(0), u.global_offset[0]);
      Value* id1 = b.CreateSub(global_id(1), u.global_offset[1]);
      Value* id2 = b.CreateSub(global_id(2), u.global_offset[2]);
      Value* plane = b.CreateMul(u.global_size[1], u.global_size[0]);
      return b.CreateAdd(b.CreateAdd(b.CreateMul(id2, plane), b.CreateMul(id1, u.global_size[0])),
                         id0);
    }
    case Query::LocalLinearId:
      return local_linear_;
    case Query::Slot: {
      auto* index = llvm::cast<llvm::ConstantInt>(call->getArgOperand(0));
      const unsigned slot = index->getZExtValue();
      Value* offset = b.CreateMul(local_linear_, llvm::ConstantInt::get(i64_, slot_sizes_[slot]));
      return b.CreateGEP(i8_, u.slot_base[slot], offset, "slot");
    }
    case Query::CollectiveScratch:
      return b.CreateAddrSpaceCast(u.collective_scratch, call->getType());
    case Query::UniformSlot: {
      auto* index = llvm::cast<llvm::ConstantInt>(call->getArgOperand(0));
      return u.uniform_slots[index->getZExtValue()];
    }
    case Query::Private: {
      Value* offset =
          b.CreateAdd(b.CreateMul(local_linear_, llvm::ConstantInt::get(i64_, private_bytes_)),
                      call->getArgOperand(0));
      return b.CreateGEP(i8_, u.private_base, offset, "private");
    }
    default:
      return resolve_sub_group_query(b, call, query);
  }
  return nullptr;
}

Value* KernelLowering::resolve_sub_group_query(IRBuilder<>& b, CallInst* call, Query query) {
  const Uniforms& u = uniforms_;
  Value* width = llvm::ConstantInt::get(i64_, sub_group_size_);
  auto result = [&](Value* value) { return b.CreateZExtOrTrunc(value, call->getType()); };
  auto sub_groups = [&](Value* items) {
    return b.CreateUDiv(b.CreateAdd(items, llvm::ConstantInt::get(i64_, sub_group_size_ - 1)),
                        width);
  };
  Value* enqueued_items = b.CreateMul(b.CreateMul(u.enqueued[0], u.enqueued[1]), u.enqueued[2]);
  switch (query) {
    case Query::SubGroupSize: {
      // The last sub-group holds what is left of the group.
      Value* first = b.CreateMul(b.CreateUDiv(local_linear_, width), width);
      return result(
          b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, width, b.CreateSub(u.items, first)));
    }
    case Query::MaxSubGroupSize:
      return result(b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, width, enqueued_items));
    case Query::NumSubGroups:
      return result(sub_groups(u.items));
    case Query::EnqueuedNumSubGroups:
      return result(sub_groups(enqueued_items));
    case Query::SubGroupId:
      return result(b.CreateUDiv(local_linear_, width));
    case Query::SubGroupLocalId:
      return result(b.CreateURem(local_linear_, width));
    case Query::SubGroupActive:
      // Outside sub-group mode no work-item waits for another (a group of one work-item).
      if (!sub_group_mode_) return llvm::ConstantInt::get(call->getType(), 1);
      return active_lanes(region_id_, region_preheader_);
    case Query::SubGroupExchange:
      return b.CreatePointerBitCastOrAddrSpaceCast(u.exchange, call->getType());
    default:
      return nullptr;
  }
}

// The lanes of the running sub-group that stand at `region_id` as the region's pass begins:
// those that arrived at its barrier together (computed once per pass, in the preheader).
Value* KernelLowering::active_lanes(unsigned region_id, BasicBlock* preheader) {
  if (region_active_) return region_active_;
  const Uniforms& u = uniforms_;
  IRBuilder<> b(preheader->getTerminator());
  Value* count = b.CreateSub(u.sub_group_end, u.sub_group_begin);
  Value* last = b.CreateSub(u.sub_group_end, llvm::ConstantInt::get(i64_, 1));
  Value* mask = llvm::ConstantInt::get(i64_, 0);
  for (unsigned lane = 0; lane < sub_group_size_; ++lane) {
    Value* index = b.CreateBinaryIntrinsic(
        llvm::Intrinsic::umin, b.CreateAdd(u.sub_group_begin, llvm::ConstantInt::get(i64_, lane)),
        last);
    Value* state = b.CreateLoad(i32_, b.CreateGEP(i32_, u.lane_state, index));
    Value* here = b.CreateAnd(b.CreateICmpULT(llvm::ConstantInt::get(i64_, lane), count),
                              b.CreateICmpEQ(state, llvm::ConstantInt::get(i32_, region_id)));
    mask = b.CreateOr(mask, b.CreateShl(b.CreateZExt(here, i64_), lane));
  }
  region_active_ = mask;
  return mask;
}

}  // namespace manifold::compiler::workgroup
