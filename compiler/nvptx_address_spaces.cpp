// The address-space passes of the NVPTX pipeline (compiler/nvptx_address_spaces.h).
#include "compiler/nvptx_address_spaces.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>

#include <set>
#include <vector>

namespace manifold::compiler {

bool retype_constant_arguments(llvm::Function& kernel, std::string* log) {
  llvm::LLVMContext& context = kernel.getContext();
  llvm::PointerType* global = llvm::PointerType::get(context, kGlobalAS);
  llvm::PointerType* constant = llvm::PointerType::get(context, kConstantAS);
  // First every value derived from the arguments, and whether each use can follow.
  std::vector<llvm::Value*> work, derived;
  std::set<llvm::Value*> seen;
  for (llvm::Argument& arg : kernel.args())
    if (arg.getType() == constant) work.push_back(&arg);
  if (work.empty()) return true;
  bool ok = true;
  while (!work.empty()) {
    llvm::Value* value = work.back();
    work.pop_back();
    if (!seen.insert(value).second) continue;
    derived.push_back(value);
    for (llvm::User* user : value->users()) {
      if (llvm::isa<llvm::GetElementPtrInst, llvm::PHINode, llvm::SelectInst>(user)) {
        if (user->getType() == constant) work.push_back(user);
        for (llvm::Value* op : user->operands())  // other inputs: derived, or null
          if (op->getType() == constant && !llvm::isa<llvm::ConstantPointerNull>(op) &&
              !llvm::isa<llvm::Argument, llvm::Instruction>(op))
            ok = false;
      } else if (llvm::isa<llvm::AddrSpaceCastInst, llvm::ICmpInst, llvm::LoadInst,
                           llvm::PtrToIntInst, llvm::AtomicRMWInst, llvm::AtomicCmpXchgInst>(
                     user)) {
      } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(user)) {
        ok = ok && store->getValueOperand() != value;  // storing the pointer itself: no
      } else {
        ok = false;  // a call (not inlined), a memcpy, ...: leave the kernel as it is
      }
    }
  }
  if (!ok) {
    *log += "warning: a __constant argument of kernel '" + kernel.getName().str() +
            "' stays in the constant space (used in a way Manifold cannot retype)\n";
    return false;
  }
  for (llvm::Value* value : derived) {
    value->mutateType(global);
    for (llvm::User* user : llvm::SmallVector<llvm::User*, 8>(value->users())) {
      for (llvm::Use& op : user->operands())
        if (auto* null = llvm::dyn_cast<llvm::ConstantPointerNull>(op.get());
            null && null->getType() == constant)
          op.set(llvm::ConstantPointerNull::get(global));
      if (auto* cast = llvm::dyn_cast<llvm::AddrSpaceCastInst>(user);
          cast && cast->getType() == global) {
        cast->replaceAllUsesWith(cast->getOperand(0));
        cast->eraseFromParent();
      }
    }
  }
  // The function's own type must follow its arguments: a new function takes over the body.
  std::vector<llvm::Type*> params;
  for (llvm::Argument& arg : kernel.args()) params.push_back(arg.getType());
  auto* type = llvm::FunctionType::get(kernel.getReturnType(), params, false);
  llvm::Function* replacement = llvm::Function::Create(
      type, kernel.getLinkage(), kernel.getAddressSpace(), "", kernel.getParent());
  replacement->copyAttributesFrom(&kernel);
  replacement->copyMetadata(&kernel, 0);
  replacement->splice(replacement->begin(), &kernel);
  for (unsigned i = 0; i < kernel.arg_size(); ++i) {
    replacement->getArg(i)->takeName(kernel.getArg(i));
    kernel.getArg(i)->replaceAllUsesWith(replacement->getArg(i));
  }
  replacement->takeName(&kernel);
  kernel.eraseFromParent();
  return true;
}
namespace {

// Whether every use of `pointer` is a load or an address computed from it (what the shim makes of
// __manifold_launch), so that the variable can move to another address space.
bool only_loaded_through(const llvm::Value& pointer) {
  for (const llvm::User* user : pointer.users()) {
    if (llvm::isa<llvm::LoadInst>(user)) continue;
    const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(user);
    if (!gep || gep->getPointerOperand() != &pointer || !only_loaded_through(*gep)) return false;
  }
  return true;
}

// Makes the loads and address computations that use `from` use `to` (same layout, another
// address space); the loads are marked invariant: the host writes the data between launches only.
void rebase_loads(llvm::Value& from, llvm::Value& to) {
  llvm::MDNode* invariant = llvm::MDNode::get(from.getContext(), {});
  for (llvm::User* user : llvm::to_vector(from.users())) {
    if (auto* load = llvm::dyn_cast<llvm::LoadInst>(user)) {
      load->setOperand(0, &to);
      load->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant);
      continue;
    }
    auto* gep = llvm::cast<llvm::GEPOperator>(user);
    llvm::SmallVector<llvm::Value*, 4> indices(gep->idx_begin(), gep->idx_end());
    llvm::Value* moved = nullptr;
    if (auto* constant = llvm::dyn_cast<llvm::ConstantExpr>(gep)) {
      llvm::SmallVector<llvm::Constant*, 4> constants;
      for (llvm::Value* i : indices) constants.push_back(llvm::cast<llvm::Constant>(i));
      moved = llvm::ConstantExpr::getGetElementPtr(gep->getSourceElementType(),
                                                   llvm::cast<llvm::Constant>(&to), constants,
                                                   gep->getNoWrapFlags());
      rebase_loads(*constant, *moved);
      if (constant->use_empty()) constant->destroyConstant();
    } else {
      auto* instruction = llvm::cast<llvm::GetElementPtrInst>(gep);
      llvm::IRBuilder<> builder(instruction);
      moved =
          builder.CreateGEP(gep->getSourceElementType(), &to, indices, "", gep->getNoWrapFlags());
      rebase_loads(*instruction, *moved);
      instruction->eraseFromParent();
    }
  }
}
}  // namespace

