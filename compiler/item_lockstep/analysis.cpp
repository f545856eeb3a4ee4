// Whether an item loop's body runs in lockstep, and how: the body's blocks, the values that vary
// between work-items, the accesses consecutive across them and the type whose vectors are joined.
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
namespace {

// Element-wise intrinsics whose one overloaded type is the result's and whose other operands
// have that type too (or are constants, such as ctlz's flag): one call on the joined vectors
// computes every work-item.
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
// How many bytes `address` advances from one work-item of `item_loop` to the next, where that is
// the same for every work-item (an affine recurrence of the x loop, or of a loop inside it
// started from one, or sums and constant multiples of those), and the extended indices that
// holds for.
std::optional<int64_t> item_stride(llvm::ScalarEvolution& evolution, const llvm::SCEV* address,
                                   const llvm::Loop* item_loop,
                                   llvm::SmallVectorImpl<ExtendedIndex>& extended) {
  if (evolution.isLoopInvariant(address, item_loop)) return 0;
  if (auto* sum = llvm::dyn_cast<llvm::SCEVAddExpr>(address)) {
    int64_t total = 0;
    for (const llvm::SCEV* operand : sum->operands()) {
      const std::optional<int64_t> part = item_stride(evolution, operand, item_loop, extended);
      if (!part) return std::nullopt;
      total += *part;
    }
    return total;
  }
  if (auto* product = llvm::dyn_cast<llvm::SCEVMulExpr>(address)) {
    int64_t factor = 1;
    const llvm::SCEV* varying = nullptr;
    for (const llvm::SCEV* operand : product->operands()) {
      if (auto* constant = llvm::dyn_cast<llvm::SCEVConstant>(operand);
          constant && constant->getAPInt().getSignificantBits() <= 32)
        factor *= constant->getAPInt().getSExtValue();
      else if (varying)
        return std::nullopt;
      else
        varying = operand;
    }
    const std::optional<int64_t> part =
        varying ? item_stride(evolution, varying, item_loop, extended) : 0;
    if (!part) return std::nullopt;
    return *part * factor;
  }
  if (auto* extension = llvm::dyn_cast<llvm::SCEVIntegralCastExpr>(address);
      extension && (llvm::isa<llvm::SCEVSignExtendExpr>(extension) ||
                    llvm::isa<llvm::SCEVZeroExtendExpr>(extension))) {
    auto* index = llvm::dyn_cast<llvm::SCEVAddRecExpr>(extension->getOperand());
    if (!index || !index->isAffine() || index->getLoop() != item_loop) return std::nullopt;
    auto* step = llvm::dyn_cast<llvm::SCEVConstant>(index->getStepRecurrence(evolution));
    if (!step || !step->getAPInt().isStrictlyPositive() ||
        step->getAPInt().getSignificantBits() > 32)
      return std::nullopt;
    extended.push_back({index, llvm::isa<llvm::SCEVSignExtendExpr>(extension)});
    return step->getAPInt().getSExtValue();
  }
  auto* recurrence = llvm::dyn_cast<llvm::SCEVAddRecExpr>(address);
  if (!recurrence || !recurrence->isAffine() || !item_loop->contains(recurrence->getLoop()))
    return std::nullopt;
  const llvm::SCEV* step = recurrence->getStepRecurrence(evolution);
  if (recurrence->getLoop() != item_loop) {
    if (!evolution.isLoopInvariant(step, item_loop)) return std::nullopt;
    return item_stride(evolution, recurrence->getStart(), item_loop, extended);
  }
  auto* constant = llvm::dyn_cast<llvm::SCEVConstant>(step);
  if (!constant || constant->getAPInt().getSignificantBits() > 64) return std::nullopt;
  return constant->getAPInt().getSExtValue();
}

}  // namespace

// The body in reverse post-order (every operand but a phi's is built before its user).
bool Lockstep::collect_body() {
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
  // Values of the body must not be used after it: the lockstep loop defines them again.
  for (BasicBlock* block : body_)
    for (Instruction& inst : *block)
      for (llvm::User* user : inst.users())
        if (&inst != loop_.item && !body_set_.contains(llvm::cast<Instruction>(user)->getParent()))
          return false;
  return true;
}

