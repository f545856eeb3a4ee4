// Internals of the lockstep item loop (compiler/item_lockstep.h), shared by its files:
//   analysis.cpp       whether the body runs in lockstep: its blocks, the values that vary
//                      between work-items, consecutive accesses, the joined type and how many
//                      work-items fill the iteration's registers
//   rewrite.cpp        the lockstep loop ahead of the original one: joined vectors, per-item
//                      copies and the values the work-items share
//   item_lockstep.cpp  the driver
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/IRBuilder.h>

#include <utility>
#include <vector>

#include "compiler/item_lockstep.h"

namespace llvm {
class DominatorTree;
class LoopInfo;
class SCEVAddRecExpr;
class ScalarEvolution;
}  // namespace llvm

namespace manifold::compiler::lockstep {

using llvm::BasicBlock;
using llvm::Instruction;
using llvm::IRBuilder;
using llvm::Value;

// A narrower index extended to 64 bits (`in[i]` with `int i = get_global_id(0)`): its values are
// consecutive across the work-items only where the index does not wrap between the first and the
// last work-item, which the lockstep loop checks before it starts.
struct ExtendedIndex {
  const llvm::SCEVAddRecExpr* index;  // {start,+,step} over the x loop
  bool is_signed;
};

class Lockstep {
 public:
  Lockstep(const ItemLoop& loop, unsigned register_bits);

  LockstepLoop run();

 private:
  // How the lockstep loop holds an original value: once for all its work-items, once per
  // work-item, or as one vector of N times the lanes (work-item x + i's at lanes i x lanes_ on).
  enum class Shape { Uniform, PerItem, Wide };
  struct Held {
    Shape shape = Shape::Uniform;
    // Uniform: the value; Wide: the joined vector; PerItem: work-item x + i's value at i.
    llvm::SmallVector<Value*, 8> values;
  };

  // Analysis (analysis.cpp).
  bool collect_body();
  bool find_varying();
  void find_consecutive_accesses(llvm::DominatorTree& dominators, llvm::LoopInfo& loops);
  bool check_no_wrap(llvm::ScalarEvolution& evolution, llvm::ArrayRef<ExtendedIndex> extended);
  unsigned items_per_iteration(llvm::Type* type) const;
  static unsigned lanes(llvm::Type* type);
  bool choose_lanes();
  bool loops_are_latency_bound(const llvm::LoopInfo& loops);
  bool lanes_of(llvm::Type* type) const;
  bool widens(const Instruction& inst) const;

  // Rewriting (rewrite.cpp).
  llvm::FixedVectorType* wide_type(llvm::Type* type) const;
  IRBuilder<> right_after(Value* value);
  Held held(Value* original);
  Value* of_item(Value* original, unsigned i);
  Value* joined(Value* original);
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

}  // namespace manifold::compiler::lockstep