void move_constants_to_global_memory(llvm::Module& module) {
  constexpr unsigned kConstantAddressSpace = 4, kGlobalAddressSpace = 1;
  std::vector<llvm::GlobalVariable*> constants;
  for (llvm::GlobalVariable& g : module.globals()) {
    if (g.getAddressSpace() != kConstantAddressSpace || !g.hasInitializer()) continue;
    g.removeDeadConstantUsers();  // left over from linking and inlining
    if (only_loaded_through(g)) constants.push_back(&g);
  }
  for (llvm::GlobalVariable* constant : constants) {
    auto* moved = new llvm::GlobalVariable(
        module, constant->getValueType(), constant->isConstant(), constant->getLinkage(),
        constant->getInitializer(), "", nullptr, llvm::GlobalValue::NotThreadLocal,
        kGlobalAddressSpace, constant->isExternallyInitialized());
    moved->takeName(constant);
    moved->setAlignment(constant->getAlign());
    moved->setUnnamedAddr(constant->getUnnamedAddr());
    rebase_loads(*constant, *moved);
    constant->eraseFromParent();
  }
}
void define_collective_scratch(llvm::Module& module) {
  llvm::Function* scratch = module.getFunction("__manifold_collective_scratch");
  if (!scratch) return;
  llvm::LLVMContext& context = module.getContext();
  auto* type = llvm::ArrayType::get(llvm::Type::getInt64Ty(context), 65);
  auto* slots = new llvm::GlobalVariable(module, type, false, llvm::GlobalValue::InternalLinkage,
                                         llvm::UndefValue::get(type), "__manifold_collective_slots",
                                         nullptr, llvm::GlobalValue::NotThreadLocal, kSharedAS);
  slots->setAlignment(llvm::Align(8));
  for (llvm::User* user : llvm::SmallVector<llvm::User*, 8>(scratch->users())) {
    auto* call = llvm::dyn_cast<llvm::CallInst>(user);
    if (!call || call->getCalledFunction() != scratch) continue;
    call->replaceAllUsesWith(
        llvm::ConstantExpr::getPointerBitCastOrAddrSpaceCast(slots, call->getType()));
    call->eraseFromParent();
  }
  if (scratch->use_empty()) scratch->eraseFromParent();
}

}  // namespace manifold::compiler
