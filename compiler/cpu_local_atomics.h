// Atomics on __local memory on the CPU device, which runs each work-group on one thread.
#pragma once

namespace llvm {
class Module;
}

namespace manifold::compiler {

// __local memory is reachable only by the work-items of its group, and the CPU runs those in turn
// on one thread: an atomic operation on it has no other thread to be atomic against. Atomic
// loads, stores, read-modify-writes and compare-exchanges of `local_address_space` become plain
// ones (a locked instruction costs the core tens of cycles, a histogram in __local memory pays
// it per element). Generic pointers, which may point anywhere, keep their atomics. Run after the
// vectorizers: plain accesses in a work-item loop marked parallel could be vectorized together.
// Returns how many atomics became plain.
unsigned make_local_atomics_plain(llvm::Module& module, unsigned local_address_space);

}  // namespace manifold::compiler
