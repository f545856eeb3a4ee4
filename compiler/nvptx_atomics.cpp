#include "compiler/nvptx_atomics.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace manifold::compiler {
namespace {

// OpenCL C's memory_scope values (opencl-c-base.h) as NVPTX sync scopes.
std::optional<llvm::SyncScope::ID> nvptx_scope(llvm::LLVMContext& context, uint64_t scope) {
  switch (scope) {
    case 0:  // memory_scope_work_item
      return llvm::SyncScope::SingleThread;
    case 1:  // memory_scope_work_group
    case 4:  // memory_scope_sub_group: a warp, whose narrowest PTX scope is the block's
      return context.getOrInsertSyncScopeID("block");
    case 2:  // memory_scope_device
      return context.getOrInsertSyncScopeID("device");
    case 3:  // memory_scope_all_svm_devices
      return llvm::SyncScope::System;
    default:
      return std::nullopt;
  }
}

// The builtin library's functions whose last parameter is a memory_scope: the C11 atomics'
// *_explicit forms and atomic_work_item_fence (mangled _Z<length><name>..., ending in the
// parameter's type, 12memory_scope).
bool takes_scope_last(const llvm::Function& f) {
  llvm::StringRef name = f.getName();
  if (f.isDeclaration() || f.arg_empty() || !f.getArg(f.arg_size() - 1)->getType()->isIntegerTy() ||
      !name.ends_with("12memory_scope") || !name.consume_front("_Z"))
    return false;
  size_t length = 0;
  if (name.consumeInteger(10, length) || length > name.size()) return false;
  const llvm::StringRef base = name.take_front(length);
  return base.starts_with("atomic_") &&
         (base.ends_with("_explicit") || base == "atomic_work_item_fence");
}

void narrow(llvm::Instruction& instruction, llvm::SyncScope::ID scope) {
  const auto from_system = [&](llvm::SyncScope::ID current) {
    return current == llvm::SyncScope::System;
  };
  if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&instruction)) {
    if (load->isAtomic() && from_system(load->getSyncScopeID())) load->setSyncScopeID(scope);
  } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&instruction)) {
    if (store->isAtomic() && from_system(store->getSyncScopeID())) store->setSyncScopeID(scope);
  } else if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&instruction)) {
    if (from_system(rmw->getSyncScopeID())) rmw->setSyncScopeID(scope);
  } else if (auto* cmpxchg = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&instruction)) {
    if (from_system(cmpxchg->getSyncScopeID())) cmpxchg->setSyncScopeID(scope);
  } else if (auto* fence = llvm::dyn_cast<llvm::FenceInst>(&instruction)) {
    if (from_system(fence->getSyncScopeID())) fence->setSyncScopeID(scope);
  }
}

// PTX's ordered atom (sm_70 on): `atom.<order>.<scope><space>.<operation>` for an atomicrmw whose
// operation, type and address space PTX names, as CUDA's own atomics lower them. Nothing when PTX
// has no such form: the caller keeps the fence-based mapping.
struct OrderedAtom {
  std::string instruction;  // without the order and scope
  std::string value_constraint;
};

std::optional<OrderedAtom> ordered_atom_form(const llvm::AtomicRMWInst& rmw) {
  llvm::Type* type = rmw.getValOperand()->getType();
  const unsigned bits = type->getPrimitiveSizeInBits();
  const bool integer = type->isIntegerTy(32) || type->isIntegerTy(64);
  const bool floating = type->isFloatTy() || type->isDoubleTy();
  if (!integer && !floating) return std::nullopt;
  // The operation's stem, to which the width is appended; inc and dec exist in 32 bits only.
  using Op = llvm::AtomicRMWInst::BinOp;
  static const std::map<Op, const char*> kStems = {
      {Op::Xchg, "exch.b"},    {Op::Add, "add.u"},     {Op::Sub, "add.u"},  // Sub adds the negation
      {Op::And, "and.b"},      {Op::Or, "or.b"},       {Op::Xor, "xor.b"},  {Op::Max, "max.s"},
      {Op::Min, "min.s"},      {Op::UMax, "max.u"},    {Op::UMin, "min.u"}, {Op::FAdd, "add.f"},
      {Op::UIncWrap, "inc.u"}, {Op::UDecWrap, "dec.u"}};
  const auto stem = kStems.find(rmw.getOperation());
  if (stem == kStems.end()) return std::nullopt;
  const bool fp_operation = stem->first == Op::FAdd;
  const bool wraps = stem->first == Op::UIncWrap || stem->first == Op::UDecWrap;
  if (fp_operation != floating || (wraps && bits != 32)) return std::nullopt;
  const std::string operation = stem->second + std::to_string(bits);
  std::string space;
  switch (rmw.getPointerAddressSpace()) {
    case 0:
      break;  // generic
    case 1:
      space = ".global";
      break;
    case 3:
      space = ".shared";
      break;
    default:
      return std::nullopt;
  }
  const char* constraint = floating ? (bits == 32 ? "f" : "d") : (bits == 32 ? "r" : "l");
  return OrderedAtom{space + "." + operation, constraint};
}

