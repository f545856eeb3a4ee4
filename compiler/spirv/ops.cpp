// Arithmetic, comparisons, conversions, composites, control flow and calls.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include <spirv/unified1/spirv.hpp>

#include "compiler/spirv/instructions.h"
#include "compiler/spirv/names.h"
#include "compiler/spirv/reader_impl.h"

namespace manifold::compiler::spirv {
namespace {

std::optional<llvm::Instruction::BinaryOps> binary_op(uint32_t opcode) {
  using B = llvm::Instruction;
  switch (opcode) {
    case spv::OpIAdd:
      return B::Add;
    case spv::OpISub:
      return B::Sub;
    case spv::OpIMul:
      return B::Mul;
    case spv::OpUDiv:
      return B::UDiv;
    case spv::OpSDiv:
      return B::SDiv;
    case spv::OpUMod:
      return B::URem;
    case spv::OpSRem:
      return B::SRem;
    case spv::OpFAdd:
      return B::FAdd;
    case spv::OpFSub:
      return B::FSub;
    case spv::OpFMul:
      return B::FMul;
    case spv::OpFDiv:
      return B::FDiv;
    case spv::OpFRem:
      return B::FRem;
    case spv::OpShiftLeftLogical:
      return B::Shl;
    case spv::OpShiftRightLogical:
      return B::LShr;
    case spv::OpShiftRightArithmetic:
      return B::AShr;
    case spv::OpBitwiseOr:
    case spv::OpLogicalOr:
      return B::Or;
    case spv::OpBitwiseXor:
      return B::Xor;
    case spv::OpBitwiseAnd:
    case spv::OpLogicalAnd:
      return B::And;
    default:
      return std::nullopt;
  }
}

std::optional<llvm::CmpInst::Predicate> compare_predicate(uint32_t opcode) {
  using P = llvm::CmpInst;
  switch (opcode) {
    case spv::OpIEqual:
    case spv::OpLogicalEqual:
      return P::ICMP_EQ;
    case spv::OpINotEqual:
    case spv::OpLogicalNotEqual:
      return P::ICMP_NE;
    case spv::OpUGreaterThan:
      return P::ICMP_UGT;
    case spv::OpSGreaterThan:
      return P::ICMP_SGT;
    case spv::OpUGreaterThanEqual:
      return P::ICMP_UGE;
    case spv::OpSGreaterThanEqual:
      return P::ICMP_SGE;
    case spv::OpULessThan:
      return P::ICMP_ULT;
    case spv::OpSLessThan:
      return P::ICMP_SLT;
    case spv::OpULessThanEqual:
      return P::ICMP_ULE;
    case spv::OpSLessThanEqual:
      return P::ICMP_SLE;
    case spv::OpFOrdEqual:
      return P::FCMP_OEQ;
    case spv::OpFUnordEqual:
      return P::FCMP_UEQ;
    case spv::OpFOrdNotEqual:
    case spv::OpLessOrGreater:
      return P::FCMP_ONE;
    case spv::OpFUnordNotEqual:
      return P::FCMP_UNE;
    case spv::OpFOrdLessThan:
      return P::FCMP_OLT;
    case spv::OpFUnordLessThan:
      return P::FCMP_ULT;
    case spv::OpFOrdGreaterThan:
      return P::FCMP_OGT;
    case spv::OpFUnordGreaterThan:
      return P::FCMP_UGT;
    case spv::OpFOrdLessThanEqual:
      return P::FCMP_OLE;
    case spv::OpFUnordLessThanEqual:
      return P::FCMP_ULE;
    case spv::OpFOrdGreaterThanEqual:
      return P::FCMP_OGE;
    case spv::OpFUnordGreaterThanEqual:
      return P::FCMP_UGE;
    case spv::OpOrdered:
      return P::FCMP_ORD;
    case spv::OpUnordered:
      return P::FCMP_UNO;
    default:
      return std::nullopt;
  }
}

// The element `index` of a vector (the value itself for a scalar).
llvm::Value* lane(llvm::IRBuilder<>& b, llvm::Value* v, unsigned index) {
  return v->getType()->isVectorTy() ? b.CreateExtractElement(v, index) : v;
}

llvm::Value* insert_into(llvm::IRBuilder<>& b, llvm::Value* composite,
                         const std::vector<uint32_t>& indices, size_t pos, llvm::Value* object) {
  if (pos == indices.size()) return object;
  llvm::Type* t = composite->getType();
  if (t->isVectorTy()) return b.CreateInsertElement(composite, object, indices[pos]);
  llvm::Value* inner = b.CreateExtractValue(composite, indices[pos]);
  return b.CreateInsertValue(composite, insert_into(b, inner, indices, pos + 1, object),
                             indices[pos]);
}

llvm::Value* shuffle(llvm::IRBuilder<>& b, llvm::Value* v1, llvm::Value* v2,
                     const std::vector<uint32_t>& components) {
  const unsigned n1 = llvm::cast<llvm::FixedVectorType>(v1->getType())->getNumElements();
  const unsigned n2 = llvm::cast<llvm::FixedVectorType>(v2->getType())->getNumElements();
  // LLVM shuffles two vectors of one type: widen the shorter one.
  const unsigned n = std::max(n1, n2);
  auto widen = [&](llvm::Value* v, unsigned from) {
    if (from == n) return v;
    std::vector<int> mask(n, -1);
    for (unsigned k = 0; k < from; ++k) mask[k] = static_cast<int>(k);
    return b.CreateShuffleVector(v, mask);
  };
  std::vector<int> mask;
  for (uint32_t c : components)
    mask.push_back(c == 0xffffffffu ? -1 : c < n1 ? static_cast<int>(c) : int(c - n1 + n));
  return b.CreateShuffleVector(widen(v1, n1), widen(v2, n2), mask);
}

llvm::Value* fp_class(llvm::IRBuilder<>& b, llvm::Value* x, llvm::FPClassTest test) {
  return b.createIsFPClass(x, test);
}

// OpCopyLogical: the value as a type of the same layout (struct and array types that SPIR-V
// keeps apart and LLVM may too), member by member.
llvm::Value* copy_logical(llvm::IRBuilder<>& b, llvm::Value* v, llvm::Type* to) {
  if (v->getType() == to) return v;
  unsigned count = 0;
  if (auto* s = llvm::dyn_cast<llvm::StructType>(to))
    count = s->getNumElements();
  else if (auto* a = llvm::dyn_cast<llvm::ArrayType>(to))
    count = static_cast<unsigned>(a->getNumElements());
  else
    return b.CreateBitCast(v, to);
  llvm::Value* out = llvm::PoisonValue::get(to);
  for (unsigned k = 0; k < count; ++k) {
    llvm::Type* member = to->isStructTy() ? to->getStructElementType(k) : to->getArrayElementType();
    out = b.CreateInsertValue(out, copy_logical(b, b.CreateExtractValue(v, k), member), k);
  }
  return out;
}

}  // namespace

llvm::Value* operand_value(Reader& r, const Instruction& inst, size_t k) {
  llvm::Value* v = r.value(inst.operands.at(k));
  if (!v)
    throw ReaderError("operand %" + std::to_string(inst.operands.at(k)) + " of " +
                      opcode_name(inst.opcode) + " is undefined");
  return v;
}

llvm::Value* translate_instruction(Reader& r, const Instruction& inst) {
  bool handled = true;
  if (llvm::Value* v = translate_memory_instruction(r, inst, &handled); handled) return v;
  handled = true;
  if (llvm::Value* v = translate_group_instruction(r, inst, &handled); handled) return v;
  handled = true;
  if (llvm::Value* v = translate_image_instruction(r, inst, &handled); handled) return v;
  llvm::IRBuilder<>& b = *r.builder_;
  const auto& ops = inst.operands;
  auto operand = [&](size_t k) { return operand_value(r, inst, k); };
  llvm::Type* result = r.type(inst.type);
  const Decorations& d = r.decorations(inst.id);

  if (auto op = binary_op(inst.opcode)) {
    llvm::Value* lhs = operand(0);
    llvm::Value* rhs = operand(1);
    // Shift amounts may be of another width than the shifted value.
    if (inst.opcode >= spv::OpShiftRightLogical && inst.opcode <= spv::OpShiftLeftLogical)
      rhs = b.CreateZExtOrTrunc(rhs, lhs->getType());
    llvm::Value* v = b.CreateBinOp(*op, lhs, rhs);
    if (auto* i = llvm::dyn_cast<llvm::Instruction>(v)) {
      if (llvm::isa<llvm::OverflowingBinaryOperator>(i)) {
        if (d.no_signed_wrap) i->setHasNoSignedWrap(true);
        if (d.no_unsigned_wrap) i->setHasNoUnsignedWrap(true);
      }
      if (llvm::isa<llvm::FPMathOperator>(i) && d.fast_math) {
        llvm::FastMathFlags flags;
        flags.setNoNaNs(d.fast_math & spv::FPFastMathModeNotNaNMask);
        flags.setNoInfs(d.fast_math & spv::FPFastMathModeNotInfMask);
        flags.setNoSignedZeros(d.fast_math & spv::FPFastMathModeNSZMask);
        flags.setAllowReciprocal(d.fast_math & spv::FPFastMathModeAllowRecipMask);
        if (d.fast_math & spv::FPFastMathModeFastMask) flags.setFast();
        i->setFastMathFlags(flags);
      }
    }
    return v;
  }
  if (auto predicate = compare_predicate(inst.opcode)) {
    if (llvm::CmpInst::isFPPredicate(*predicate))
      return b.CreateFCmp(*predicate, operand(0), operand(1));
    return b.CreateICmp(*predicate, operand(0), operand(1));
  }

  switch (inst.opcode) {
    case spv::OpNop:
    case spv::OpSelectionMerge:
    case spv::OpLoopMerge:
    case spv::OpLine:
    case spv::OpNoLine:
    case spv::OpLifetimeStart:
    case spv::OpLifetimeStop:
      return nullptr;
    case spv::OpUndef:
      return llvm::UndefValue::get(result);
    case spv::OpCopyObject:
      return operand(0);
    // SPIR-V 1.4.
    case spv::OpCopyLogical:
      return copy_logical(b, operand(0), result);
    case spv::OpPtrEqual:
    case spv::OpPtrNotEqual: {
      llvm::Value* x = operand(0);
      llvm::Value* y = b.CreatePointerBitCastOrAddrSpaceCast(operand(1), x->getType());
      return inst.opcode == spv::OpPtrEqual ? b.CreateICmpEQ(x, y) : b.CreateICmpNE(x, y);
    }
    case spv::OpPtrDiff: {
      // In elements of the pointee: the operands point into one array.
      llvm::Type* element = r.type(r.pointee(r.type_id_of(ops.at(0))));
      if (!element) throw ReaderError("OpPtrDiff of pointers of unknown type");
      llvm::Value* x = operand(0);
      llvm::Value* y = b.CreatePointerBitCastOrAddrSpaceCast(operand(1), x->getType());
      return b.CreateSExtOrTrunc(b.CreatePtrDiff(element, x, y), result);
    }
    // SPV_KHR_expect_assume (SPIRV-LLVM-Translator's __builtin_expect and __builtin_assume).
    case spv::OpExpectKHR:
      return operand(0);
    case spv::OpAssumeTrueKHR:
      return b.CreateAssumption(operand(0));
    case spv::OpSNegate:
      return b.CreateNeg(operand(0));
    case spv::OpFNegate:
      return b.CreateFNeg(operand(0));
    case spv::OpNot:
    case spv::OpLogicalNot:
      return b.CreateNot(operand(0));
    case spv::OpSelect:
      return b.CreateSelect(operand(0), operand(1), operand(2));
    case spv::OpSMod: {
      // The sign of the result is the divisor's.
      llvm::Value* a = operand(0);
      llvm::Value* m = operand(1);
      llvm::Value* rem = b.CreateSRem(a, m);
      llvm::Value* zero = llvm::Constant::getNullValue(rem->getType());
      llvm::Value* fix =
          b.CreateAnd(b.CreateICmpNE(rem, zero), b.CreateICmpSLT(b.CreateXor(rem, m), zero));
      return b.CreateSelect(fix, b.CreateAdd(rem, m), rem);
    }
    case spv::OpFMod: {
      llvm::Value* a = operand(0);
      llvm::Value* m = operand(1);
      llvm::Value* rem = b.CreateFRem(a, m);
      llvm::Value* zero = llvm::Constant::getNullValue(rem->getType());
      llvm::Value* fix =
          b.CreateAnd(b.CreateFCmpUNE(rem, zero),
                      b.CreateXor(b.CreateFCmpOLT(rem, zero), b.CreateFCmpOLT(m, zero)));
      return b.CreateSelect(fix, b.CreateFAdd(rem, m), rem);
    }
    case spv::OpVectorTimesScalar: {
      llvm::Value* v = operand(0);
      const unsigned n = llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements();
      return b.CreateFMul(v, b.CreateVectorSplat(n, operand(1)));
    }
    case spv::OpDot: {
      llvm::Value* product = b.CreateFMul(operand(0), operand(1));
      return b.CreateFAddReduce(llvm::ConstantFP::getNegativeZero(result), product);
    }
    case spv::OpAny:
      return b.CreateOrReduce(operand(0));
    case spv::OpAll:
      return b.CreateAndReduce(operand(0));
    case spv::OpIsNan:
      return fp_class(b, operand(0), llvm::fcNan);
    case spv::OpIsInf:
      return fp_class(b, operand(0), llvm::fcInf);
    case spv::OpIsFinite:
      return fp_class(b, operand(0), llvm::fcFinite);
    case spv::OpIsNormal:
      return fp_class(b, operand(0), llvm::fcNormal);
    case spv::OpSignBitSet: {
      llvm::Value* x = operand(0);
      llvm::Type* bits = x->getType()->getWithNewBitWidth(x->getType()->getScalarSizeInBits());
      llvm::Value* as_int = b.CreateBitCast(x, bits);
      return b.CreateICmpSLT(as_int, llvm::Constant::getNullValue(bits));
    }

    // Conversions: the default rounding of each (toward zero to integers, to nearest even to
    // floats) and no saturation are plain LLVM casts; anything else is the OpenCL C builtin.
    case spv::OpConvertFToU:
    case spv::OpConvertFToS:
      if (d.saturated || (d.rounding >= 0 && d.rounding != spv::FPRoundingModeRTZ))
        return r.conversion_call(inst, d, inst.opcode == spv::OpConvertFToS, true);
      return inst.opcode == spv::OpConvertFToU ? b.CreateFPToUI(operand(0), result)
                                               : b.CreateFPToSI(operand(0), result);
    case spv::OpConvertSToF:
    case spv::OpConvertUToF:
      if (d.rounding >= 0 && d.rounding != spv::FPRoundingModeRTE)
        return r.conversion_call(inst, d, true, inst.opcode == spv::OpConvertSToF);
      return inst.opcode == spv::OpConvertSToF ? b.CreateSIToFP(operand(0), result)
                                               : b.CreateUIToFP(operand(0), result);
    case spv::OpUConvert:
      if (d.saturated) return r.conversion_call(inst, d, false, false);
      return b.CreateZExtOrTrunc(operand(0), result);
    case spv::OpSConvert:
      if (d.saturated) return r.conversion_call(inst, d, true, true);
      return b.CreateSExtOrTrunc(operand(0), result);
    case spv::OpSatConvertSToU:
      return r.conversion_call(inst, d, false, true);
    case spv::OpSatConvertUToS:
      return r.conversion_call(inst, d, true, false);
    case spv::OpFConvert: {
      llvm::Value* x = operand(0);
      const bool narrowing = x->getType()->getScalarSizeInBits() > result->getScalarSizeInBits();
      if (narrowing && d.rounding >= 0 && d.rounding != spv::FPRoundingModeRTE)
        return r.conversion_call(inst, d, true, true);
      return b.CreateFPCast(x, result);
    }
    case spv::OpConvertPtrToU:
      return b.CreatePtrToInt(operand(0), result);
    case spv::OpConvertUToPtr:
      return b.CreateIntToPtr(operand(0), result);
    case spv::OpPtrCastToGeneric:
    case spv::OpGenericCastToPtr:
      return b.CreateAddrSpaceCast(operand(0), result);
    // OpenCL C's to_global/to_local/to_private: NULL unless the pointer points into the storage
    // class, which each target's __to_* (clang's names for them) tells.
    case spv::OpGenericCastToPtrExplicit: {
      const char* cast = nullptr;
      switch (ops.at(1)) {
        case spv::StorageClassCrossWorkgroup:
          cast = "__to_global";
          break;
        case spv::StorageClassWorkgroup:
          cast = "__to_local";
          break;
        case spv::StorageClassFunction:
          cast = "__to_private";
          break;
        default:
          throw ReaderError("OpGenericCastToPtrExplicit to storage class " +
                            std::to_string(ops.at(1)) + ", which OpenCL has no cast to");
      }
      return r.call_builtin(cast, result, {operand(0)}, false);
    }
    // The memory semantics of a generic pointer's memory: get_fence's flags (CLK_LOCAL_MEM_FENCE
    // 1, CLK_GLOBAL_MEM_FENCE 2) shifted onto WorkgroupMemory 0x100 and CrossWorkgroupMemory 0x200.
    case spv::OpGenericPtrMemSemantics: {
      llvm::Value* flags = r.call_builtin(r.target_builtin_name("_Z9get_fencePU3AS4v"),
                                          b.getInt32Ty(), {operand(0)}, false);
      return b.CreateZExtOrTrunc(b.CreateShl(b.CreateAnd(flags, 3), 8), result);
    }
    case spv::OpBitcast: {
      llvm::Value* x = operand(0);
      if (x->getType()->isPointerTy() && result->isIntegerTy()) return b.CreatePtrToInt(x, result);
      if (x->getType()->isIntegerTy() && result->isPointerTy()) return b.CreateIntToPtr(x, result);
      if (x->getType()->isPointerTy() && result->isPointerTy()) {
        // A pointer into a BuiltIn variable of CrossWorkgroup storage is one into its private
        // copy (Reader::value): it stays in the private address space.
        const uint32_t declared = r.storage_class(r.type_id_of(ops.at(0)));
        if (x->getType()->getPointerAddressSpace() != r.address_space(declared)) return x;
        return b.CreatePointerBitCastOrAddrSpaceCast(x, result);
      }
      return b.CreateBitCast(x, result);
    }

    // Composites.
    case spv::OpCompositeExtract: {
      llvm::Value* v = operand(0);
      for (size_t k = 1; k < ops.size(); ++k)
        v = v->getType()->isVectorTy() ? b.CreateExtractElement(v, ops[k])
                                       : b.CreateExtractValue(v, ops[k]);
      return v;
    }
    case spv::OpCompositeInsert:
      return insert_into(b, operand(1), std::vector<uint32_t>(ops.begin() + 2, ops.end()), 0,
                         operand(0));
    case spv::OpCompositeConstruct: {
      llvm::Value* v = llvm::PoisonValue::get(result);
      if (result->isVectorTy()) {
        unsigned at = 0;
        for (size_t k = 0; k < ops.size(); ++k) {
          llvm::Value* part = operand(k);
          auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(part->getType());
          const unsigned n = vector ? vector->getNumElements() : 1;
          for (unsigned e = 0; e < n; ++e) v = b.CreateInsertElement(v, lane(b, part, e), at++);
        }
        return v;
      }
      for (size_t k = 0; k < ops.size(); ++k)
        v = b.CreateInsertValue(v, operand(k), static_cast<unsigned>(k));
      return v;
    }
    case spv::OpVectorExtractDynamic:
      return b.CreateExtractElement(operand(0), operand(1));
    case spv::OpVectorInsertDynamic:
      return b.CreateInsertElement(operand(0), operand(1), operand(2));
    case spv::OpVectorShuffle:
      return shuffle(b, operand(0), operand(1), std::vector<uint32_t>(ops.begin() + 2, ops.end()));

    // Control flow.
    case spv::OpBranch:
      return b.CreateBr(llvm::cast<llvm::BasicBlock>(operand(0)));
    case spv::OpBranchConditional:
      return b.CreateCondBr(operand(0), llvm::cast<llvm::BasicBlock>(operand(1)),
                            llvm::cast<llvm::BasicBlock>(operand(2)));
    case spv::OpSwitch: {
      llvm::Value* selector = operand(0);
      const unsigned width = selector->getType()->getIntegerBitWidth();
      const size_t words = width > 32 ? 2 : 1;
      auto* s = b.CreateSwitch(selector, llvm::cast<llvm::BasicBlock>(operand(1)));
      for (size_t k = 2; k + words < ops.size() + 1; k += words + 1) {
        uint64_t literal = ops[k];
        if (words == 2) literal |= uint64_t(ops[k + 1]) << 32;
        s->addCase(
            llvm::ConstantInt::get(llvm::cast<llvm::IntegerType>(selector->getType()), literal),
            llvm::cast<llvm::BasicBlock>(operand(k + words)));
      }
      return s;
    }
    case spv::OpReturn:
      return b.CreateRetVoid();
    case spv::OpReturnValue:
      return b.CreateRet(operand(0));
    case spv::OpUnreachable:
      return b.CreateUnreachable();
    case spv::OpFunctionCall: {
      auto* callee = llvm::dyn_cast<llvm::Function>(operand(0));
      if (!callee) throw ReaderError("OpFunctionCall of something not a function");
      std::vector<llvm::Value*> args;
      for (size_t k = 1; k < ops.size(); ++k) args.push_back(operand(k));
      return b.CreateCall(callee, args);
    }
    case spv::OpExtInst:
      return r.extended_instruction(inst);
    default:
      throw ReaderError("unsupported instruction " + opcode_name(inst.opcode));
  }
}

}  // namespace manifold::compiler::spirv
