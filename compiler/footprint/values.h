// Integer values of a kernel as exact polynomials (compiler/footprint/expr.h): work-item
// functions, integer kernel arguments (or bytes of struct and vector arguments), constants, and
// loop induction variables with provable bounds, through arithmetic that cannot wrap or whose
// wrapping a range check rules out.
#pragma once

#include <llvm/ADT/DenseMap.h>

#include <optional>
#include <vector>

#include "compiler/footprint/expr.h"

namespace llvm {
class BasicBlock;
class DataLayout;
class DominatorTree;
class Function;
class Instruction;
class LoopInfo;
class Value;
}  // namespace llvm

namespace manifold::compiler::footprint {

class Values {
 public:
  Values(const llvm::Function& kernel, const llvm::DominatorTree& dominators,
         const llvm::LoopInfo& loops, std::vector<BoundedVariable>* bounded);

  // `value` (an integer) read as signed or unsigned; nullopt: not provably such a polynomial.
  std::optional<Expr> of(const llvm::Value* value, bool is_signed);
  // A new bounded variable ranging over [0, count - 1] (the bytes of a memcpy of `count`).
  std::optional<Expr> counter(const Expr& count);
  // Whether `at` lies where every guard of `e` holds.
  bool guarded(const Expr& e, const llvm::Instruction* at) const;

 private:
  struct ArgBytes;
  std::optional<ArgBytes> arg_bytes(const llvm::Value* value, int depth = 0) const;
  std::optional<Expr> compute(const llvm::Value* value, bool is_signed);
  std::optional<Expr> binary(const llvm::Instruction* inst, bool is_signed);
  std::optional<Expr> cast(const llvm::Instruction* inst, bool is_signed);
  std::optional<Expr> call(const llvm::Instruction* inst, bool is_signed);
  std::optional<Expr> induction(const llvm::PHINode* phi, bool is_signed);
  std::optional<Expr> bound(const llvm::PHINode* phi);

  struct Guard {
    const llvm::BasicBlock* from = nullptr;
    const llvm::BasicBlock* to = nullptr;
  };
  struct Induction {
    bool valid = false;
    bool is_signed = false;
    Expr value;  // the bounded symbol with the conditions of its bounds
  };

  const llvm::Function& kernel_;
  const llvm::DataLayout& layout_;
  const llvm::DominatorTree& dominators_;
  const llvm::LoopInfo& loops_;
  std::vector<BoundedVariable>* bounded_;
  bool uniform_groups_ = false;
  int depth_ = 0;
  llvm::DenseMap<const llvm::PHINode*, Guard> guards_;
  llvm::DenseMap<const llvm::PHINode*, Induction> inductions_;  // invalid while in progress
  llvm::DenseMap<std::pair<const llvm::Value*, unsigned>, std::optional<Expr>> memo_;
};

}  // namespace manifold::compiler::footprint
