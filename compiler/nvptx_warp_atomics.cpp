#include "compiler/nvptx_warp_atomics.h"

#include <llvm/ADT/APInt.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/CallingConv.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include <optional>
#include <vector>

namespace manifold::compiler {
namespace {

using Op = llvm::AtomicRMWInst::BinOp;
constexpr unsigned kWarpSize = 32;

// The operation that combines two lanes' operands and its identity (the first lane's exclusive
// prefix); nothing for an operation whose operands do not combine. Sub combines by adding: lane 0
// subtracts the lanes' sum. Exchange has no combination (its lanes' values pass along instead).
struct Combination {
  Op combine;
  llvm::APInt identity;
};

std::optional<Combination> combination_of(Op op, unsigned bits) {
  switch (op) {
    case Op::Add:
    case Op::Sub:
      return Combination{Op::Add, llvm::APInt::getZero(bits)};
    case Op::Or:
    case Op::Xor:
    case Op::UMax:
      return Combination{op, llvm::APInt::getZero(bits)};
    case Op::And:
    case Op::UMin:
      return Combination{op, llvm::APInt::getAllOnes(bits)};
    case Op::Max:
      return Combination{op, llvm::APInt::getSignedMinValue(bits)};
    case Op::Min:
      return Combination{op, llvm::APInt::getSignedMaxValue(bits)};
    default:
      return std::nullopt;
  }
}

llvm::Value* apply(llvm::IRBuilder<>& builder, Op op, llvm::Value* a, llvm::Value* b) {
  switch (op) {
    case Op::Add:
      return builder.CreateAdd(a, b);
    case Op::Sub:
      return builder.CreateSub(a, b);
    case Op::And:
      return builder.CreateAnd(a, b);
    case Op::Or:
      return builder.CreateOr(a, b);
    case Op::Xor:
      return builder.CreateXor(a, b);
    case Op::Max:
      return builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, b);
    case Op::Min:
      return builder.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, b);
    case Op::UMax:
      return builder.CreateBinaryIntrinsic(llvm::Intrinsic::umax, a, b);
    case Op::UMin:
      return builder.CreateBinaryIntrinsic(llvm::Intrinsic::umin, a, b);
    default:
      return nullptr;
  }
}

// Warp instructions over all 32 lanes.
class Warp {
 public:
  Warp(llvm::Module& module, llvm::IRBuilder<>& builder) : module_(module), builder_(builder) {}

  llvm::Value* call(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> arguments) {
    return builder_.CreateCall(llvm::Intrinsic::getOrInsertDeclaration(&module_, id), arguments);
  }
  llvm::Value* all_lanes() { return builder_.getInt32(~0u); }
  llvm::Value* lane_id() { return call(llvm::Intrinsic::nvvm_read_ptx_sreg_laneid, {}); }
  void barrier() { call(llvm::Intrinsic::nvvm_bar_warp_sync, {all_lanes()}); }

  // shfl.sync of a 32- or 64-bit integer, word by word: `from` is the source lane (idx) or the
  // distance to it (up).
  llvm::Value* shuffle(llvm::Intrinsic::ID kind, llvm::Value* value, unsigned from) {
    // The c operand: the clamp lane for idx, none for up (a lane below the distance keeps its own).
    const unsigned clamp = kind == llvm::Intrinsic::nvvm_shfl_sync_idx_i32 ? kWarpSize - 1 : 0;
    const auto word = [&](llvm::Value* w) {
      return call(kind, {all_lanes(), w, builder_.getInt32(from), builder_.getInt32(clamp)});
    };
    llvm::Type* type = value->getType();
    if (type->isIntegerTy(32)) return word(value);
    llvm::Type* i32 = builder_.getInt32Ty();
    llvm::Value* low = word(builder_.CreateTrunc(value, i32));
    llvm::Value* high = word(builder_.CreateTrunc(builder_.CreateLShr(value, 32), i32));
    return builder_.CreateOr(builder_.CreateZExt(low, type),
                             builder_.CreateShl(builder_.CreateZExt(high, type), 32));
  }
  llvm::Value* read_lane(llvm::Value* value, unsigned lane) {
    return shuffle(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, value, lane);
  }
  llvm::Value* from_lane_below(llvm::Value* value, unsigned distance) {
    return shuffle(llvm::Intrinsic::nvvm_shfl_sync_up_i32, value, distance);
  }

 private:
  llvm::Module& module_;
  llvm::IRBuilder<>& builder_;
};

// What lane 0's one operation applies (the lanes' operands combined) and what each lane's result
// combines the old value with (those of the lanes before it; exchange: the lane below's value).
struct WarpOperands {
  llvm::Value* total = nullptr;
  llvm::Value* before = nullptr;  // only where the result is used
};

