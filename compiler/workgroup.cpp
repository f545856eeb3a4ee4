#include "compiler/workgroup.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/ADT/SetVector.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/SimplifyQuery.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ReplaceConstant.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/LCSSA.h>
#include <llvm/Transforms/Utils/LoopRotationUtils.h>
#include <llvm/Transforms/Utils/LoopSimplify.h>
#include <llvm/Transforms/Utils/LoopUtils.h>
#include <llvm/Transforms/Utils/SSAUpdater.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <algorithm>
#include <bit>
#include <deque>
#include <functional>
#include <optional>
#include <set>

#include "compiler/item_lockstep.h"
#include "compiler/kernel_info.h"

namespace manifold::compiler {
namespace {

using llvm::BasicBlock;
using llvm::CallInst;
using llvm::Function;
using llvm::Instruction;
using llvm::IRBuilder;
using llvm::Value;

// Work-item builtins, by their Itanium-mangled names (as -fdeclare-opencl-builtins emits them).
enum class Query {
  GlobalId,
  LocalId,
  GroupId,
  LocalSize,
  EnqueuedLocalSize,
  NumGroups,
  GlobalSize,
  GlobalOffset,
  WorkDim,
  GlobalLinearId,
  LocalLinearId,
  Slot,               // __manifold.wi_slot(i32 k): this work-item's element of spill slot k
  Private,            // __manifold.wi_private(i64 offset): this work-item's private memory + offset
  CollectiveScratch,  // __manifold_collective_scratch(): the group's collective scratch
  UniformSlot,        // __manifold.wg_uniform(i32 k): the group's one copy of uniform slot k
  SubGroupSize,
  MaxSubGroupSize,
  NumSubGroups,
  EnqueuedNumSubGroups,
  SubGroupId,
  SubGroupLocalId,
  SubGroupActive,    // __manifold_sub_group_active(): lanes at this sub-group barrier (bit mask)
  SubGroupExchange,  // __manifold_sub_group_exchange(): the group's sub-group exchange slots
};

constexpr const char* kSlotFunction = "__manifold.wi_slot";
constexpr const char* kPrivateFunction = "__manifold.wi_private";
constexpr const char* kUniformFunction = "__manifold.wg_uniform";
// A barrier the pass inserts itself (implicit loop barriers); never reaches the final module.
constexpr const char* kImplicitBarrier = "__manifold.implicit_barrier";
// Where the work-items of a sub-group meet (compiler/builtins/subgroups.cl): sub_group_barrier
// and every sub-group function that exchanges values. Kernels that call it are lowered in
// sub-group mode (KernelLowering::sub_group_mode_).
constexpr const char* kSubGroupBarrier = "__manifold_sub_group_barrier";

// Region id meaning "the work-items returned".
constexpr unsigned kExit = ~0u;

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

// Where regions end: work-group and sub-group barriers.
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

uint64_t align_to(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

using BlockSet = llvm::SmallPtrSet<BasicBlock*, 32>;

// Blocks reachable from `sources` (included), never entering `avoid`.
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

// Blocks reachable from `sources` (included), never entering a block of `avoid`.
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

// Which values may differ between the work-items of a group, and which blocks not every
// work-item reaches. Uniform values need one copy per group, not one per work-item, and the
// vectorizer sees them as loop-invariant; uniform loops can hold the work-item loop inside.
//
// Sources of divergence: local/global ids, per-work-item memory, every load, atomic or call
// that reads memory (conservative: another work-item may have written it). A branch on a
// divergent value makes the phis at its join (immediate post-dominator) and in the blocks
// before it divergent; when those blocks form a loop, values leaving the loop are divergent
// too (work-items leave after different iteration counts).
class Divergence {
 public:
  explicit Divergence(Function& function) { compute(function); }
  bool divergent(const Value* value) const { return values_.contains(value); }
  bool reached_by_all(const BasicBlock* block) const { return !influenced_.contains(block); }
  static const Value* condition_of(const Instruction* terminator) {
    if (auto* branch = llvm::dyn_cast<llvm::BranchInst>(terminator))
      return branch->isConditional() ? branch->getCondition() : nullptr;
    if (auto* choice = llvm::dyn_cast<llvm::SwitchInst>(terminator)) return choice->getCondition();
    return nullptr;
  }

 private:
  static bool is_source(const Instruction& inst) {
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
  void compute(Function& function) {
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

  llvm::DenseSet<const Value*> values_;
  llvm::DenseSet<const BasicBlock*> influenced_;
};

// A pure computation of constants, arguments and work-item queries: cheaper to compute again
// after a barrier than to keep per work-item, and the copy stays visibly affine in the local
// id (consecutive or invariant addresses for the vectorizer instead of gathers).
bool is_rematerializable_tree(const Value* value, unsigned depth = 0) {
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

// A branch `if (local_id(0) < U)` (or global_id(0) < U, local_id(0) == 0, U > local_id(0), ...)
// with U the same for all work-items: the work-items taking the true edge are exactly those
// with local id 0 below some bound. Reductions and bounds checks look like this.
struct MonotoneCondition {
  bool global = false;     // compares get_global_id(0) rather than get_local_id(0)
  bool is_signed = false;  // the comparison is signed (U is sign-extended)
  bool inclusive = false;  // id <= U: the bound is U + 1
  Value* limit = nullptr;  // U (nullptr with equals_zero)
  bool equals_zero = false;
};

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

// Whether the false edge of a block's branch only leads, without side effects, to a barrier or
// to the end of the kernel: work-items taking it do nothing until the region ends.
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

bool has_barriers(Function& kernel) {
  for (BasicBlock& block : kernel)
    for (Instruction& inst : block)
      if (is_barrier(&inst)) return true;
  return false;
}

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

struct Region {
  unsigned id;
  BasicBlock* start;
  std::vector<BasicBlock*> blocks;  // in discovery order, start first
};

// Per-kernel lowering state.
// What a lowering builds from a kernel: the work-group function (work-items vectorized
// across, barriers as regions) or the item-loop function (one work-item after another, the
// kernel's own vectors kept, barriers dropped: compiler/binary_format.h, KernelExec).
enum class Form { WorkGroup, ItemLoop };

class KernelLowering {
 public:
  KernelLowering(llvm::Module& module, Function& kernel, KernelInfo& info, KernelExec& exec,
                 unsigned sub_group_size, Form form = Form::WorkGroup, std::string entry_name = {})
      : form_(form),
        sub_group_size_(sub_group_size),
        entry_name_(entry_name.empty() ? (kernel.getName() + ".wg").str() : std::move(entry_name)),
        module_(module),
        kernel_(kernel),
        info_(info),
        exec_(exec),
        context_(module.getContext()),
        layout_(module.getDataLayout()),
        i32_(llvm::Type::getInt32Ty(context_)),
        i64_(llvm::Type::getInt64Ty(context_)),
        i8_(llvm::Type::getInt8Ty(context_)),
        ptr_(llvm::PointerType::get(context_, 0)) {}

  bool run(std::string* error);
  // Item-loop form: run several work-items in lockstep where the kernel's vectors fill part of
  // a register of this many bits (compiler/item_lockstep.h); lockstep() after run().
  void run_items_in_lockstep_where_they_fit(unsigned register_bits) {
    lockstep_register_bits_ = register_bits;
  }
  LockstepLoop lockstep() const { return lockstep_; }

 private:
  void insert_implicit_loop_barriers();
  void insert_reconvergence_barriers();
  void split_at_barriers();
  void order_barriers_for_sub_groups();
  void privatize_allocas();
  void spill_cross_barrier_values();
  void form_regions();
  Function* build_work_group_function();
  // Where a region's loops end: the block, the id of the next region (phi over the exits of
  // the last work-item; null when the region never ends) and the possible next regions.
  struct RegionEnd {
    BasicBlock* done;
    llvm::PHINode* next;
    std::vector<unsigned> targets;
  };
  RegionEnd emit_region(Region& region, Function* wg, llvm::ValueToValueMapTy& base_map,
                        BasicBlock* preheader);
  // Sub-group mode: the entry's per-lane state and the loop that runs the sub-groups in turn,
  // each as far as it gets before a work-group barrier (build_work_group_function).
  void emit_sub_group_scheduler(IRBuilder<>& b, Function* wg, llvm::ValueToValueMapTy& base_map,
                                const std::vector<BasicBlock*>& preheaders, BasicBlock* finish);
  Value* active_lanes(unsigned region_id, BasicBlock* preheader);
  Value* resolve_query(IRBuilder<>& b, CallInst* call, Query query);
  Value* resolve_sub_group_query(IRBuilder<>& b, CallInst* call, Query query);
  // Where the region's x loop may stop: the local size, or fewer work-items when the region
  // starts with a monotone condition that idles the rest (computed in the preheader).
  Value* x_loop_bound(const Region& region, llvm::ValueToValueMapTy& map, BasicBlock* preheader,
                      const std::vector<BasicBlock*>& clones);
  Function* placeholder(const char* name, llvm::Type* arg);
  Value* rematerialize_tree_before(Value* original, llvm::BasicBlock::iterator where);
  void drop_barriers();

  const Form form_;
  unsigned lockstep_register_bits_ = 0;
  LockstepLoop lockstep_;
  // Work-items per sub-group: consecutive local linear ids, the last sub-group partial.
  const unsigned sub_group_size_;
  // The kernel has sub-group barriers (sub_group_barrier, the sub-group functions that exchange
  // values). Its work-group function then keeps where each work-item stands (the region it runs
  // next) and runs one sub-group at a time: the sub-group's work-items at its earliest barrier
  // (in program order, loops kept together) run on to the next one, until all reach a
  // work-group barrier or return; then the next sub-group runs. The work-items that arrive
  // together at a barrier are the active ones of the sub-group functions there (what a GPU
  // does at the reconvergence point of divergent code), and a sub-group may wait at a barrier
  // that other sub-groups never reach. Barriers on the back edges of loops holding sub-group
  // barriers keep the work-items of a sub-group in the same iteration.
  bool sub_group_mode_ = false;
  bool uses_exchange_ = false;
  const std::string entry_name_;
  llvm::Module& module_;
  Function& kernel_;
  KernelInfo& info_;
  KernelExec& exec_;
  llvm::LLVMContext& context_;
  const llvm::DataLayout& layout_;
  llvm::Type* i32_;
  llvm::Type* i64_;
  llvm::Type* i8_;
  llvm::PointerType* ptr_;

  std::vector<BasicBlock*> barrier_blocks_;
  BlockSet barrier_set_;
  std::vector<Region> regions_;
  llvm::DenseMap<BasicBlock*, unsigned> region_after_barrier_;
  // Sub-group mode: whether a region starts after a work-group barrier.
  std::vector<bool> after_work_group_barrier_;

  // Spill slots (struct-of-arrays) and private memory (array-of-structs) per work-item.
  std::vector<uint64_t> slot_sizes_;
  uint64_t slot_bytes_ = 0;
  uint64_t private_bytes_ = 0;
  // Uniform values live across barriers: one slot per group (an alloca of the work-group
  // function, promoted to registers by SROA).
  std::vector<llvm::Type*> uniform_types_;

  // Uniform values of the work-group function, set while building it.
  struct Uniforms {
    Value* group_id[3];
    Value* local_size[3];
    Value* enqueued[3];
    Value* num_groups[3];
    Value* global_size[3];
    Value* global_offset[3];
    Value* work_dim;
    Value* scratch;
    Value* local_memory;
    Value* collective_scratch;
    Value* private_base;
    Value* exchange;         // sub-group exchange slots: 128 bytes per work-item
    Value* lane_state;       // sub-group mode: i32 per work-item, the region it runs next
    Value* items;            // work-items of this group
    Value* sub_group_begin;  // sub-group mode: the running sub-group's first linear id
    Value* sub_group_end;    // and one past its last
    std::vector<Value*> slot_base;
    std::vector<llvm::AllocaInst*> uniform_slots;
  } uniforms_{};
  // Loop state of the region being emitted.
  Value* local_id_[3] = {nullptr, nullptr, nullptr};
  Value* local_linear_ = nullptr;
  // Sub-group mode: the active lanes of the region being emitted, computed on first use.
  Value* region_active_ = nullptr;
  unsigned region_id_ = 0;
  BasicBlock* region_preheader_ = nullptr;
};

// Lane states of sub-group mode (Uniforms::lane_state): the region a work-item runs next, with
// this bit while it waits at a work-group barrier; kExit once it returned.
constexpr uint32_t kWaitsForGroup = 0x80000000u;
// Bytes of a work-item's sub-group exchange slot: the widest OpenCL C type (double16).
constexpr uint64_t kExchangeBytes = 128;

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

// The item-loop form runs a group's work-items one after another: only right for groups of
// one work-item or kernels without barriers, where a barrier has nothing to wait for.
void KernelLowering::drop_barriers() {
  for (BasicBlock& block : kernel_)
    for (Instruction& inst : llvm::make_early_inc_range(block))
      if (is_barrier(&inst)) inst.eraseFromParent();
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
  const std::string tag = "r" + std::to_string(region.id);
  llvm::LLVMContext& c = context_;
  // Work-group form: z, y and x loops over the group. Sub-group mode: one loop over the running
  // sub-group's work-items (the "x" blocks), entering the region's code for those that stand
  // at this region; z_header and y_header are then unused.
  BasicBlock* z_header = BasicBlock::Create(c, tag + ".z", wg);
  BasicBlock* y_header = BasicBlock::Create(c, tag + ".y", wg);
  BasicBlock* x_header = BasicBlock::Create(c, tag + ".x", wg);
  BasicBlock* x_latch = BasicBlock::Create(c, tag + ".x.latch", wg);
  BasicBlock* y_latch = BasicBlock::Create(c, tag + ".y.latch", wg);
  BasicBlock* z_latch = BasicBlock::Create(c, tag + ".z.latch", wg);
  BasicBlock* done = BasicBlock::Create(c, tag + ".done", wg);
  region_active_ = nullptr;
  region_id_ = region.id;
  region_preheader_ = preheader;

  IRBuilder<> b(preheader);
  llvm::PHINode *x = nullptr, *y = nullptr, *z = nullptr;
  BasicBlock* lane_latch = nullptr;
  if (sub_group_mode_) {
    const Uniforms& u = uniforms_;
    BasicBlock* lane_header = z_header;
    lane_latch = y_latch;
    b.CreateBr(lane_header);
    b.SetInsertPoint(lane_header);
    llvm::PHINode* lane = b.CreatePHI(i64_, 2, "lane");
    lane->addIncoming(u.sub_group_begin, preheader);
    Value* state = b.CreateLoad(i32_, b.CreateGEP(i32_, u.lane_state, lane), "lane.state");
    b.CreateCondBr(b.CreateICmpEQ(state, llvm::ConstantInt::get(i32_, region.id)), x_header,
                   lane_latch);
    b.SetInsertPoint(x_header);
    // The local id of a linear one: the sizes are the group's own (the last group of a
    // non-uniform NDRange is smaller), as get_local_linear_id counts.
    Value* row = b.CreateUDiv(lane, u.local_size[0]);
    local_id_[0] = b.CreateSub(lane, b.CreateMul(row, u.local_size[0]), "lx");
    local_id_[2] = b.CreateUDiv(row, u.local_size[1], "lz");
    local_id_[1] = b.CreateSub(row, b.CreateMul(local_id_[2], u.local_size[1]), "ly");
    local_linear_ = lane;
    x = lane;
  } else {
    b.CreateBr(z_header);
    b.SetInsertPoint(z_header);
    z = b.CreatePHI(i64_, 2, "lz");
    z->addIncoming(llvm::ConstantInt::get(i64_, 0), preheader);
    b.CreateBr(y_header);
    b.SetInsertPoint(y_header);
    y = b.CreatePHI(i64_, 2, "ly");
    y->addIncoming(llvm::ConstantInt::get(i64_, 0), z_header);
    b.CreateBr(x_header);
    b.SetInsertPoint(x_header);
    x = b.CreatePHI(i64_, 2, "lx");
    x->addIncoming(llvm::ConstantInt::get(i64_, 0), y_header);
    local_id_[0] = x;
    local_id_[1] = y;
    local_id_[2] = z;
    local_linear_ = b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(z, uniforms_.local_size[1]), y),
                                            uniforms_.local_size[0]),
                                x, "llinear");
  }

  // Clone the region's blocks. Barrier blocks it reaches become exits to the x latch.
  llvm::ValueToValueMapTy map;
  for (auto it = base_map.begin(); it != base_map.end(); ++it) map[it->first] = it->second;
  BlockSet members(region.blocks.begin(), region.blocks.end());
  std::vector<BasicBlock*> clones;
  for (BasicBlock* block : region.blocks) {
    BasicBlock* clone = llvm::CloneBasicBlock(block, map, "." + tag, wg);
    map[block] = clone;
    clones.push_back(clone);
  }
  llvm::PHINode* next = llvm::PHINode::Create(i32_, 4, tag + ".next");
  next->insertInto(x_latch, x_latch->end());
  std::vector<unsigned> targets;
  auto add_exit = [&](unsigned target, BasicBlock* from) {
    uint32_t state = target;
    if (sub_group_mode_ && target != kExit && after_work_group_barrier_[target])
      state |= kWaitsForGroup;
    next->addIncoming(llvm::ConstantInt::get(i32_, state), from);
    if (std::find(targets.begin(), targets.end(), target) == targets.end())
      targets.push_back(target);
  };
  for (BasicBlock* block : region.blocks) {
    for (BasicBlock* s : llvm::successors(block)) {
      if (!barrier_set_.contains(s) || map.count(s)) continue;
      BasicBlock* exit = BasicBlock::Create(c, tag + ".to.barrier", wg);
      llvm::BranchInst::Create(x_latch, exit);
      add_exit(region_after_barrier_[s], exit);
      map[s] = exit;
    }
  }
  // Phis keep only the edges that exist inside this region.
  for (BasicBlock* clone : clones) {
    for (llvm::PHINode& phi : llvm::make_early_inc_range(clone->phis())) {
      for (unsigned i = phi.getNumIncomingValues(); i-- > 0;)
        if (!members.contains(phi.getIncomingBlock(i))) phi.removeIncomingValue(i, false);
    }
  }
  llvm::remapInstructionsInBlocks(clones, map);
  b.SetInsertPoint(x_header);
  b.CreateBr(llvm::cast<BasicBlock>(map[region.start]));

  // Returns end the work-item; resolve work-item queries against the loop state.
  llvm::MDNode* access_group = llvm::MDNode::getDistinct(c, {});
  bool all_parallel = true;
  for (BasicBlock* clone : clones) {
    if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(clone->getTerminator())) {
      ret->eraseFromParent();
      llvm::BranchInst::Create(x_latch, clone);
      add_exit(kExit, clone);
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
        alloca->moveBefore(wg->getEntryBlock().getFirstInsertionPt());
        all_parallel = false;
        continue;
      }
      if (form_ == Form::WorkGroup && inst.mayReadOrWriteMemory())
        inst.setMetadata(llvm::LLVMContext::MD_access_group, access_group);
    }
  }
  // Reloads of uniform slots read the value an earlier pass stored: load once, before the
  // work-item loops (the stores of this pass must not be seen by later work-items).
  const llvm::SmallPtrSet<Value*, 8> uniform_slots(uniforms_.uniform_slots.begin(),
                                                   uniforms_.uniform_slots.end());
  std::vector<llvm::StoreInst*> uniform_stores;
  for (BasicBlock* clone : clones)
    for (Instruction& inst : llvm::make_early_inc_range(*clone)) {
      if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst);
          load && uniform_slots.contains(load->getPointerOperand()))
        load->moveBefore(preheader->getTerminator()->getIterator());
      if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst);
          store && uniform_slots.contains(store->getPointerOperand()))
        uniform_stores.push_back(store);
    }
  if (sub_group_mode_) {
    // Each work-item records where it stopped; the region ends with the sub-group's last one.
    if (next->getNumIncomingValues() == 0) {
      next->eraseFromParent();
      next = nullptr;
      new llvm::UnreachableInst(c, x_latch);
    } else {
      b.SetInsertPoint(x_latch);
      b.CreateStore(next, b.CreateGEP(i32_, uniforms_.lane_state, x));
      b.CreateBr(lane_latch);
    }
    b.SetInsertPoint(lane_latch);
    Value* lane_next = b.CreateAdd(x, llvm::ConstantInt::get(i64_, 1), "lane.next", true, true);
    auto* lane_branch =
        b.CreateCondBr(b.CreateICmpULT(lane_next, uniforms_.sub_group_end), z_header, done);
    llvm::cast<llvm::PHINode>(x)->addIncoming(lane_next, lane_latch);
    llvm::SmallVector<llvm::Metadata*, 3> loop_md = {nullptr};
    loop_md.push_back(llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.mustprogress")}));
    if (all_parallel)
      loop_md.push_back(llvm::MDNode::get(
          c, {llvm::MDString::get(c, "llvm.loop.parallel_accesses"), access_group}));
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(c, loop_md);
    loop_id->replaceOperandWith(0, loop_id);
    lane_branch->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
    y_header->eraseFromParent();
    z_latch->eraseFromParent();
    return {done, nullptr, {}};
  }
  if (next->getNumIncomingValues() == 0) {
    // The region never finishes (an infinite loop, or `unreachable` after a barrier): the
    // latches are unreachable.
    next->eraseFromParent();
    next = nullptr;
    for (BasicBlock* latch : {x_latch, y_latch, z_latch}) new llvm::UnreachableInst(c, latch);
  } else {
    Value* x_end = x_loop_bound(region, map, preheader, clones);
    b.SetInsertPoint(x_latch);
    Value* x_next = b.CreateAdd(x, llvm::ConstantInt::get(i64_, 1), "lx.next", true, true);
    auto* x_branch = b.CreateCondBr(b.CreateICmpULT(x_next, x_end), x_header, y_latch);
    x->addIncoming(x_next, x_latch);
    llvm::SmallVector<llvm::Metadata*, 3> loop_md = {nullptr};
    loop_md.push_back(llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.mustprogress")}));
    if (form_ == Form::WorkGroup) {
      // The x loop runs independent work-items: tell the vectorizer.
      if (all_parallel)
        loop_md.push_back(llvm::MDNode::get(
            c, {llvm::MDString::get(c, "llvm.loop.parallel_accesses"), access_group}));
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

    b.SetInsertPoint(y_latch);
    Value* y_next = b.CreateAdd(y, llvm::ConstantInt::get(i64_, 1), "ly.next", true, true);
    b.CreateCondBr(b.CreateICmpULT(y_next, uniforms_.local_size[1]), y_header, z_latch)
        ->setMetadata(llvm::LLVMContext::MD_loop, outer_loop_id());
    y->addIncoming(y_next, y_latch);
    b.SetInsertPoint(z_latch);
    Value* z_next = b.CreateAdd(z, llvm::ConstantInt::get(i64_, 1), "lz.next", true, true);
    b.CreateCondBr(b.CreateICmpULT(z_next, uniforms_.local_size[2]), z_header, done)
        ->setMetadata(llvm::LLVMContext::MD_loop, outer_loop_id());
    z->addIncoming(z_next, z_latch);
    if (form_ == Form::ItemLoop && lockstep_register_bits_ && uniform_stores.empty())
      lockstep_ = run_items_in_lockstep({wg, x, y_header, x_header, x_latch, y_latch, x_end},
                                        lockstep_register_bits_);
  }
  // Uniform values are stored once, after the work-item loops: a store inside the x loop
  // would make the slot a value carried from work-item to work-item, which the vectorizer
  // rejects. The value stored is the last work-item's, or the slot's previous value where its
  // path did not define it. A pass that does not reach the definition at all must leave the
  // slot alone: a loop counter defined at the top of an outer loop, used in the next outer
  // iteration, is carried through passes of an inner loop that never define it (poison there
  // made CLBlast's gemm kernels read a garbage counter).
  for (llvm::StoreInst* store : uniform_stores) {
    if (next) {
      llvm::SSAUpdater updater;
      Value* value = store->getValueOperand();
      updater.Initialize(value->getType(), value->getName());
      auto* previous = new llvm::LoadInst(value->getType(), store->getPointerOperand(),
                                          value->getName() + ".previous",
                                          preheader->getTerminator()->getIterator());
      updater.AddAvailableValue(x_header, previous);
      updater.AddAvailableValue(store->getParent(), value);
      Value* last = updater.GetValueInMiddleOfBlock(done);
      new llvm::StoreInst(last, store->getPointerOperand(), done);
    }
    store->eraseFromParent();
  }
  // Every work-item stopped at the same barrier (OpenCL requires barriers to be reached
  // uniformly), so the last work-item's `next` decides where the group continues.
  return {done, next, targets};
}

Function* KernelLowering::build_work_group_function() {
  llvm::LLVMContext& c = context_;
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr_, ptr_}, false);
  Function* wg = Function::Create(type, llvm::GlobalValue::ExternalLinkage, entry_name_, module_);
  // The item-loop form keeps the kernel's vector types: the CPU pipeline's scalarizer passes
  // it by (compiler/cpu_pipeline.cpp).
  if (form_ == Form::ItemLoop) wg->addFnAttr(kKeepVectorsAttribute);
  wg->setCallingConv(llvm::CallingConv::C);
  wg->addFnAttr(llvm::Attribute::NoUnwind);
  wg->addFnAttr(llvm::Attribute::NoRecurse);
  wg->addParamAttr(0, llvm::Attribute::NoAlias);
  wg->addParamAttr(0, llvm::Attribute::ReadOnly);
  wg->addParamAttr(1, llvm::Attribute::NoAlias);
  wg->addParamAttr(1, llvm::Attribute::ReadOnly);
  Value* args = wg->getArg(0);
  Value* ctx = wg->getArg(1);
  args->setName("args");
  ctx->setName("ctx");

  BasicBlock* entry = BasicBlock::Create(c, "entry", wg);
  IRBuilder<> b(entry);
  llvm::MDNode* invariant = llvm::MDNode::get(c, {});
  auto load_word = [&](unsigned index, llvm::Type* type, const char* name) {
    Value* address = b.CreateConstInBoundsGEP1_64(i64_, ctx, index);
    llvm::LoadInst* load = b.CreateLoad(type, address, name);
    load->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant);
    return load;
  };
  Uniforms& u = uniforms_;
  for (unsigned d = 0; d < 3; ++d) {
    using namespace context_word;
    u.group_id[d] = load_word(kGroupId + d, i64_, "group.id");
    u.local_size[d] = load_word(kLocalSize + d, i64_, "local.size");
    u.enqueued[d] = load_word(kEnqueuedLocalSize + d, i64_, "enqueued.size");
    u.num_groups[d] = load_word(kNumGroups + d, i64_, "num.groups");
    u.global_size[d] = load_word(kGlobalSize + d, i64_, "global.size");
    u.global_offset[d] = load_word(kGlobalOffset + d, i64_, "global.offset");
  }
  u.work_dim = load_word(context_word::kWorkDim, i64_, "work.dim");
  u.scratch = load_word(context_word::kScratch, ptr_, "scratch");
  u.local_memory = load_word(context_word::kLocalMemory, ptr_, "local.memory");
  u.collective_scratch = load_word(context_word::kCollectiveScratch, ptr_, "collective.scratch");
  Value* items = b.CreateMul(b.CreateMul(u.enqueued[0], u.enqueued[1]), u.enqueued[2], "items");
  // The slot arrays lie one after another, each 64-byte aligned, with a cache line between
  // arrays of small elements: arrays a multiple of 4 KiB apart (items * 64 bytes each, as the
  // reservation is counted) make the loads of one slot wait for the stores to another (4K
  // aliasing), which slowed loops carrying many values per work-item about eightfold. The
  // per-work-item reservation (align_to(size, 64) per slot) holds the lines for groups of 4 or
  // more work-items; smaller groups get none.
  auto constant = [&](uint64_t v) { return llvm::ConstantInt::get(i64_, v); };
  Value* line_gap =
      b.CreateSelect(b.CreateICmpUGE(items, constant(4)), constant(64), constant(0), "line.gap");
  u.items =
      b.CreateMul(b.CreateMul(u.local_size[0], u.local_size[1]), u.local_size[2], "group.items");
  // The sub-group exchange slots come first: the scratch is 128-byte aligned, as a double16 is.
  u.exchange = u.scratch;
  Value* exchange_bytes = b.CreateMul(items, constant(uses_exchange_ ? kExchangeBytes : 0));
  Value* next = exchange_bytes;
  for (uint64_t size : slot_sizes_) {
    u.slot_base.push_back(b.CreateGEP(i8_, u.scratch, next));
    Value* bytes = b.CreateAnd(b.CreateAdd(b.CreateMul(items, constant(size)), constant(63)),
                               constant(~uint64_t{63}));
    next = b.CreateAdd(next, size <= 32 ? b.CreateAdd(bytes, line_gap) : bytes);
  }
  u.private_base = b.CreateGEP(
      i8_, u.scratch,
      b.CreateAdd(exchange_bytes, b.CreateMul(items, llvm::ConstantInt::get(i64_, slot_bytes_))),
      "private.base");
  u.lane_state =
      b.CreateGEP(i8_, u.private_base,
                  b.CreateMul(items, llvm::ConstantInt::get(i64_, private_bytes_)), "lane.state");
  for (llvm::Type* type : uniform_types_)
    u.uniform_slots.push_back(b.CreateAlloca(type, nullptr, "uniform.slot"));

  // Kernel arguments: args[i] points at the argument's bytes.
  llvm::ValueToValueMapTy base_map;
  for (llvm::Argument& arg : kernel_.args()) {
    Value* slot = b.CreateConstInBoundsGEP1_64(ptr_, args, arg.getArgNo());
    Value* bytes = b.CreateLoad(ptr_, slot, "arg.bytes");
    Value* value;
    if (arg.hasByValAttr()) {
      // The work-items only read it (clang copies byval arguments before writing them).
      value = bytes;
    } else if (auto* pointer = llvm::dyn_cast<llvm::PointerType>(arg.getType())) {
      value = b.CreateLoad(ptr_, bytes, arg.getName());
      if (pointer->getAddressSpace() != 0) value = b.CreateAddrSpaceCast(value, pointer);
    } else {
      value = b.CreateAlignedLoad(arg.getType(), bytes, llvm::Align(1), arg.getName());
    }
    base_map[&arg] = value;
  }

  // Static __local variables used by this kernel live in the group's local memory block.
  uint64_t local_bytes = 0;
  for (llvm::GlobalVariable& global : module_.globals()) {
    if (global.getAddressSpace() != 3) continue;
    bool used_here = false;
    for (llvm::User* user : global.users())
      if (auto* inst = llvm::dyn_cast<Instruction>(user))
        used_here |= inst->getFunction() == &kernel_;
    if (!used_here) continue;
    const uint64_t alignment = std::max<uint64_t>(global.getAlign().valueOrOne().value(), 16);
    const uint64_t offset = align_to(local_bytes, alignment);
    local_bytes = offset + layout_.getTypeAllocSize(global.getValueType());
    Value* address = b.CreateGEP(i8_, u.local_memory, llvm::ConstantInt::get(i64_, offset));
    base_map[&global] = b.CreateAddrSpaceCast(address, global.getType(), global.getName());
  }
  exec_.static_local_size = align_to(local_bytes, 128);

  std::vector<BasicBlock*> preheaders;
  for (Region& region : regions_)
    preheaders.push_back(BasicBlock::Create(c, "region" + std::to_string(region.id), wg));
  BasicBlock* finish = BasicBlock::Create(c, "finish", wg);
  llvm::ReturnInst::Create(c, finish);
  if (sub_group_mode_) {
    emit_sub_group_scheduler(b, wg, base_map, preheaders, finish);
    return wg;
  }
  b.CreateBr(preheaders[0]);

  for (Region& region : regions_) {
    RegionEnd end = emit_region(region, wg, base_map, preheaders[region.id]);
    IRBuilder<> at(end.done);
    auto target_block = [&](unsigned target) {
      return target == kExit ? finish : preheaders[target];
    };
    if (!end.next) {
      at.CreateUnreachable();
    } else if (end.targets.size() == 1) {
      at.CreateBr(target_block(end.targets[0]));
    } else {
      llvm::SwitchInst* choose = at.CreateSwitch(end.next, finish, end.targets.size());
      for (unsigned target : end.targets)
        if (target != kExit)
          choose->addCase(llvm::ConstantInt::get(llvm::cast<llvm::IntegerType>(i32_), target),
                          preheaders[target]);
    }
  }
  return wg;
}