// PTX's name of an NVPTX sync scope; nothing for one that PTX's atom has no qualifier for.
std::optional<std::string> ptx_scope(llvm::LLVMContext& context, llvm::SyncScope::ID scope) {
  if (scope == llvm::SyncScope::System) return "sys";
  llvm::SmallVector<llvm::StringRef, 8> names;
  context.getSyncScopeNames(names);
  if (scope >= names.size()) return std::nullopt;
  if (names[scope] == "block") return "cta";
  if (names[scope] == "device") return "gpu";
  if (names[scope] == "cluster") return "cluster";
  return std::nullopt;
}

// Replaces an ordered atomicrmw by PTX's ordered atom: release, acquire and acq_rel are the
// instruction's own order; seq_cst is a full fence before an acquire atom. One instruction instead
// of the fence-based mapping's two fences, which the GPU pays on every operation.
bool lower_to_ordered_atom(llvm::AtomicRMWInst& rmw, const llvm::DataLayout& layout) {
  const std::optional<OrderedAtom> form = ordered_atom_form(rmw);
  llvm::LLVMContext& context = rmw.getContext();
  const std::optional<std::string> scope = ptx_scope(context, rmw.getSyncScopeID());
  if (!form || !scope) return false;
  const char* order = nullptr;
  switch (rmw.getOrdering()) {
    case llvm::AtomicOrdering::Acquire:
      order = "acquire";
      break;
    case llvm::AtomicOrdering::Release:
      order = "release";
      break;
    case llvm::AtomicOrdering::AcquireRelease:
      order = "acq_rel";
      break;
    case llvm::AtomicOrdering::SequentiallyConsistent:
      order = "acquire";
      break;
    default:
      return false;
  }
  llvm::IRBuilder<> builder(&rmw);
  if (rmw.getOrdering() == llvm::AtomicOrdering::SequentiallyConsistent)
    builder.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent, rmw.getSyncScopeID());
  llvm::Type* type = rmw.getValOperand()->getType();
  const unsigned pointer_bits = layout.getPointerSizeInBits(rmw.getPointerAddressSpace());
  llvm::Value* address =
      builder.CreatePtrToInt(rmw.getPointerOperand(), builder.getIntNTy(pointer_bits));
  llvm::Value* operand = rmw.getValOperand();
  if (rmw.getOperation() == llvm::AtomicRMWInst::Sub) operand = builder.CreateNeg(operand);
  auto* signature = llvm::FunctionType::get(type, {address->getType(), type}, /*isVarArg=*/false);
  const std::string text =
      std::string("atom.") + order + "." + *scope + form->instruction + " $0, [$1], $2;";
  const std::string constraints = "=" + form->value_constraint + "," +
                                  (pointer_bits == 32 ? "r" : "l") + "," + form->value_constraint +
                                  ",~{memory}";
  auto* atom = llvm::InlineAsm::get(signature, text, constraints, /*hasSideEffects=*/true);
  llvm::CallInst* call = builder.CreateCall(atom, {address, operand});
  rmw.replaceAllUsesWith(call);
  rmw.eraseFromParent();
  return true;
}

}  // namespace

void specialize_atomic_scopes(llvm::Module& module) {
  llvm::LLVMContext& context = module.getContext();
  std::map<std::pair<llvm::Function*, uint64_t>, llvm::Function*> copies;
  std::vector<llvm::Function*> work;
  for (llvm::Function& f : module) work.push_back(&f);
  // Calls in the copies are visited too: a scoped function may call another with a constant scope
  // (atomic_work_item_fence narrows a fence of __local memory to the work-group).
  while (!work.empty()) {
    llvm::Function* caller = work.back();
    work.pop_back();
    for (llvm::BasicBlock& block : *caller)
      for (llvm::Instruction& instruction : block) {
        auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction);
        llvm::Function* callee = call ? call->getCalledFunction() : nullptr;
        if (!callee || !takes_scope_last(*callee)) continue;
        auto* scope_value =
            llvm::dyn_cast<llvm::ConstantInt>(call->getArgOperand(callee->arg_size() - 1));
        if (!scope_value) continue;  // known at run time only: the system scope stays
        const uint64_t scope = scope_value->getZExtValue();
        const std::optional<llvm::SyncScope::ID> sync_scope = nvptx_scope(context, scope);
        if (!sync_scope) continue;
        llvm::Function*& copy = copies[{callee, scope}];
        if (!copy) {
          llvm::ValueToValueMapTy map;
          copy = llvm::CloneFunction(callee, map);
          copy->setName(callee->getName() + ".scope" + std::to_string(scope));
          copy->setLinkage(llvm::GlobalValue::InternalLinkage);
          llvm::Argument* parameter = copy->getArg(copy->arg_size() - 1);
          parameter->replaceAllUsesWith(llvm::ConstantInt::get(parameter->getType(), scope));
          for (llvm::BasicBlock& copied : *copy)
            for (llvm::Instruction& i : copied) narrow(i, *sync_scope);
          work.push_back(copy);
        }
        call->setCalledFunction(copy);
      }
  }
  // The library's calls that kept the scope parameter in use (compiler/builtins/atomics.cl).
  if (llvm::Function* keep = module.getFunction("__manifold_memory_scope")) {
    for (llvm::User* user : llvm::SmallVector<llvm::User*, 16>(keep->users()))
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(user)) call->eraseFromParent();
    if (keep->use_empty()) keep->eraseFromParent();
  }
}

