// Memory: variables, loads and stores, access chains, copies, atomics and barriers.
#include <llvm/IR/Constants.h>

#include <spirv/unified1/spirv.hpp>

#include "compiler/spirv/instructions.h"
#include "compiler/spirv/names.h"
#include "compiler/spirv/reader_impl.h"

namespace manifold::compiler::spirv {
namespace {

// A memory access operand (at ops[at], if present): whether it is volatile, and its alignment.
struct Access {
  bool is_volatile = false;
  uint32_t alignment = 0;
};

Access memory_access(const std::vector<uint32_t>& ops, size_t at) {
  Access a;
  if (at >= ops.size()) return a;
  const uint32_t mask = ops[at];
  a.is_volatile = mask & spv::MemoryAccessVolatileMask;
  if ((mask & spv::MemoryAccessAlignedMask) && at + 1 < ops.size())
    a.alignment = valid_alignment(ops[at + 1]);
  return a;
}

// The LLVM ordering of a memory semantics operand (a constant).
llvm::AtomicOrdering ordering(llvm::Value* semantics, bool load, bool store) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(semantics);
  const uint64_t bits =
      c ? c->getZExtValue() : uint64_t{spv::MemorySemanticsSequentiallyConsistentMask};
  using O = llvm::AtomicOrdering;
  if (bits & spv::MemorySemanticsSequentiallyConsistentMask) return O::SequentiallyConsistent;
  if (bits & spv::MemorySemanticsAcquireReleaseMask)
    return load ? O::Acquire : store ? O::Release : O::AcquireRelease;
  if (bits & spv::MemorySemanticsAcquireMask) return store ? O::Monotonic : O::Acquire;
  if (bits & spv::MemorySemanticsReleaseMask) return load ? O::Monotonic : O::Release;
  return O::Monotonic;
}

// OpenCL C's cl_mem_fence_flags for the storage classes a memory semantics operand names.
uint32_t fence_flags(llvm::Value* semantics) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(semantics);
  if (!c) throw ReaderError("memory semantics that are not a constant");
  const uint64_t bits = c->getZExtValue();
  uint32_t flags = 0;
  if (bits & spv::MemorySemanticsWorkgroupMemoryMask) flags |= 1;       // CLK_LOCAL_MEM_FENCE
  if (bits & spv::MemorySemanticsCrossWorkgroupMemoryMask) flags |= 2;  // CLK_GLOBAL_MEM_FENCE
  if (bits & spv::MemorySemanticsImageMemoryMask) flags |= 4;           // CLK_IMAGE_MEM_FENCE
  return flags;
}

uint32_t constant_scope(llvm::Value* scope) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(scope);
  if (!c) throw ReaderError("a scope that is not a constant");
  return static_cast<uint32_t>(c->getZExtValue());
}

}  // namespace

