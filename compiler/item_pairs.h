// Two work-items per iteration of the CPU item loop, for kernels whose own vectors fill half a
// SIMD register (float8, uint8 or double4 with AVX-512; float4 with AVX2).
#pragma once

namespace llvm {
class BasicBlock;
class Function;
class PHINode;
class Value;
}  // namespace llvm

namespace manifold::compiler {

// The x loop of an item-loop function as compiler/workgroup.cpp builds it: `item` is the local
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

// Adds, ahead of the loop, a loop that runs work-items x and x + 1 in lockstep: values the
// work-items share are computed once, the kernel's vectors of half a register become one
// register holding both work-items' lanes, everything else is computed per work-item. The
// original loop runs the odd work-item left over. Applies only where every branch of the body
// is the same for all work-items and the half-register vectors carry the work; returns whether
// it did.
// The function then carries kItemPairsAttribute, its value the kernel vectors' lane count.
bool pair_work_items(const ItemLoop& loop, unsigned register_bits);

inline constexpr const char* kItemPairsAttribute = "manifold-item-pairs";

}  // namespace manifold::compiler
