// The driver of the lockstep item loop (compiler/item_lockstep.h): analysis, then the rewrite.
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>

#include <string>

#include "compiler/item_lockstep/lockstep.h"

namespace manifold::compiler {
namespace lockstep {

Lockstep::Lockstep(const ItemLoop& loop, unsigned register_bits)
    : loop_(loop),
      register_bits_(register_bits),
      // AVX-512's 32 registers hold two registers' worth of every value of most kernels: the
      // core then has two independent operations wherever the kernel has one (a hash's
      // rounds are one serial chain per work-item). AVX2's 16 registers would spill.
      registers_(register_bits >= 512 ? 2 : 1),
      context_(loop.function->getContext()) {}

LockstepLoop Lockstep::run() {
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

}  // namespace lockstep

LockstepLoop run_items_in_lockstep(const ItemLoop& loop, unsigned register_bits) {
  if (register_bits < 256) return {};
  return lockstep::Lockstep(loop, register_bits).run();
}

}  // namespace manifold::compiler