void drop_atomic_volatility(llvm::Module& module) {
  for (llvm::Function& f : module)
    for (llvm::BasicBlock& b : f)
      for (llvm::Instruction& i : b) {
        if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&i); load && load->isAtomic())
          load->setVolatile(false);
        else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&i); store && store->isAtomic())
          store->setVolatile(false);
        else if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&i))
          rmw->setVolatile(false);
        else if (auto* cmpxchg = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&i))
          cmpxchg->setVolatile(false);
      }
}

void lower_atomic_orderings(llvm::Module& module, unsigned sm) {
  const bool orders_in_hardware = sm >= 70;  // PTX's .acquire/.release/.acq_rel: sm_70 on
  const llvm::SyncScope::ID block = module.getContext().getOrInsertSyncScopeID("block");
  std::vector<llvm::Instruction*> atomics;
  for (llvm::Function& f : module)
    for (llvm::BasicBlock& b : f)
      for (llvm::Instruction& i : b)
        if (i.isAtomic()) atomics.push_back(&i);
  for (llvm::Instruction* instruction : atomics) {
    if (auto* fence = llvm::dyn_cast<llvm::FenceInst>(instruction)) {
      if (fence->getSyncScopeID() == llvm::SyncScope::SingleThread) fence->eraseFromParent();
      continue;
    }
    // Single-thread atomics get the block scope, which PTX names (the backend refuses theirs).
    if (llvm::getAtomicSyncScopeID(instruction) == llvm::SyncScope::SingleThread)
      llvm::setAtomicSyncScopeID(instruction, block);
    llvm::AtomicOrdering order = llvm::AtomicOrdering::Monotonic;
    llvm::SyncScope::ID scope = llvm::SyncScope::System;
    bool lower = false;
    const auto relax = [&](auto* atomic, bool needs_fences) {
      scope = atomic->getSyncScopeID();
      order = atomic->getOrdering();
      lower = needs_fences && order != llvm::AtomicOrdering::Monotonic &&
              order != llvm::AtomicOrdering::Unordered;
      if (lower) atomic->setOrdering(llvm::AtomicOrdering::Monotonic);
    };
    if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(instruction)) {
      if (orders_in_hardware && lower_to_ordered_atom(*rmw, module.getDataLayout())) continue;
      relax(rmw, true);
    } else if (auto* load = llvm::dyn_cast<llvm::LoadInst>(instruction)) {
      relax(load, !orders_in_hardware);
    } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(instruction)) {
      relax(store, !orders_in_hardware);
    } else if (auto* cmpxchg = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(instruction)) {
      scope = cmpxchg->getSyncScopeID();
      // The stronger of the two orders, as one: acquire on failure needs the trailing fence too.
      order = cmpxchg->getSuccessOrdering();
      if (cmpxchg->getFailureOrdering() == llvm::AtomicOrdering::SequentiallyConsistent)
        order = llvm::AtomicOrdering::SequentiallyConsistent;
      else if (cmpxchg->getFailureOrdering() == llvm::AtomicOrdering::Acquire &&
               order == llvm::AtomicOrdering::Release)
        order = llvm::AtomicOrdering::AcquireRelease;
      lower = !orders_in_hardware && order != llvm::AtomicOrdering::Monotonic;
      if (lower) {
        cmpxchg->setSuccessOrdering(llvm::AtomicOrdering::Monotonic);
        cmpxchg->setFailureOrdering(llvm::AtomicOrdering::Monotonic);
      }
    }
    if (!lower) continue;
    // release: a fence before (sequentially consistent: a full one); acquire: a fence after.
    const bool releases = order == llvm::AtomicOrdering::Release ||
                          order == llvm::AtomicOrdering::AcquireRelease ||
                          order == llvm::AtomicOrdering::SequentiallyConsistent;
    const bool acquires = order == llvm::AtomicOrdering::Acquire ||
                          order == llvm::AtomicOrdering::AcquireRelease ||
                          order == llvm::AtomicOrdering::SequentiallyConsistent;
    if (releases) {
      llvm::IRBuilder<> before(instruction);
      before.CreateFence(order == llvm::AtomicOrdering::SequentiallyConsistent
                             ? llvm::AtomicOrdering::SequentiallyConsistent
                             : llvm::AtomicOrdering::Release,
                         scope);
    }
    if (acquires) {
      llvm::IRBuilder<> after(instruction->getNextNode());
      after.CreateFence(llvm::AtomicOrdering::Acquire, scope);
    }
  }
}

}  // namespace manifold::compiler
