// Internals of the CPU work-group pass (compiler/workgroup.h), shared by its files, one concern
// per file:
//   queries.cpp              work-item queries and barriers: which call is which, and what a
//                            query becomes in the work-group function
//   divergence.cpp           which values and blocks differ between work-items; the uniform
//                            loops and conditions found with it
//   form_choice.cpp          which form a kernel runs faster in, and whether its results depend
//                            on the division into work-groups
//   step_loops.cpp           unroll counts for uniform loops (run before the pass)
//   barriers.cpp             implicit barriers, splitting at barriers, regions
//   privatize.cpp            per-work-item private memory; values spilled or recomputed across
//                            barriers
//   emit.cpp                 one region's work-item loops
//   work_group_function.cpp  the function around the regions: entry, dispatch between regions,
//                            the sub-group scheduler
//   workgroup.cpp            the driver: each kernel's two forms, then the module's clean-up
#pragma once

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/binary_format.h"
#include "compiler/item_lockstep.h"
#include "compiler/kernel_info.h"

namespace llvm {
class Loop;
}

namespace manifold::compiler::workgroup {

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

// ---- queries.cpp

std::optional<Query> query_of(const Function* callee);
std::optional<Query> query_of(const Instruction* inst);
bool is_work_group_barrier(const Instruction* inst);
bool is_sub_group_barrier(const Instruction* inst);
// Where regions end: work-group and sub-group barriers.
bool is_barrier(const Instruction* inst);
bool has_barriers(Function& kernel);
bool is_rematerializable(const Instruction* inst);

inline uint64_t align_to(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// ---- divergence.cpp

using BlockSet = llvm::SmallPtrSet<BasicBlock*, 32>;

// Blocks reachable from `sources` (included), never entering `avoid`.
BlockSet reachable(llvm::ArrayRef<BasicBlock*> sources, const BasicBlock* avoid);
// Blocks reachable from `sources` (included), never entering a block of `avoid`.
BlockSet reachable_avoiding(llvm::ArrayRef<BasicBlock*> sources, const BlockSet& avoid);

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
  static bool is_source(const Instruction& inst);
  void compute(Function& function);

  llvm::DenseSet<const Value*> values_;
  llvm::DenseSet<const BasicBlock*> influenced_;
};

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
// The monotone condition of a block's terminator, if it is one; with `divergence`, only where
// the bound is uniform.
std::optional<MonotoneCondition> monotone_condition(const Instruction* terminator,
                                                    const Divergence* divergence);
// Whether the false edge of a block's branch only leads, without side effects, to a barrier or
// to the end of the kernel: work-items taking it do nothing until the region ends.
bool false_edge_is_idle(const llvm::BranchInst* branch, const BlockSet& barriers);
bool runs_in_step(const llvm::Loop& loop, const Divergence& divergence);

// ---- form_choice.cpp

bool prefers_item_loop(Function& kernel, unsigned register_bits);
bool independent_of_partition(Function& kernel, const KernelInfo& info);

// ---- privatize.cpp

bool is_rematerializable_tree(const Value* value, unsigned depth = 0);

// ---- the lowering of one kernel (workgroup.cpp runs it; its steps are in the files above)

struct Region {
  unsigned id;
  BasicBlock* start;
  std::vector<BasicBlock*> blocks;  // in discovery order, start first
};

// What a lowering builds from a kernel: the work-group function (work-items vectorized
// across, barriers as regions) or the item-loop function (one work-item after another, the
// kernel's own vectors kept, barriers dropped: compiler/binary_format.h, KernelExec).
enum class Form { WorkGroup, ItemLoop };

// Per-kernel lowering state.
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
  // barriers.cpp
  void drop_barriers();
  void insert_implicit_loop_barriers();
  void insert_reconvergence_barriers();
  void order_barriers_for_sub_groups();
  void split_at_barriers();
  void form_regions();
  // privatize.cpp
  Function* placeholder(const char* name, llvm::Type* arg);
  Value* rematerialize_tree_before(Value* original, llvm::BasicBlock::iterator where);
  void privatize_allocas();
  void spill_cross_barrier_values();
  // work_group_function.cpp
  Function* build_work_group_function();
  // Where a region's loops end: the block, the id of the next region (phi over the exits of
  // the last work-item; null when the region never ends) and the possible next regions.
  struct RegionEnd {
    BasicBlock* done;
    llvm::PHINode* next;
    std::vector<unsigned> targets;
  };
  // Sub-group mode: the entry's per-lane state and the loop that runs the sub-groups in turn,
  // each as far as it gets before a work-group barrier (build_work_group_function).
  void emit_sub_group_scheduler(IRBuilder<>& b, Function* wg, llvm::ValueToValueMapTy& base_map,
                                const std::vector<BasicBlock*>& preheaders, BasicBlock* finish);
  // emit.cpp: emit_region and its steps, which share a RegionCode.
  struct RegionCode;
  RegionEnd emit_region(Region& region, Function* wg, llvm::ValueToValueMapTy& base_map,
                        BasicBlock* preheader);
  void create_region_blocks(RegionCode& r);
  void emit_item_loop_headers(RegionCode& r, IRBuilder<>& b);
  void emit_lane_loop_header(RegionCode& r, IRBuilder<>& b);
  void clone_region_blocks(RegionCode& r, IRBuilder<>& b, llvm::ValueToValueMapTy& base_map);
  void add_region_exit(RegionCode& r, unsigned target, BasicBlock* from);
  void lower_region_body(RegionCode& r);
  void hoist_uniform_reloads(RegionCode& r);
  void close_lane_loop(RegionCode& r, IRBuilder<>& b);
  void close_item_loops(RegionCode& r, IRBuilder<>& b);
  void store_uniforms_after_loops(RegionCode& r);
  // Where the region's x loop may stop: the local size, or fewer work-items when the region
  // starts with a monotone condition that idles the rest (computed in the preheader).
  Value* x_loop_bound(const Region& region, llvm::ValueToValueMapTy& map, BasicBlock* preheader,
                      const std::vector<BasicBlock*>& clones);
  // queries.cpp
  Value* resolve_query(IRBuilder<>& b, CallInst* call, Query query);
  Value* resolve_sub_group_query(IRBuilder<>& b, CallInst* call, Query query);
  Value* active_lanes(unsigned region_id, BasicBlock* preheader);

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

}  // namespace manifold::compiler::workgroup