// A value is varying when it may differ between two work-items: derived from the x id or
// from private memory, or produced by an operation with effects, which each work-item does.
bool Lockstep::find_varying() {
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

// Loads and stores where work-item x + 1's address is x's plus the element's size (a streaming
// read of in[get_global_id(0)], a store of each work-item's result): in lockstep one access
// covers every work-item, in the joined vectors' order. Private memory does not qualify (each
// work-item of an iteration has its own copy).
void Lockstep::find_consecutive_accesses(llvm::DominatorTree& dominators, llvm::LoopInfo& loops) {
  llvm::Function& f = *loop_.function;
  llvm::TargetLibraryInfoImpl library_info(f.getParent()->getTargetTriple());
  llvm::TargetLibraryInfo library(library_info, &f);
  llvm::AssumptionCache assumptions(f);
  llvm::ScalarEvolution evolution(f, library, assumptions, dominators, loops);
  const llvm::Loop* item_loop = loops.getLoopFor(loop_.header);
  if (!item_loop || item_loop->getHeader() != loop_.header) return;
  const llvm::DataLayout& layout = f.getDataLayout();
  for (BasicBlock* block : body_)
    for (Instruction& inst : *block) {
      Value* address = nullptr;
      llvm::Type* type = nullptr;
      if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst); load && load->isSimple()) {
        address = load->getPointerOperand();
        type = load->getType();
      } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst); store && store->isSimple()) {
        address = store->getPointerOperand();
        type = store->getValueOperand()->getType();
      }
      if (!address || !varying_.contains(address) || type->isPointerTy() ||
          layout.getTypeStoreSize(type) != layout.getTypeAllocSize(type))
        continue;
      const llvm::SCEV* where = evolution.getSCEV(address);
      auto* base = llvm::dyn_cast<llvm::SCEVUnknown>(evolution.getPointerBase(where));
      if (!base || varying_.contains(base->getValue())) continue;
      llvm::SmallVector<ExtendedIndex, 2> extended;
      const std::optional<int64_t> stride = item_stride(evolution, where, item_loop, extended);
      if (stride && *stride > 0 &&
          static_cast<uint64_t>(*stride) == layout.getTypeAllocSize(type) &&
          check_no_wrap(evolution, extended))
        consecutive_.insert(&inst);
    }
}

// Adds to the preheader, for each extended index, whether its value for the x loop's last
// work-item fits its type without wrapping (its first is its start): the lockstep loop runs
// only where they all do (a launch whose ids pass 2^31 runs the work-items one by one).
bool Lockstep::check_no_wrap(llvm::ScalarEvolution& evolution,
                             llvm::ArrayRef<ExtendedIndex> extended) {
  if (extended.empty()) return true;
  Instruction* at = loop_.preheader->getTerminator();
  llvm::SCEVExpander expander(evolution, "lockstep.index", /*PreserveLCSSA=*/false);
  for (const ExtendedIndex& e : extended)
    if (e.index->getType()->getIntegerBitWidth() >= 64 ||
        !expander.isSafeToExpandAt(e.index->getStart(), at))
      return false;
  IRBuilder<> b(at);
  llvm::Type* i64 = b.getInt64Ty();
  for (const ExtendedIndex& e : extended) {
    const unsigned bits = e.index->getType()->getIntegerBitWidth();
    Value* start = expander.expandCodeFor(e.index->getStart(), e.index->getType(), at);
    Value* first = e.is_signed ? b.CreateSExt(start, i64) : b.CreateZExt(start, i64);
    auto* step = llvm::cast<llvm::SCEVConstant>(e.index->getStepRecurrence(evolution));
    Value* last_item = b.CreateSub(b.CreateZExtOrTrunc(loop_.end, i64), b.getInt64(1));
    Value* last =
        b.CreateAdd(first, b.CreateMul(last_item, b.getInt64(step->getValue()->getSExtValue())));
    const uint64_t largest =
        e.is_signed ? (uint64_t{1} << (bits - 1)) - 1 : (uint64_t{1} << bits) - 1;
    no_wrap_.push_back(b.CreateICmpSLE(last, b.getInt64(largest), "lockstep.no_wrap"));
  }
  return true;
}

// How many work-items' values of `type` one iteration holds: registers_ registers full, for
// vectors of 64 bits up to a register and 32- or 64-bit scalars but integers of 64 bits
// (index arithmetic); else 0.
unsigned Lockstep::items_per_iteration(llvm::Type* type) const {
  uint64_t bits = 0;
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type)) {
    if (vector->getElementType()->isPointerTy()) return 0;
    bits = vector->getPrimitiveSizeInBits().getFixedValue();
    if (bits < 64) return 0;
  } else if (type->isFloatTy() || type->isDoubleTy() || type->isIntegerTy(32)) {
    bits = type->getPrimitiveSizeInBits().getFixedValue();
  } else {
    return 0;
  }
  const uint64_t iteration_bits = uint64_t{registers_} * register_bits_;
  if (2 * bits > iteration_bits || iteration_bits % bits) return 0;
  const uint64_t ways = iteration_bits / bits;
  return (ways & (ways - 1)) == 0 ? static_cast<unsigned>(ways) : 0;
}

unsigned Lockstep::lanes(llvm::Type* type) {
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  return vector ? vector->getNumElements() : 1;
}