llvm::Value* translate_memory_instruction(Reader& r, const Instruction& inst, bool* handled) {
  llvm::IRBuilder<>& b = *r.builder_;
  const auto& ops = inst.operands;
  auto operand = [&](size_t k) { return operand_value(r, inst, k); };
  auto pointee_of = [&](size_t k) {
    llvm::Type* t = r.type(r.pointee(r.type_id_of(ops.at(k))));
    if (!t) throw ReaderError("pointer of unknown type in " + opcode_name(inst.opcode));
    return t;
  };
  auto align = [&](uint32_t given, llvm::Type* t) {
    return given ? llvm::Align(given) : r.module_->getDataLayout().getABITypeAlign(t);
  };
  llvm::Type* result = r.type(inst.type);
  auto rmw = [&](llvm::AtomicRMWInst::BinOp op, llvm::Value* v) {
    return b.CreateAtomicRMW(op, operand(0), v, llvm::MaybeAlign(),
                             ordering(operand(2), false, false));
  };

  switch (inst.opcode) {
    case spv::OpVariable: {
      if (ops[0] != spv::StorageClassFunction)
        throw ReaderError("a variable of storage class " + std::to_string(ops[0]) +
                          " inside a function");
      llvm::Type* t = r.type(r.pointee(inst.type));
      const llvm::IRBuilderBase::InsertPoint saved = b.saveIP();
      b.SetInsertPoint(r.entry_);
      llvm::AllocaInst* slot = b.CreateAlloca(t);
      if (const uint32_t a = r.decorations(inst.id).alignment) slot->setAlignment(llvm::Align(a));
      b.restoreIP(saved);
      if (ops.size() > 1) b.CreateStore(operand(1), slot);
      return slot;
    }
    case spv::OpLoad: {
      const Access a = memory_access(ops, 1);
      return b.CreateAlignedLoad(result, operand(0), align(a.alignment, result),
                                 a.is_volatile || r.decorations(ops[0]).is_volatile);
    }
    case spv::OpStore: {
      const Access a = memory_access(ops, 2);
      llvm::Value* v = operand(1);
      return b.CreateAlignedStore(v, operand(0), align(a.alignment, v->getType()),
                                  a.is_volatile || r.decorations(ops[0]).is_volatile);
    }
    case spv::OpCopyMemory: {
      llvm::Type* t = pointee_of(1);
      const Access a = memory_access(ops, 2);
      llvm::Value* v = b.CreateAlignedLoad(t, operand(1), align(a.alignment, t), a.is_volatile);
      return b.CreateAlignedStore(v, operand(0), align(a.alignment, t), a.is_volatile);
    }
    case spv::OpCopyMemorySized: {
      const Access a = memory_access(ops, 3);
      const llvm::MaybeAlign alignment =
          a.alignment ? llvm::MaybeAlign(a.alignment) : llvm::MaybeAlign();
      return b.CreateMemCpy(operand(0), alignment, operand(1), alignment, operand(2),
                            a.is_volatile);
    }
    case spv::OpAccessChain:
    case spv::OpInBoundsAccessChain:
    case spv::OpPtrAccessChain:
    case spv::OpInBoundsPtrAccessChain: {
      const bool ptr_chain =
          inst.opcode == spv::OpPtrAccessChain || inst.opcode == spv::OpInBoundsPtrAccessChain;
      const bool in_bounds =
          inst.opcode == spv::OpInBoundsAccessChain || inst.opcode == spv::OpInBoundsPtrAccessChain;
      llvm::Type* base_type = pointee_of(0);
      std::vector<llvm::Value*> indices;
      if (!ptr_chain) indices.push_back(b.getInt32(0));
      // Struct members are named by i32 constants in LLVM; other indices stay as given.
      uint32_t walk = r.pointee(r.type_id_of(ops[0]));
      for (size_t k = 1; k < ops.size(); ++k) {
        llvm::Value* index = operand(k);
        const bool first_of_ptr_chain = ptr_chain && k == 1;
        const Instruction* t = r.def(walk);
        if (!first_of_ptr_chain && t && t->opcode == spv::OpTypeStruct) {
          auto* c = llvm::dyn_cast<llvm::ConstantInt>(index);
          if (!c) throw ReaderError("struct member index that is not a constant");
          index = b.getInt32(static_cast<uint32_t>(c->getZExtValue()));
          walk = t->operands[c->getZExtValue()];
        } else if (!first_of_ptr_chain && t) {
          walk = t->operands[0];  // element of an array, runtime array or vector
        }
        indices.push_back(index);
      }
      return in_bounds ? b.CreateInBoundsGEP(base_type, operand(0), indices)
                       : b.CreateGEP(base_type, operand(0), indices);
    }

    // Atomics. Scopes are not narrowed: every atomic is as strong as at device scope.
    case spv::OpAtomicLoad: {
      auto* load = b.CreateAlignedLoad(result, operand(0), align(0, result));
      load->setAtomic(ordering(operand(2), true, false));
      return load;
    }
    case spv::OpAtomicStore: {
      llvm::Value* v = operand(3);
      auto* store = b.CreateAlignedStore(v, operand(0), align(0, v->getType()));
      store->setAtomic(ordering(operand(2), false, true));
      return store;
    }
    case spv::OpAtomicExchange:
      return rmw(llvm::AtomicRMWInst::Xchg, operand(3));
    case spv::OpAtomicCompareExchange:
    case spv::OpAtomicCompareExchangeWeak: {
      llvm::AtomicOrdering success = ordering(operand(2), false, false);
      llvm::AtomicOrdering failure = ordering(operand(3), true, false);
      if (!llvm::isAtLeastOrStrongerThan(success, failure)) success = failure;
      auto* x = b.CreateAtomicCmpXchg(operand(0), operand(5), operand(4), llvm::MaybeAlign(),
                                      success, failure);
      return b.CreateExtractValue(x, 0);
    }
    case spv::OpAtomicIIncrement:
      return rmw(llvm::AtomicRMWInst::Add, llvm::ConstantInt::get(result, 1));
    case spv::OpAtomicIDecrement:
      return rmw(llvm::AtomicRMWInst::Sub, llvm::ConstantInt::get(result, 1));
    case spv::OpAtomicIAdd:
      return rmw(llvm::AtomicRMWInst::Add, operand(3));
    case spv::OpAtomicISub:
      return rmw(llvm::AtomicRMWInst::Sub, operand(3));
    case spv::OpAtomicSMin:
      return rmw(llvm::AtomicRMWInst::Min, operand(3));
    case spv::OpAtomicUMin:
      return rmw(llvm::AtomicRMWInst::UMin, operand(3));
    case spv::OpAtomicSMax:
      return rmw(llvm::AtomicRMWInst::Max, operand(3));
    case spv::OpAtomicUMax:
      return rmw(llvm::AtomicRMWInst::UMax, operand(3));
    case spv::OpAtomicAnd:
      return rmw(llvm::AtomicRMWInst::And, operand(3));
    case spv::OpAtomicOr:
      return rmw(llvm::AtomicRMWInst::Or, operand(3));
    case spv::OpAtomicXor:
      return rmw(llvm::AtomicRMWInst::Xor, operand(3));
    case spv::OpAtomicFlagTestAndSet: {
      llvm::Value* old = b.CreateAtomicRMW(llvm::AtomicRMWInst::Xchg, operand(0), b.getInt32(1),
                                           llvm::MaybeAlign(), ordering(operand(2), false, false));
      return b.CreateICmpNE(old, b.getInt32(0));
    }
    case spv::OpAtomicFlagClear: {
      auto* store = b.CreateAlignedStore(b.getInt32(0), operand(0), llvm::Align(4));
      store->setAtomic(ordering(operand(2), false, true));
      return store;
    }

    case spv::OpControlBarrier: {
      // barrier(flags): what the work-group pass and the GPU libraries know as a barrier;
      // sub_group_barrier(flags) for the Subgroup execution scope.
      const uint32_t scope = constant_scope(operand(0));
      const bool sub_group =
          scope == spv::ScopeSubgroup && r.target_.has_feature("__opencl_c_subgroups");
      if (scope != spv::ScopeWorkgroup && !sub_group)
        throw ReaderError("OpControlBarrier of a scope other than Workgroup or Subgroup");
      auto* call = r.call_builtin(sub_group ? "_Z17sub_group_barrierj" : "_Z7barrierj",
                                  b.getVoidTy(), {b.getInt32(fence_flags(operand(2)))}, false);
      call->addFnAttr(llvm::Attribute::Convergent);
      call->getCalledFunction()->addFnAttr(llvm::Attribute::Convergent);
      return call;
    }
    case spv::OpMemoryBarrier:
      return b.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
    default:
      *handled = false;
      return nullptr;
  }
}

}  // namespace manifold::compiler::spirv
