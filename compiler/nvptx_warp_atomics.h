// Read-modify-writes that a whole warp makes on one address, as one atom of the warp: a pass of
// the NVPTX pipeline (compiler/nvptx_pipeline.cpp).
#pragma once

namespace llvm {
class Module;
}

namespace manifold::compiler {

// The GPU performs the atoms of a warp's lanes on one address one after another, so 32 lanes
// updating one counter, or the bits of one word, pay 32 round trips to the memory's atomic unit.
// Each 32- or 64-bit integer atomicrmw whose operation is associative (add, sub, and, or, xor,
// min, max and exchange) gets a run-time check around it: when all 32 lanes execute it together
// on one address, the lanes combine their operands (a prefix scan over shuffles), lane 0 performs
// one atomicrmw with the total and the same order and scope, and each lane's result is the old
// value combined with the operands of the lanes before it: the lanes' operations in lane order,
// one valid order of atomics that run at once. Ordered operations put a warp barrier (which orders
// the lanes' memory accesses) on each side of lane 0's. Otherwise the atomicrmw runs as written.
// Addresses computed from data the kernel loaded (a histogram's bins) or from the thread index
// with no division (element `id` of an array) keep the plain atomicrmw: they differ between lanes
// almost always, and the check would only add to each operation.
// Run after optimization, before lower_atomic_orderings.
void aggregate_warp_atomics(llvm::Module& module);

}  // namespace manifold::compiler