void KernelLowering::emit_sub_group_scheduler(IRBuilder<>& b, Function* wg,
                                              llvm::ValueToValueMapTy& base_map,
                                              const std::vector<BasicBlock*>& preheaders,
                                              BasicBlock* finish) {
  llvm::LLVMContext& c = context_;
  Uniforms& u = uniforms_;
  auto constant = [&](uint64_t v) { return llvm::ConstantInt::get(i64_, v); };
  auto state_constant = [&](uint32_t v) { return llvm::ConstantInt::get(i32_, v); };
  auto state_of = [&](Value* lane) { return b.CreateGEP(i32_, u.lane_state, lane); };
  Value* width = constant(sub_group_size_);
  Value* sub_groups =
      b.CreateUDiv(b.CreateAdd(u.items, constant(sub_group_size_ - 1)), width, "sub.groups");

  // Every work-item starts at region 0.
  BasicBlock* entry = b.GetInsertBlock();
  BasicBlock* init = BasicBlock::Create(c, "lanes.init", wg);
  BasicBlock* round = BasicBlock::Create(c, "round", wg);
  b.CreateBr(init);
  b.SetInsertPoint(init);
  llvm::PHINode* init_lane = b.CreatePHI(i64_, 2, "init.lane");
  init_lane->addIncoming(constant(0), entry);
  b.CreateStore(state_constant(0), state_of(init_lane));
  Value* init_next = b.CreateAdd(init_lane, constant(1));
  init_lane->addIncoming(init_next, init);
  b.CreateCondBr(b.CreateICmpULT(init_next, u.items), init, round);

  // A round runs each sub-group in turn until all its work-items wait at a work-group barrier
  // or returned.
  BasicBlock* sub_group = BasicBlock::Create(c, "sub.group", wg);
  BasicBlock* pick = BasicBlock::Create(c, "pick", wg);
  BasicBlock* dispatch = BasicBlock::Create(c, "dispatch", wg);
  BasicBlock* no_region = BasicBlock::Create(c, "no.region", wg);
  BasicBlock* sub_group_latch = BasicBlock::Create(c, "sub.group.latch", wg);
  BasicBlock* release = BasicBlock::Create(c, "release", wg);
  BasicBlock* round_end = BasicBlock::Create(c, "round.end", wg);
  b.SetInsertPoint(round);
  b.CreateBr(sub_group);
  b.SetInsertPoint(sub_group);
  llvm::PHINode* index = b.CreatePHI(i64_, 2, "sub.group.id");
  index->addIncoming(constant(0), round);
  u.sub_group_begin = b.CreateMul(index, width, "sub.group.begin");
  u.sub_group_end =
      b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b.CreateAdd(u.sub_group_begin, width), u.items,
                              nullptr, "sub.group.end");
  b.CreateBr(pick);

  // The region the sub-group runs next: the earliest any of its work-items stands at.
  b.SetInsertPoint(pick);
  Value* count = b.CreateSub(u.sub_group_end, u.sub_group_begin);
  Value* last = b.CreateSub(u.sub_group_end, constant(1));
  Value* earliest = state_constant(kExit);
  for (unsigned lane = 0; lane < sub_group_size_; ++lane) {
    Value* at = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin,
                                        b.CreateAdd(u.sub_group_begin, constant(lane)), last);
    Value* state = b.CreateLoad(i32_, state_of(at));
    state = b.CreateSelect(b.CreateICmpULT(constant(lane), count), state, state_constant(kExit));
    earliest = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, earliest, state);
  }
  b.CreateCondBr(b.CreateICmpULT(earliest, state_constant(kWaitsForGroup)), dispatch,
                 sub_group_latch);
  b.SetInsertPoint(dispatch);
  llvm::SwitchInst* choose = b.CreateSwitch(earliest, no_region, preheaders.size());
  for (const Region& region : regions_)
    choose->addCase(llvm::cast<llvm::ConstantInt>(state_constant(region.id)),
                    preheaders[region.id]);
  new llvm::UnreachableInst(c, no_region);

  for (Region& region : regions_) {
    RegionEnd end = emit_region(region, wg, base_map, preheaders[region.id]);
    llvm::BranchInst::Create(pick, end.done);
  }

  b.SetInsertPoint(sub_group_latch);
  Value* index_next = b.CreateAdd(index, constant(1));
  index->addIncoming(index_next, sub_group_latch);
  b.CreateCondBr(b.CreateICmpULT(index_next, sub_groups), sub_group, release);

  // Every work-item now waits at the same work-group barrier, or returned: all go on past it.
  b.SetInsertPoint(release);
  llvm::PHINode* lane = b.CreatePHI(i64_, 2, "release.lane");
  lane->addIncoming(constant(0), sub_group_latch);
  llvm::PHINode* all_returned = b.CreatePHI(b.getInt1Ty(), 2, "all.returned");
  all_returned->addIncoming(b.getTrue(), sub_group_latch);
  Value* state = b.CreateLoad(i32_, state_of(lane));
  Value* returned = b.CreateICmpEQ(state, state_constant(kExit));
  b.CreateStore(
      b.CreateSelect(returned, state, b.CreateAnd(state, state_constant(~kWaitsForGroup))),
      state_of(lane));
  Value* all_returned_next = b.CreateAnd(all_returned, returned);
  Value* lane_next = b.CreateAdd(lane, constant(1));
  lane->addIncoming(lane_next, release);
  all_returned->addIncoming(all_returned_next, release);
  b.CreateCondBr(b.CreateICmpULT(lane_next, u.items), release, round_end);
  b.SetInsertPoint(round_end);
  b.CreateCondBr(all_returned_next, finish, round);
}