// The kernel's values that carry the work and how many work-items fill the iteration's
// registers with them: running work-items together pays where most varying operations become
// full-register operations. Tried from the most frequent type on (a kernel of float4 values
// and scalar floats may pass with either).
bool Lockstep::choose_lanes() {
  llvm::DenseMap<llvm::Type*, unsigned> by_type;
  for (Value* value : varying_)
    if (auto* inst = llvm::dyn_cast<Instruction>(value);
        inst && items_per_iteration(inst->getType()))
      ++by_type[inst->getType()];
  auto rank = [&](llvm::Type* type) {
    return std::make_tuple(by_type.lookup(type), -static_cast<int>(items_per_iteration(type)),
                           lanes(type));
  };
  std::vector<llvm::Type*> candidates;
  for (auto [type, count] : by_type) candidates.push_back(type);
  std::sort(candidates.begin(), candidates.end(),
            [&](llvm::Type* a, llvm::Type* b) { return rank(a) > rank(b); });
  for (llvm::Type* type : candidates) {
    lanes_ = lanes(type);
    scalar_ = !type->isVectorTy();
    ways_ = items_per_iteration(type);
    unsigned wide = 0, per_item = 0;
    for (Value* value : varying_) {
      auto* inst = llvm::dyn_cast<Instruction>(value);
      if (!inst || !body_set_.contains(inst->getParent()) || inst == loop_.item) continue;
      if (widens(*inst))
        ++wide;
      else if (!llvm::isa<llvm::GetElementPtrInst>(inst) && !llvm::isa<llvm::PHINode>(inst) &&
               !llvm::isa<llvm::ExtractElementInst>(inst) && !llvm::isa<llvm::CastInst>(inst) &&
               !inst->getType()->isIntegerTy(64))  // index arithmetic, the work-items' addresses
        ++per_item;
    }
    if (wide >= 4 && wide >= ways_ / registers_ * per_item) return true;
  }
  return false;
}

// Whether some loop inside the body does fewer than two joined operations per step of the
// longest chain a value it carries goes through in one iteration.
bool Lockstep::loops_are_latency_bound(const llvm::LoopInfo& loops) {
  for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
    if (loop->getHeader() == loop_.header || !body_set_.contains(loop->getHeader()) ||
        !loop->getLoopLatch())
      continue;
    unsigned operations = 0, longest = 0;
    for (BasicBlock* block : loop->blocks())
      for (Instruction& inst : *block)
        operations += varying_.contains(&inst) && !llvm::isa<llvm::PHINode>(inst) && widens(inst);
    for (llvm::PHINode& phi : loop->getHeader()->phis()) {
      if (!varying_.contains(&phi) || !widens(phi)) continue;
      // Steps from the phi to each value computed from it in one iteration, in the body's
      // reverse post-order (operands before their users).
      llvm::DenseMap<Value*, unsigned> steps{{&phi, 0}};
      for (BasicBlock* block : body_) {
        if (!loop->contains(block)) continue;
        for (Instruction& inst : *block) {
          if (llvm::isa<llvm::PHINode>(inst)) continue;
          for (Value* operand : inst.operands())
            if (auto it = steps.find(operand); it != steps.end())
              steps[&inst] = std::max(steps.lookup(&inst), it->second + 1);
        }
      }
      longest = std::max(longest, steps.lookup(phi.getIncomingValueForBlock(loop->getLoopLatch())));
    }
    if (longest > 0 && operations < 2 * longest) return true;
  }
  return false;
}

// Whether values of `type` are joined: vectors of the chosen lane count, or with scalars
// chosen, scalars but 64-bit integers (index arithmetic) and pointers.
bool Lockstep::lanes_of(llvm::Type* type) const {
  if (scalar_) return (type->isIntegerTy() && !type->isIntegerTy(64)) || type->isFloatingPointTy();
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  return vector && vector->getNumElements() == lanes_ && !vector->getElementType()->isPointerTy();
}

// Whether a varying instruction becomes one operation on joined vectors (its shape before
// operands are known: operands that are not joined get joined).
bool Lockstep::widens(const Instruction& inst) const {
  if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst))
    return consecutive_.contains(&inst) && lanes_of(store->getValueOperand()->getType());
  if (!lanes_of(inst.getType())) return false;
  if (llvm::isa<llvm::LoadInst>(inst)) return consecutive_.contains(&inst);
  if (llvm::isa<llvm::BinaryOperator>(inst) || llvm::isa<llvm::UnaryOperator>(inst) ||
      llvm::isa<llvm::CmpInst>(inst) || llvm::isa<llvm::PHINode>(inst) ||
      llvm::isa<llvm::FreezeInst>(inst))
    return true;
  if (auto* cast = llvm::dyn_cast<llvm::CastInst>(&inst)) return lanes_of(cast->getSrcTy());
  if (auto* select = llvm::dyn_cast<llvm::SelectInst>(&inst))
    return lanes_of(select->getCondition()->getType()) ||
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

}  // namespace manifold::compiler::lockstep
