#include "compiler/item_lockstep.h"

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

namespace manifold::compiler {
namespace {

using llvm::BasicBlock;
using llvm::Instruction;
using llvm::IRBuilder;
using llvm::Value;

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

// A narrower index extended to 64 bits (`in[i]` with `int i = get_global_id(0)`): its values are
// consecutive across the work-items only where the index does not wrap between the first and the
// last work-item, which the lockstep loop checks before it starts.
struct ExtendedIndex {
  const llvm::SCEVAddRecExpr* index;  // {start,+,step} over the x loop
  bool is_signed;
};

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

class Lockstep {
 public:
  Lockstep(const ItemLoop& loop, unsigned register_bits)
      : loop_(loop),
        register_bits_(register_bits),
        // AVX-512's 32 registers hold two registers' worth of every value of most kernels: the
        // core then has two independent operations wherever the kernel has one (a hash's
        // rounds are one serial chain per work-item). AVX2's 16 registers would spill.
        registers_(register_bits >= 512 ? 2 : 1),
        context_(loop.function->getContext()) {}

  LockstepLoop run() {
    if (!collect_body() || !find_varying()) return {};
    // The analyses hold until build(): only check_no_wrap adds code before then, in the
    // preheader, without changing the blocks.
    llvm::DominatorTree dominators(*loop_.function);
    llvm::LoopInfo loops(dominators);
    find_consecutive_accesses(dominators, loops);
    if (!choose_lanes()) return {};
    // One register per iteration leaves the core one chain per operation of the kernel: on
    // AVX-512 that lost to the work-group form, which interleaves vectors of work-items.
    const bool latency_bound = registers_ < 2 || loops_are_latency_bound(loops);
    build();
    loop_.function->addFnAttr(kItemLockstepAttribute, std::to_string(ways_));
    return {ways_, latency_bound};
  }

 private:
  // How the lockstep loop holds an original value: once for all its work-items, once per
  // work-item, or as one vector of N times the lanes (work-item x + i's at lanes i x lanes_ on).
  enum class Shape { Uniform, PerItem, Wide };
  struct Held {
    Shape shape = Shape::Uniform;
    // Uniform: the value; Wide: the joined vector; PerItem: work-item x + i's value at i.
    llvm::SmallVector<Value*, 8> values;
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
    // Values of the body must not be used after it: the lockstep loop defines them again.
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

  // Loads and stores where work-item x + 1's address is x's plus the element's size (a streaming
  // read of in[get_global_id(0)], a store of each work-item's result): in lockstep one access
  // covers every work-item, in the joined vectors' order. Private memory does not qualify (each
  // work-item of an iteration has its own copy).
  void find_consecutive_accesses(llvm::DominatorTree& dominators, llvm::LoopInfo& loops) {
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
        } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst);
                   store && store->isSimple()) {
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
  bool check_no_wrap(llvm::ScalarEvolution& evolution, llvm::ArrayRef<ExtendedIndex> extended) {
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
  unsigned items_per_iteration(llvm::Type* type) const {
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

  static unsigned lanes(llvm::Type* type) {
    auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
    return vector ? vector->getNumElements() : 1;
  }

  // The kernel's values that carry the work and how many work-items fill the iteration's
  // registers with them: running work-items together pays where most varying operations become
  // full-register operations. Tried from the most frequent type on (a kernel of float4 values
  // and scalar floats may pass with either).
  bool choose_lanes() {
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
  bool loops_are_latency_bound(const llvm::LoopInfo& loops) {
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
        longest =
            std::max(longest, steps.lookup(phi.getIncomingValueForBlock(loop->getLoopLatch())));
      }
      if (longest > 0 && operations < 2 * longest) return true;
    }
    return false;
  }

  // Whether values of `type` are joined: vectors of the chosen lane count, or with scalars
  // chosen, scalars but 64-bit integers (index arithmetic) and pointers.
  bool lanes_of(llvm::Type* type) const {
    if (scalar_)
      return (type->isIntegerTy() && !type->isIntegerTy(64)) || type->isFloatingPointTy();
    auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
    return vector && vector->getNumElements() == lanes_ && !vector->getElementType()->isPointerTy();
  }

  // Whether a varying instruction becomes one operation on joined vectors (its shape before
  // operands are known: operands that are not joined get joined).
  bool widens(const Instruction& inst) const {
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

  llvm::FixedVectorType* wide_type(llvm::Type* type) const {
    return llvm::FixedVectorType::get(type->getScalarType(), ways_ * lanes_);
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
    return {Shape::Uniform, {original}};  // defined before the loop, or a constant
  }

  // Work-item x + i's value.
  Value* of_item(Value* original, unsigned i) {
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
  Value* joined(Value* original) {
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

  void build();
  void build_instruction(IRBuilder<>& b, Instruction& inst);
  Value* build_wide(IRBuilder<>& b, Instruction& inst);

  const ItemLoop& loop_;
  unsigned register_bits_;
  unsigned registers_;  // joined vectors fill this many registers
  llvm::LLVMContext& context_;
  unsigned lanes_ = 0;   // of the kernel's vectors that are joined (1: scalars)
  bool scalar_ = false;  // scalars are joined
  unsigned ways_ = 0;    // work-items per iteration
  std::vector<BasicBlock*> body_;
  llvm::SmallPtrSet<BasicBlock*, 32> body_set_;
  llvm::SmallPtrSet<Value*, 32> varying_;
  llvm::SmallPtrSet<const Instruction*, 16> consecutive_;  // see find_consecutive_accesses
  std::vector<Value*> no_wrap_;                            // see check_no_wrap
  llvm::DenseMap<Value*, Held> held_;
  llvm::DenseMap<Value*, Value*> joins_;
  llvm::DenseMap<std::pair<Value*, unsigned>, Value*> parts_;
  llvm::DenseMap<BasicBlock*, BasicBlock*> blocks_;
};

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

}  // namespace

LockstepLoop run_items_in_lockstep(const ItemLoop& loop, unsigned register_bits) {
  if (register_bits < 256) return {};
  return Lockstep(loop, register_bits).run();
}

}  // namespace manifold::compiler
