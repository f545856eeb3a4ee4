// OpenCL C's memory orders and scopes on NVIDIA GPUs: what clang and LLVM's NVPTX backend leave
// out, put back by two passes of the NVPTX pipeline (compiler/nvptx_pipeline.cpp).
#pragma once

namespace llvm {
class Module;
}

namespace manifold::compiler {

// Clang's NVPTX target drops OpenCL memory scopes: every atomic it emits is system-scoped. The
// builtin library's scoped functions (atomic_*_explicit with a memory_scope,
// atomic_work_item_fence: compiler/builtins/atomics.cl) are called with a constant scope almost
// always; each such call gets a copy of its callee with that scope fixed and its atomics and fences
// narrowed to it (work-group and sub-group: "block", device: "device", work-item: "singlethread").
// Calls with a scope known only at run time keep the system scope, which is stronger than any:
// still correct. The library's calls of __manifold_memory_scope, which keep its scope parameters
// alive until here, go. Run before inlining.
void specialize_atomic_scopes(llvm::Module& module);

// OpenCL C's atomic functions take volatile pointers (C11's prototypes), so every atomic they
// make is volatile, which nothing in OpenCL C asks for: LLVM's NVPTX backend makes volatile atomic
// loads and stores system-scoped, and address-space inference leaves volatile accesses generic.
// The atomics become plain atomics. Run before optimization.
void drop_atomic_volatility(llvm::Module& module);

// LLVM's NVPTX backend drops the memory order of atomicrmw (it prints a relaxed atom) and, for
// GPUs before sm_70, refuses (ends the process on) loads and stores with an order, and drops the
// order of cmpxchg. From sm_70 on, an ordered atomicrmw becomes PTX's ordered atom of its scope
// (seq_cst: a full fence, then an acquire atom), as CUDA's atomics are; before sm_70, and for the
// operations PTX's atom has no ordered form of, those become relaxed operations between fences of
// their scope (PTX's fence-based mapping of release and acquire). Fences of one work-item
// ("singlethread", which the backend also refuses) order nothing on the GPU and go; other
// single-thread atomics get the block scope. `sm`: the target's compute capability times ten (90
// for sm_90).
void lower_atomic_orderings(llvm::Module& module, unsigned sm);

}  // namespace manifold::compiler