bool KernelLowering::run(std::string* error) {
  for (BasicBlock& block : kernel_) {
    for (Instruction& inst : block) {
      if (auto* call = llvm::dyn_cast<CallInst>(&inst);
          call && call->getCalledFunction() &&
          call->getCalledFunction()->getName() == "__manifold_printf")
        exec_.uses_printf = true;
    }
  }
  // Constant expressions over __local variables must become instructions so each kernel can
  // map the variable to its own local memory block.
  std::vector<llvm::Constant*> locals;
  for (llvm::GlobalVariable& global : module_.globals())
    if (global.getAddressSpace() == 3) locals.push_back(&global);
  if (!locals.empty()) llvm::convertUsersOfConstantsToInstructions(locals, &kernel_);

  bool has_sub_group_barriers = false;
  for (BasicBlock& block : kernel_)
    for (Instruction& inst : block) {
      has_sub_group_barriers |= is_sub_group_barrier(&inst);
      uses_exchange_ |= query_of(&inst) == Query::SubGroupExchange;
    }
  if (form_ == Form::ItemLoop) {
    drop_barriers();
    form_regions();
    build_work_group_function();
    exec_.item_loop_symbol = entry_name_;
    return true;
  }
  sub_group_mode_ = has_sub_group_barriers;
  if (sub_group_mode_) {
    insert_reconvergence_barriers();
  } else {
    insert_implicit_loop_barriers();
  }
  split_at_barriers();
  if (sub_group_mode_) order_barriers_for_sub_groups();
  exec_.has_barriers = !barrier_blocks_.empty();
  uint64_t private_estimate = 0;
  if (exec_.has_barriers) {
    privatize_allocas();
    spill_cross_barrier_values();
    private_estimate = private_bytes_ + slot_bytes_;
  } else {
    for (BasicBlock& block : kernel_)
      for (Instruction& inst : block)
        if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst))
          private_estimate += alloca->getAllocationSize(layout_)
                                  .value_or(llvm::TypeSize::getFixed(0))
                                  .getFixedValue();
  }
  form_regions();
  build_work_group_function();
  exec_.entry_symbol = entry_name_;
  exec_.scratch_bytes_per_item = slot_bytes_ + private_bytes_ +
                                 (uses_exchange_ ? kExchangeBytes : 0) +
                                 (sub_group_mode_ ? sizeof(uint32_t) : 0);
  info_.local_mem_size = exec_.static_local_size;
  info_.private_mem_size = private_estimate;
  (void)error;
  return true;
}

}  // namespace