WarpOperands combine_operands(llvm::IRBuilder<>& builder, Warp& warp, Op op, llvm::Value* value,
                              llvm::Value* lane, llvm::Value* first_lane, bool result_used) {
  llvm::Type* type = value->getType();
  WarpOperands operands;
  const auto* constant = llvm::dyn_cast<llvm::ConstantInt>(value);
  if (op == Op::Xchg) {
    operands.total = constant ? value : warp.read_lane(value, kWarpSize - 1);
    if (result_used) operands.before = constant ? value : warp.from_lane_below(value, 1);
    return operands;
  }
  const Combination combination = *combination_of(op, type->getIntegerBitWidth());
  llvm::Value* identity = llvm::ConstantInt::get(type, combination.identity);
  // The same constant in every lane (a counter's increment, a flag's bits): no shuffles.
  if (constant && combination.combine == Op::Add) {
    operands.total = builder.CreateMul(value, llvm::ConstantInt::get(type, kWarpSize));
    if (result_used) operands.before = builder.CreateMul(value, builder.CreateZExt(lane, type));
    return operands;
  }
  if (constant && op != Op::Xor) {  // idempotent operations
    operands.total = value;
    if (result_used) operands.before = builder.CreateSelect(first_lane, identity, value);
    return operands;
  }
  llvm::Value* inclusive = value;
  for (unsigned distance = 1; distance < kWarpSize; distance *= 2) {
    llvm::Value* below = warp.from_lane_below(inclusive, distance);
    llvm::Value* has_below = builder.CreateICmpUGE(lane, builder.getInt32(distance));
    inclusive = builder.CreateSelect(
        has_below, apply(builder, combination.combine, below, inclusive), inclusive);
  }
  operands.total = warp.read_lane(inclusive, kWarpSize - 1);
  if (result_used)
    operands.before =
        builder.CreateSelect(first_lane, identity, warp.from_lane_below(inclusive, 1));
  return operands;
}

// A kernel's argument or a module variable, at a constant offset: one address in every lane.
bool same_in_every_lane(const llvm::Value& pointer) {
  const llvm::Value* base = pointer.stripInBoundsConstantOffsets();
  if (llvm::isa<llvm::GlobalVariable>(base)) return true;
  const auto* argument = llvm::dyn_cast<llvm::Argument>(base);
  return argument && argument->getParent()->getCallingConv() == llvm::CallingConv::PTX_Kernel;
}

bool is_thread_index(const llvm::Instruction& instruction) {
  const auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction);
  if (!call) return false;
  switch (call->getIntrinsicID()) {
    case llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x:
    case llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y:
    case llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z:
    case llvm::Intrinsic::nvvm_read_ptx_sreg_laneid:
      return true;
    default:
      return false;
  }
}

bool divides(const llvm::Instruction& instruction) {
  switch (instruction.getOpcode()) {
    case llvm::Instruction::UDiv:
    case llvm::Instruction::SDiv:
    case llvm::Instruction::LShr:
    case llvm::Instruction::AShr:
      return true;
    default:
      return false;
  }
}

// Whether a warp's lanes may well share the address, which decides whether the run-time check is
// worth its cost. Not when the address comes from data the kernel read (a histogram's bin, a
// scatter's index; values read from module variables, the launch's sizes and offsets, are no such
// data), nor when it follows the thread index without a division on the way (element `id` of an
// array: a different one in each lane). An index divided first (word `id / 32` of a bit set) or
// no index at all may be the same in every lane.
bool may_share_address(const llvm::Value& address) {
  constexpr size_t kVisits = 64;  // deeper chains are not followed: no check
  struct Visit {
    const llvm::Value* value;
    bool divided;  // a division lies between this value and the address
  };
  std::vector<Visit> work{{&address, false}};
  llvm::SmallPtrSet<const llvm::Value*, 16> seen[2];
  size_t visits = 0;
  while (!work.empty()) {
    const Visit visit = work.back();
    work.pop_back();
    if (!seen[visit.divided].insert(visit.value).second) continue;
    if (++visits > kVisits) return false;
    const auto* instruction = llvm::dyn_cast<llvm::Instruction>(visit.value);
    if (!instruction) continue;  // arguments, constants, globals
    if (is_thread_index(*instruction)) {
      if (!visit.divided) return false;
      continue;
    }
    if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(instruction)) {
      if (!llvm::isa<llvm::GlobalVariable>(
              load->getPointerOperand()->stripInBoundsConstantOffsets()))
        return false;
      continue;
    }
    // Calls and atomics; the hardware registers' intrinsics read no memory.
    if (instruction->mayReadFromMemory()) return false;
    if (const auto* call = llvm::dyn_cast<llvm::CallInst>(instruction);
        call && (!call->getCalledFunction() || !call->getCalledFunction()->isIntrinsic()))
      return false;
    const bool divided = visit.divided || divides(*instruction);
    for (const llvm::Value* operand : instruction->operands()) work.push_back({operand, divided});
  }
  return true;
}

bool aggregable(const llvm::AtomicRMWInst& rmw) {
  llvm::Type* type = rmw.getValOperand()->getType();
  if (rmw.isVolatile() || !(type->isIntegerTy(32) || type->isIntegerTy(64))) return false;
  const unsigned space = rmw.getPointerAddressSpace();
  if (space != 0 && space != 1 && space != 3) return false;  // generic, global, shared
  if (rmw.getOperation() != Op::Xchg &&
      !combination_of(rmw.getOperation(), type->getIntegerBitWidth()))
    return false;
  return may_share_address(*rmw.getPointerOperand());
}

