// The CPU work-group pass: turns each OpenCL kernel (a function run by one work-item) into a
// function that runs a whole work-group on one thread.
//
// Shape of the result, for a kernel with barriers:
//
//   void K.wg(const void* const* args, WorkGroupContext* ctx)
//     region 0:  for z, y, x in local size: <kernel code from entry to the first barriers>
//     region 1:  for z, y, x in local size: <code after barrier 1 up to the next barriers>
//     ...        a small dispatcher picks the next region from where the work-items stopped.
//
// Each region is a "sub-CFG": the blocks reachable from a barrier (or the entry) without
// crossing another barrier. Because barriers are reached by all work-items of a group or by
// none (OpenCL's rule), every work-item of a region ends at the same barrier, so this handles
// barriers at the top level, inside loops and inside work-group-uniform conditionals alike.
// SSA values live across a barrier are spilled to per-work-item arrays (struct-of-arrays, so
// the x loop still vectorizes); private arrays of kernels with barriers get a per-work-item
// copy. The innermost (x) loop is annotated llvm.loop.parallel_accesses: work-items between
// two barriers are independent by the OpenCL memory model.
//
// Kernels with sub-group barriers (sub_group_barrier and the sub-group functions of
// compiler/builtins/subgroups.cl) take a third shape: each work-item keeps the region it runs
// next, and the group runs one sub-group after another, each sub-group's work-items region by
// region as far as they get before a work-group barrier (KernelLowering::sub_group_mode_).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/binary_format.h"

namespace llvm {
class Module;
}

namespace manifold::compiler {

// Shared by the generated code and CpuExecutable::run: every field is 8 bytes, so the IR side
// addresses them as i64 words at the indices below.
struct WorkGroupContext {
  uint64_t group_id[3];
  uint64_t local_size[3];  // of this group: the last group of a non-uniform NDRange is smaller
  uint64_t enqueued_local_size[3];
  uint64_t num_groups[3];
  uint64_t global_size[3];
  uint64_t global_offset[3];
  uint64_t work_dim;
  void* scratch;             // scratch_bytes_per_item * product(enqueued_local_size), 128-aligned
  void* local_memory;        // the kernel's static __local variables, 128-aligned
  void* collective_scratch;  // 8 * (enqueued work-items + 2) bytes for work-group collectives
};

namespace context_word {
constexpr unsigned kGroupId = 0, kLocalSize = 3, kEnqueuedLocalSize = 6, kNumGroups = 9,
                   kGlobalSize = 12, kGlobalOffset = 15, kWorkDim = 18, kScratch = 19,
                   kLocalMemory = 20, kCollectiveScratch = 21;
}

// Builds "<kernel>.wg" for every kernel of a module where all user and library functions were
// already inlined into the kernels. kernels[i] names the kernel of execs[i]; fills execs and the
// memory sizes in kernels. Afterwards the module has no work-item builtins, barriers or
// convergent attributes left. False with *error on an internal problem (reported as a link
// failure, never a crash).
//
// Each kernel also gets "<kernel>.items", the item-loop form (KernelExec::item_loop_symbol),
// marked with kKeepVectorsAttribute. vector_register_bits: the width of the vectors the target
// computes with, for deciding which form a kernel prefers; widest_register_bits: its widest
// registers, which several work-items share in the item loop (compiler/item_lockstep.h) where
// the kernel's vectors fill part of one. sub_group_size: work-items per
// sub-group (consecutive local linear ids), what the sub-group functions see.
bool form_work_group_functions(llvm::Module& module, std::vector<KernelInfo>& kernels,
                               std::vector<KernelExec>& execs, unsigned vector_register_bits,
                               unsigned widest_register_bits, unsigned sub_group_size,
                               std::string* error);

// Marks the loops whose iterations the work-group form runs as regions (uniform innermost
// loops) for unrolling (llvm.loop.unroll.count): each region stores and reloads the values the
// loop carries for every work-item, so a short body such as a chain of multiply-adds is bound
// by those memory operations, not by its arithmetic, unless several iterations share them.
// Run before form_work_group_functions, followed by the loop unroll pass.
void mark_step_loops_for_unrolling(llvm::Module& module, const std::vector<KernelInfo>& kernels);

// Function attribute of the item-loop functions: the pipeline keeps their vector types.
inline constexpr const char* kKeepVectorsAttribute = "manifold-keep-vectors";

}  // namespace manifold::compiler