bool form_work_group_functions(llvm::Module& module, std::vector<KernelInfo>& kernels,
                               std::vector<KernelExec>& execs, unsigned vector_register_bits,
                               unsigned widest_register_bits, unsigned sub_group_size,
                               std::string* error) {
  execs.assign(kernels.size(), KernelExec{});
  for (size_t i = 0; i < kernels.size(); ++i) {
    Function* kernel = module.getFunction(kernels[i].name);
    if (!kernel || kernel->isDeclaration()) {
      if (error) *error = "internal error: kernel " + kernels[i].name + " has no body";
      return false;
    }
    // The item-loop form starts from a copy of the kernel as written: the work-group form's
    // lowering rewrites the kernel itself.
    llvm::ValueToValueMapTy copy_map;
    Function* copy = llvm::CloneFunction(kernel, copy_map);
    const bool barriers = has_barriers(*kernel);
    execs[i].item_loop_fits_any_group = !barriers;
    execs[i].item_loop_preferred = !barriers && prefers_item_loop(*kernel, vector_register_bits);
    execs[i].partition_independent = independent_of_partition(*kernel, kernels[i]);
    KernelLowering lowering(module, *kernel, kernels[i], execs[i], sub_group_size);
    if (!lowering.run(error)) return false;
    KernelInfo unused_info = kernels[i];
    KernelLowering item_loop(module, *copy, unused_info, execs[i], sub_group_size, Form::ItemLoop,
                             kernels[i].name + ".items");
    // Work-items in lockstep fill the registers as well as the work-group form's vectorization
    // across work-items does, without its per-work-item arrays: where the lockstep loop
    // applies, the item loop is the faster form for groups that fill it (CpuExecutable::run),
    // unless its loops are single chains, whose latency the work-group form hides better.
    if (!barriers) item_loop.run_items_in_lockstep_where_they_fit(widest_register_bits);
    if (!item_loop.run(error)) return false;
    if (const LockstepLoop lockstep = item_loop.lockstep();
        !lockstep.latency_bound || execs[i].item_loop_preferred)
      execs[i].item_loop_lockstep_items = lockstep.items;
    copy->replaceAllUsesWith(llvm::PoisonValue::get(copy->getType()));
    copy->eraseFromParent();
  }
  // The kernels themselves are no longer called by anyone: the work-group functions replaced
  // them. Drop them, then everything only they used.
  for (const KernelInfo& info : kernels) {
    if (Function* kernel = module.getFunction(info.name)) {
      kernel->replaceAllUsesWith(llvm::PoisonValue::get(kernel->getType()));
      kernel->eraseFromParent();
    }
  }
  for (llvm::GlobalVariable& global : llvm::make_early_inc_range(module.globals())) {
    global.removeDeadConstantUsers();
    if (global.getAddressSpace() == 3 && global.use_empty()) global.eraseFromParent();
  }
  for (Function& function : llvm::make_early_inc_range(module)) {
    if (function.getName() == kSlotFunction || function.getName() == kPrivateFunction ||
        function.getName() == kUniformFunction || function.getName() == kImplicitBarrier) {
      if (function.use_empty()) function.eraseFromParent();
      continue;
    }
    // Work-group functions run on one thread: convergence no longer constrains anything, and
    // the attribute blocks transformations such as vectorization across work-items.
    function.removeFnAttr(llvm::Attribute::Convergent);
    for (BasicBlock& block : function)
      for (Instruction& inst : block)
        if (auto* call = llvm::dyn_cast<llvm::CallBase>(&inst))
          call->removeFnAttr(llvm::Attribute::Convergent);
  }
  // Leftover work-item queries or barriers mean a function was not inlined into a kernel.
  for (Function& function : module) {
    if (!function.isDeclaration() || function.use_empty()) continue;
    if (query_of(&function) || function.getName() == "_Z7barrierj" ||
        function.getName().starts_with("_Z18work_group_barrier")) {
      if (error)
        *error = "internal error: " + function.getName().str() +
                 " is used outside a kernel after inlining";
      return false;
    }
  }
  std::string verifier_output;
  llvm::raw_string_ostream verifier_stream(verifier_output);
  if (llvm::verifyModule(module, &verifier_stream)) {
    if (error) *error = "internal error: work-group pass produced invalid IR:\n" + verifier_output;
    return false;
  }
  return true;
}

