#include "compiler/cpu_local_atomics.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>
#include <llvm/Transforms/Utils/LowerAtomic.h>

#include <vector>

namespace manifold::compiler {

namespace {

const llvm::Value* atomic_address(const llvm::Instruction& instruction) {
  if (const auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&instruction))
    return rmw->getPointerOperand();
  if (const auto* cmpxchg = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&instruction))
    return cmpxchg->getPointerOperand();
  return llvm::getLoadStorePointerOperand(&instruction);  // null for a fence
}

// Whether `pointer` is into `address_space` for certain: of that space, or (a generic pointer)
// offsets, phis and selects of pointers cast from that space only.
bool points_into(const llvm::Value* pointer, unsigned address_space) {
  llvm::SmallVector<const llvm::Value*, 8> work{pointer};
  llvm::SmallPtrSet<const llvm::Value*, 8> seen;
  while (!work.empty()) {
    const llvm::Value* value = work.pop_back_val();
    if (!seen.insert(value).second) continue;
    if (seen.size() > 64) return false;
    if (value->getType()->getPointerAddressSpace() == address_space) continue;
    if (const auto* cast = llvm::dyn_cast<llvm::AddrSpaceCastOperator>(value)) {
      work.push_back(cast->getPointerOperand());
    } else if (const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(value)) {
      work.push_back(gep->getPointerOperand());
    } else if (const auto* phi = llvm::dyn_cast<llvm::PHINode>(value)) {
      for (const llvm::Value* incoming : phi->incoming_values()) work.push_back(incoming);
    } else if (const auto* select = llvm::dyn_cast<llvm::SelectInst>(value)) {
      work.push_back(select->getTrueValue());
      work.push_back(select->getFalseValue());
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

unsigned make_local_atomics_plain(llvm::Module& module, unsigned local_address_space) {
  std::vector<llvm::Instruction*> atomics;
  for (llvm::Function& function : module)
    for (llvm::BasicBlock& block : function)
      for (llvm::Instruction& instruction : block) {
        if (!instruction.isAtomic()) continue;
        const llvm::Value* address = atomic_address(instruction);
        if (address && points_into(address, local_address_space)) atomics.push_back(&instruction);
      }
  unsigned plain = 0;
  for (llvm::Instruction* instruction : atomics) {
    if (auto* load = llvm::dyn_cast<llvm::LoadInst>(instruction)) {
      load->setAtomic(llvm::AtomicOrdering::NotAtomic);
      load->setVolatile(false);
      ++plain;
    } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(instruction)) {
      store->setAtomic(llvm::AtomicOrdering::NotAtomic);
      store->setVolatile(false);
      ++plain;
    } else if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(instruction)) {
      plain += llvm::lowerAtomicRMWInst(rmw) ? 1 : 0;
    } else if (auto* cmpxchg = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(instruction)) {
      plain += llvm::lowerAtomicCmpXchgInst(cmpxchg) ? 1 : 0;
    }
  }
  return plain;
}

}  // namespace manifold::compiler
