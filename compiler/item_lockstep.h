// Several work-items per iteration of the CPU item loop, for kernels whose own vectors or
// scalars are narrower than the iteration's registers: two AVX-512 registers (float16 or uint16
// two work-items at a time, float2 sixteen, float thirty-two) or one AVX2 register (float4 two,
// float2 four, float eight).
#pragma once

namespace llvm {
class BasicBlock;
class Function;
class PHINode;
class Value;
}  // namespace llvm

namespace manifold::compiler {

// The x loop of an item-loop function as compiler/workgroup/emit.cpp builds it: `item` is the local
// x id (a phi in `header`, 0 on entry from `preheader`), `latch` steps it and leaves for `exit`
// after `end` work-items; the body is every block reachable from `header` before `latch`.
struct ItemLoop {
  llvm::Function* function;
  llvm::PHINode* item;
  llvm::BasicBlock* preheader;
  llvm::BasicBlock* header;
  llvm::BasicBlock* latch;
  llvm::BasicBlock* exit;
  llvm::Value* end;
};

// Adds, ahead of the loop, a loop that runs the N work-items x .. x + N - 1 in lockstep, N the
// number of the kernel's vectors (or scalars) that fill the iteration's registers: values the
// work-items share are computed once, the kernel's vectors become vectors holding every
// work-item's lanes, loads and stores of consecutive elements become one access for all of them,
// everything else is computed per work-item. The original loop runs the
// work-items left over. Applies only where every branch of the body is the same for all
// work-items and those vectors carry the work. register_bits: the CPU's widest registers. The
// function then carries kItemLockstepAttribute, its value N.
struct LockstepLoop {
  unsigned items = 0;  // N; 0 where the lockstep loop did not apply
  // The iteration is one register (AVX2), or a loop of the body is one chain of dependent
  // operations from one iteration to the next (fewer than two operations per step of its
  // longest chain): in lockstep the core waits on that chain, while the work-group form
  // interleaves several vectors of work-items.
  bool latency_bound = false;
};
LockstepLoop run_items_in_lockstep(const ItemLoop& loop, unsigned register_bits);

inline constexpr const char* kItemLockstepAttribute = "manifold-item-lockstep";

}  // namespace manifold::compiler