void mark_step_loops_for_unrolling(llvm::Module& module, const std::vector<KernelInfo>& kernels) {
  // Instructions an unrolled body may reach: enough work per spill and reload that the loop
  // runs at the speed of its arithmetic, few enough to keep compile time and code small.
  constexpr size_t kUnrolledBodyBudget = 96;
  constexpr size_t kMaxUnrollCount = 8;
  constexpr unsigned kMaxRotatedHeader = 16;  // instructions copied ahead of the loop
  const llvm::TargetTransformInfo costs(module.getDataLayout());
  for (const KernelInfo& info : kernels) {
    Function* kernel = module.getFunction(info.name);
    if (!kernel || kernel->isDeclaration()) continue;
    const Divergence divergence(*kernel);
    llvm::DominatorTree dominators(*kernel);
    llvm::LoopInfo loops(dominators);
    llvm::TargetLibraryInfoImpl library_info_impl(module.getTargetTriple());
    llvm::TargetLibraryInfo library_info(library_info_impl);
    llvm::AssumptionCache assumptions(*kernel);
    llvm::ScalarEvolution evolution(*kernel, library_info, assumptions, dominators, loops);
    for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
      if (!runs_in_step(*loop, divergence) || loop->getLoopID()) continue;
      // A loop of a constant trip count that reaches memory is LLVM's unroller's to judge: a
      // forced partial unroll there let the full unroller expand whole 256-iteration loops of
      // local-memory accesses later (pyopencl's scan kernels). Arithmetic loops keep the unroll.
      const bool reaches_memory =
          std::any_of(loop->block_begin(), loop->block_end(), [](const BasicBlock* block) {
            return std::any_of(block->begin(), block->end(),
                               [](const Instruction& inst) { return inst.mayReadOrWriteMemory(); });
          });
      const unsigned constant_trip_count = evolution.getSmallConstantTripCount(loop);
      if (reaches_memory && constant_trip_count != 0) continue;
      size_t body = 0;
      for (BasicBlock* block : loop->blocks())
        for (Instruction& inst : *block)
          if (!llvm::isa<llvm::PHINode>(inst) && !inst.isTerminator() &&
              !inst.isDebugOrPseudoInst())
            ++body;
      const size_t count = std::bit_floor(
          std::min(kMaxUnrollCount, kUnrolledBodyBudget / std::max<size_t>(body, 1)));
      if (count < 2) continue;
      llvm::addStringMetadataToLoop(loop, "llvm.loop.unroll.count", count);
      // A trip count known only at run time: tested at the bottom, the loop unrolls with its
      // remainder in an epilogue; tested at the top (as the frontend leaves a `for` loop), every
      // unrolled copy would keep its own exit test, a compare and branch per iteration next to
      // the arithmetic. (A constant trip count tells the unroller which copies can exit.)
      if (constant_trip_count != 0) continue;
      llvm::simplifyLoop(loop, &dominators, &loops, &evolution, &assumptions, nullptr,
                         /*PreserveLCSSA=*/false);
      llvm::formLCSSA(*loop, dominators, &loops, &evolution);
      llvm::LoopRotation(loop, &loops, &costs, &assumptions, &dominators, &evolution, nullptr,
                         llvm::SimplifyQuery(module.getDataLayout(), &dominators, &assumptions),
                         /*RotationOnly=*/true, kMaxRotatedHeader, /*IsUtilMode=*/true);
    }
  }
}

}  // namespace manifold::compiler
