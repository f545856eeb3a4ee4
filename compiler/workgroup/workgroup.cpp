// The CPU work-group pass (compiler/workgroup.h): the lowering of one kernel step by step
// (KernelLowering::run), and the driver that builds both forms of every kernel of a module, then
// drops what the kernels alone used.
#include "compiler/workgroup.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ReplaceConstant.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <string>
#include <vector>

#include "compiler/item_lockstep.h"
#include "compiler/kernel_info.h"
#include "compiler/workgroup/passes.h"

namespace manifold::compiler {
namespace workgroup {

bool KernelLowering::run(std::string* error) {
  for (BasicBlock& block : kernel_) {
    for (Instruction& inst : block) {
      if (auto* call = llvm::dyn_cast<CallInst>(&inst);
          call && call->getCalledFunction() &&
          call->getCalledFunction()->getName() == "__manifold_printf")
        exec_.uses_printf = true;
    }
  }
  // Constant expressions over __local variables must become instructions so each kernel can
  // map the variable to its own local memory block.
  std::vector<llvm::Constant*> locals;
  for (llvm::GlobalVariable& global : module_.globals())
    if (global.getAddressSpace() == 3) locals.push_back(&global);
  if (!locals.empty()) llvm::convertUsersOfConstantsToInstructions(locals, &kernel_);

  bool has_sub_group_barriers = false;
  for (BasicBlock& block : kernel_)
    for (Instruction& inst : block) {
      has_sub_group_barriers |= is_sub_group_barrier(&inst);
      uses_exchange_ |= query_of(&inst) == Query::SubGroupExchange;
    }
  if (form_ == Form::ItemLoop) {
    drop_barriers();
    form_regions();
    build_work_group_function();
    exec_.item_loop_symbol = entry_name_;
    return true;
  }
  sub_group_mode_ = has_sub_group_barriers;
  if (sub_group_mode_) {
    insert_reconvergence_barriers();
  } else {
    insert_implicit_loop_barriers();
  }
  split_at_barriers();
  if (sub_group_mode_) order_barriers_for_sub_groups();
  exec_.has_barriers = !barrier_blocks_.empty();
  uint64_t private_estimate = 0;
  if (exec_.has_barriers) {
    privatize_allocas();
    spill_cross_barrier_values();
    private_estimate = private_bytes_ + slot_bytes_;
  } else {
    for (BasicBlock& block : kernel_)
      for (Instruction& inst : block)
        if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst))
          private_estimate += alloca->getAllocationSize(layout_)
                                  .value_or(llvm::TypeSize::getFixed(0))
                                  .getFixedValue();
  }
  form_regions();
  build_work_group_function();
  exec_.entry_symbol = entry_name_;
  exec_.scratch_bytes_per_item = slot_bytes_ + private_bytes_ +
                                 (uses_exchange_ ? kExchangeBytes : 0) +
                                 (sub_group_mode_ ? sizeof(uint32_t) : 0);
  info_.local_mem_size = exec_.static_local_size;
  info_.private_mem_size = private_estimate;
  (void)error;
  return true;
}

}  // namespace workgroup

bool form_work_group_functions(llvm::Module& module, std::vector<KernelInfo>& kernels,
                               std::vector<KernelExec>& execs, unsigned vector_register_bits,
                               unsigned widest_register_bits, unsigned sub_group_size,
                               std::string* error) {
  execs.assign(kernels.size(), KernelExec{});
  for (size_t i = 0; i < kernels.size(); ++i) {
    llvm::Function* kernel = module.getFunction(kernels[i].name);
    if (!kernel || kernel->isDeclaration()) {
      if (error) *error = "internal error: kernel " + kernels[i].name + " has no body";
      return false;
    }
    // The item-loop form starts from a copy of the kernel as written: the work-group form's
    // lowering rewrites the kernel itself.
    llvm::ValueToValueMapTy copy_map;
    llvm::Function* copy = llvm::CloneFunction(kernel, copy_map);
    const bool barriers = workgroup::has_barriers(*kernel);
    execs[i].item_loop_fits_any_group = !barriers;
    execs[i].item_loop_preferred =
        !barriers && workgroup::prefers_item_loop(*kernel, vector_register_bits);
    execs[i].partition_independent = workgroup::independent_of_partition(*kernel, kernels[i]);
    workgroup::KernelLowering lowering(module, *kernel, kernels[i], execs[i], sub_group_size);
    if (!lowering.run(error)) return false;
    KernelInfo unused_info = kernels[i];
    workgroup::KernelLowering item_loop(module, *copy, unused_info, execs[i], sub_group_size,
                                        workgroup::Form::ItemLoop, kernels[i].name + ".items");
    // Work-items in lockstep fill the registers as well as the work-group form's vectorization
    // across work-items does, without its per-work-item arrays: where the lockstep loop
    // applies, the item loop is the faster form for groups that fill it (CpuExecutable::run),
    // unless its loops are single chains, whose latency the work-group form hides better.
    if (!barriers) item_loop.run_items_in_lockstep_where_they_fit(widest_register_bits);
    if (!item_loop.run(error)) return false;
    if (const LockstepLoop lockstep = item_loop.lockstep();
        !lockstep.latency_bound || execs[i].item_loop_preferred)
      execs[i].item_loop_lockstep_items = lockstep.items;
    copy->replaceAllUsesWith(llvm::PoisonValue::get(copy->getType()));
    copy->eraseFromParent();
  }
  // The kernels themselves are no longer called by anyone: the work-group functions replaced
  // them. Drop them, then everything only they used.
  for (const KernelInfo& info : kernels) {
    if (llvm::Function* kernel = module.getFunction(info.name)) {
      kernel->replaceAllUsesWith(llvm::PoisonValue::get(kernel->getType()));
      kernel->eraseFromParent();
    }
  }
  for (llvm::GlobalVariable& global : llvm::make_early_inc_range(module.globals())) {
    global.removeDeadConstantUsers();
    if (global.getAddressSpace() == 3 && global.use_empty()) global.eraseFromParent();
  }
  for (llvm::Function& function : llvm::make_early_inc_range(module)) {
    if (function.getName() == workgroup::kSlotFunction ||
        function.getName() == workgroup::kPrivateFunction ||
        function.getName() == workgroup::kUniformFunction ||
        function.getName() == workgroup::kImplicitBarrier) {
      if (function.use_empty()) function.eraseFromParent();
      continue;
    }
    // Work-group functions run on one thread: convergence no longer constrains anything, and
    // the attribute blocks transformations such as vectorization across work-items.
    function.removeFnAttr(llvm::Attribute::Convergent);
    for (llvm::BasicBlock& block : function)
      for (llvm::Instruction& inst : block)
        if (auto* call = llvm::dyn_cast<llvm::CallBase>(&inst))
          call->removeFnAttr(llvm::Attribute::Convergent);
  }
  // Leftover work-item queries or barriers mean a function was not inlined into a kernel.
  for (llvm::Function& function : module) {
    if (!function.isDeclaration() || function.use_empty()) continue;
    if (workgroup::query_of(&function) || function.getName() == "_Z7barrierj" ||
        function.getName().starts_with("_Z18work_group_barrier")) {
      if (error)
        *error = "internal error: " + function.getName().str() +
                 " is used outside a kernel after inlining";
      return false;
    }
  }
  std::string verifier_output;
  llvm::raw_string_ostream verifier_stream(verifier_output);
  if (llvm::verifyModule(module, &verifier_stream)) {
    if (error) *error = "internal error: work-group pass produced invalid IR:\n" + verifier_output;
    return false;
  }
  return true;
}

}  // namespace manifold::compiler