void aggregate(llvm::AtomicRMWInst& rmw, llvm::Module& module) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Function& function = *rmw.getFunction();
  llvm::Type* type = rmw.getValOperand()->getType();
  const Op op = rmw.getOperation();
  const bool ordered = llvm::isStrongerThanMonotonic(rmw.getOrdering());
  const bool result_used = !rmw.use_empty();

  llvm::BasicBlock* head = rmw.getParent();
  llvm::BasicBlock* tail = head->splitBasicBlock(rmw.getIterator(), "warp_atomic.tail");
  auto* combine = llvm::BasicBlock::Create(context, "warp_atomic.combine", &function, tail);
  auto* leader = llvm::BasicBlock::Create(context, "warp_atomic.leader", &function, tail);
  auto* join = llvm::BasicBlock::Create(context, "warp_atomic.join", &function, tail);
  auto* alone = llvm::BasicBlock::Create(context, "warp_atomic.alone", &function, tail);

  // head: are all 32 lanes here? activemask is the same value in every lane it names.
  head->getTerminator()->eraseFromParent();
  llvm::IRBuilder<> builder(head);
  Warp warp(module, builder);
  llvm::Value* whole_warp = builder.CreateICmpEQ(warp.call(llvm::Intrinsic::nvvm_activemask, {}),
                                                 warp.all_lanes(), "whole_warp");

  // check: on one address? Not asked where every lane's address is the same by construction.
  if (same_in_every_lane(*rmw.getPointerOperand())) {
    builder.CreateCondBr(whole_warp, combine, alone);
  } else {
    auto* check = llvm::BasicBlock::Create(context, "warp_atomic.check", &function, combine);
    builder.CreateCondBr(whole_warp, check, alone);
    builder.SetInsertPoint(check);
    const llvm::DataLayout& layout = module.getDataLayout();
    llvm::Value* address = builder.CreatePtrToInt(
        rmw.getPointerOperand(),
        builder.getIntNTy(layout.getPointerSizeInBits(rmw.getPointerAddressSpace())));
    llvm::Value* same = builder.CreateICmpEQ(address, warp.read_lane(address, 0));
    llvm::Value* one_address =
        warp.call(llvm::Intrinsic::nvvm_vote_all_sync, {warp.all_lanes(), same});
    builder.CreateCondBr(one_address, combine, alone);
  }

  // combine: the lanes' total and each lane's exclusive prefix, in lane order.
  builder.SetInsertPoint(combine);
  llvm::Value* lane = warp.lane_id();
  llvm::Value* first_lane = builder.CreateICmpEQ(lane, builder.getInt32(0));
  const WarpOperands operands =
      combine_operands(builder, warp, op, rmw.getValOperand(), lane, first_lane, result_used);
  if (ordered) warp.barrier();  // the other lanes' earlier accesses before lane 0's release
  builder.CreateCondBr(first_lane, leader, join);

  // leader: lane 0's one atomicrmw for the warp.
  builder.SetInsertPoint(leader);
  llvm::AtomicRMWInst* combined =
      builder.CreateAtomicRMW(op, rmw.getPointerOperand(), operands.total, rmw.getAlign(),
                              rmw.getOrdering(), rmw.getSyncScopeID());
  builder.CreateBr(join);

  // join: lane 0's old value to every lane, combined with the operands of the lanes before it.
  builder.SetInsertPoint(join);
  llvm::PHINode* old = result_used ? builder.CreatePHI(type, 2) : nullptr;
  if (ordered) warp.barrier();  // lane 0's acquire before the other lanes' later accesses
  llvm::Value* warp_result = nullptr;
  if (old) {
    old->addIncoming(combined, leader);
    old->addIncoming(llvm::PoisonValue::get(type), combine);
    llvm::Value* shared_old = warp.read_lane(old, 0);
    warp_result = op == Op::Xchg ? builder.CreateSelect(first_lane, shared_old, operands.before)
                                 : apply(builder, op, shared_old, operands.before);
  }
  builder.CreateBr(tail);

  // alone: the atomicrmw as written.
  builder.SetInsertPoint(alone);
  llvm::BranchInst* to_tail = builder.CreateBr(tail);
  rmw.moveBefore(to_tail->getIterator());
  if (result_used) {
    builder.SetInsertPoint(tail, tail->begin());
    llvm::PHINode* result = builder.CreatePHI(type, 2);
    rmw.replaceAllUsesWith(result);
    result->addIncoming(warp_result, join);
    result->addIncoming(&rmw, alone);
  }
}

}  // namespace

void aggregate_warp_atomics(llvm::Module& module) {
  std::vector<llvm::AtomicRMWInst*> candidates;
  for (llvm::Function& f : module)
    for (llvm::BasicBlock& b : f)
      for (llvm::Instruction& i : b)
        if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&i); rmw && aggregable(*rmw))
          candidates.push_back(rmw);
  for (llvm::AtomicRMWInst* rmw : candidates) aggregate(*rmw, module);
}

}  // namespace manifold::compiler
