// Types, constants (specialization constants with the values the application set) and
// module-scope variables.
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/GlobalVariable.h>

#include <cstring>
#include <spirv/unified1/spirv.hpp>

#include "compiler/spirv/instructions.h"
#include "compiler/spirv/names.h"
#include "compiler/spirv/reader_impl.h"

namespace manifold::compiler::spirv {

unsigned Reader::address_space(uint32_t storage_class) const {
  // The address spaces the frontend gives each target (compiler/frontend.h): clang's fake map
  // on the CPU, NVPTX's own on CUDA devices (generic is its address space 0), AMDGPU's on AMD
  // GPUs (generic 0, private 5: allocas live there).
  switch (storage_class) {
    case spv::StorageClassCrossWorkgroup:
      return 1;
    case spv::StorageClassUniformConstant:
      return nvptx_ || amdgpu_ ? 4 : 2;
    case spv::StorageClassWorkgroup:
      return 3;
    case spv::StorageClassGeneric:
      return nvptx_ || amdgpu_ ? 0 : 4;
    default:  // Function, Private, Input
      return amdgpu_ ? 5 : 0;
  }
}

unsigned Reader::spir_address_space(uint32_t storage_class) {
  switch (storage_class) {
    case spv::StorageClassCrossWorkgroup:
      return 1;
    case spv::StorageClassUniformConstant:
      return 2;
    case spv::StorageClassWorkgroup:
      return 3;
    case spv::StorageClassGeneric:
      return 4;
    default:
      return 0;
  }
}

uint32_t Reader::pointee(uint32_t pointer_type) const {
  auto it = pointers_.find(pointer_type);
  return it == pointers_.end() ? 0 : it->second.second;
}

uint32_t Reader::storage_class(uint32_t pointer_type) const {
  auto it = pointers_.find(pointer_type);
  return it == pointers_.end() ? 0 : it->second.first;
}

bool Reader::translate_type(const Instruction& inst) {
  const auto& ops = inst.operands;
  llvm::Type* made = nullptr;
  auto image_pointer = [&] {
    return llvm::PointerType::get(context_, address_space(spv::StorageClassCrossWorkgroup));
  };
  auto sampler_pointer = [&] {
    return llvm::PointerType::get(context_, address_space(spv::StorageClassUniformConstant));
  };
  switch (inst.opcode) {
    case spv::OpTypeVoid:
      made = llvm::Type::getVoidTy(context_);
      break;
    case spv::OpTypeBool:
      made = llvm::Type::getInt1Ty(context_);
      break;
    case spv::OpTypeInt:
      made = llvm::Type::getIntNTy(context_, ops[0]);
      break;
    case spv::OpTypeFloat:
      if (ops[0] == 16)
        made = llvm::Type::getHalfTy(context_);
      else if (ops[0] == 32)
        made = llvm::Type::getFloatTy(context_);
      else if (ops[0] == 64)
        made = llvm::Type::getDoubleTy(context_);
      break;
    case spv::OpTypeVector:
      if (type(ops[0])) made = llvm::FixedVectorType::get(type(ops[0]), ops[1]);
      break;
    case spv::OpTypeArray: {
      auto* length = llvm::dyn_cast_or_null<llvm::ConstantInt>(values_[ops[1]]);
      if (!length) return fail("array length is not a constant");
      if (type(ops[0])) made = llvm::ArrayType::get(type(ops[0]), length->getZExtValue());
      break;
    }
    case spv::OpTypeRuntimeArray:
      if (type(ops[0])) made = llvm::ArrayType::get(type(ops[0]), 0);
      break;
    case spv::OpTypeStruct: {
      std::vector<llvm::Type*> members;
      for (uint32_t member : ops) {
        if (!type(member)) return fail("struct member of unknown type");
        members.push_back(type(member));
      }
      std::string name = name_of(inst.id);
      made = llvm::StructType::create(context_, members, name.empty() ? "spirv.struct" : name,
                                      decorations(inst.id).packed);
      break;
    }
    case spv::OpTypeImage:
      // A pointer to the image's descriptor (compiler/image_abi.h), as clang gives image types.
      made = image_pointer();
      break;
    case spv::OpTypeSampler:
      // Its CLK_* bits as a pointer's value (compiler/builtins/image_glue.ll).
      made = sampler_pointer();
      break;
    case spv::OpTypeSampledImage:
      // An image with the sampler to read it through (OpSampledImage makes one).
      made = llvm::StructType::get(context_, {image_pointer(), sampler_pointer()});
      break;
    case spv::OpTypeEvent:
      // event_t as OpenCL C builtins take it (a pointer; the work-group copies complete at the
      // wait, so it carries nothing).
      made = llvm::PointerType::get(context_, 0);
      break;
    case spv::OpTypeOpaque:
      // Only ever a pointee (kernels take pointers to types they never look into): a struct
      // without a body.
      made = llvm::StructType::create(context_, "spirv.opaque." + inst.string_at(0));
      break;
    case spv::OpTypeForwardPointer:
      types_[ops[0]] = llvm::PointerType::get(context_, address_space(ops[1]));
      return true;
    case spv::OpTypePointer:
      pointers_[inst.id] = {ops[0], ops[1]};
      made = llvm::PointerType::get(context_, address_space(ops[0]));
      break;
    case spv::OpTypeFunction: {
      std::vector<llvm::Type*> params;
      for (size_t k = 1; k < ops.size(); ++k) {
        if (!type(ops[k])) return fail("function parameter of unknown type");
        params.push_back(type(ops[k]));
      }
      if (!type(ops[0])) return fail("function result of unknown type");
      made = llvm::FunctionType::get(type(ops[0]), params, false);
      break;
    }
    default:
      return fail("unsupported type " + opcode_name(inst.opcode));
  }
  if (!made) return fail("unsupported operand of " + opcode_name(inst.opcode));
  types_[inst.id] = made;
  return true;
}

namespace {

// A scalar constant from its literal words (little end first), or from a specialization
// value's bytes.
llvm::Constant* scalar_constant(llvm::Type* type, const uint32_t* words, size_t count) {
  uint64_t bits = words[0];
  if (count > 1) bits |= uint64_t(words[1]) << 32;
  if (type->isIntegerTy()) return llvm::ConstantInt::get(type, bits);
  const unsigned width = type->getPrimitiveSizeInBits();
  return llvm::ConstantFP::get(type->getContext(),
                               llvm::APFloat(type->getFltSemantics(), llvm::APInt(width, bits)));
}

}  // namespace

bool Reader::translate_constant(const Instruction& inst) {
  llvm::Type* t = type(inst.type);
  if (!t) return fail("constant of unknown type");
  const auto& ops = inst.operands;
  const Decorations& d = decorations(inst.id);
  // A specialization constant the application set (clSetProgramSpecializationConstant).
  const std::vector<uint8_t>* spec = nullptr;
  if (d.spec_id >= 0) {
    auto it = spec_values_.find(static_cast<uint32_t>(d.spec_id));
    if (it != spec_values_.end()) spec = &it->second;
  }
  llvm::Constant* made = nullptr;
  switch (inst.opcode) {
    case spv::OpConstantTrue:
    case spv::OpConstantFalse:
    case spv::OpSpecConstantTrue:
    case spv::OpSpecConstantFalse: {
      bool value = inst.opcode == spv::OpConstantTrue || inst.opcode == spv::OpSpecConstantTrue;
      if (spec && !spec->empty()) value = (*spec)[0] != 0;
      made = llvm::ConstantInt::getBool(context_, value);
      break;
    }
    case spv::OpConstant:
    case spv::OpSpecConstant: {
      uint32_t words[2] = {ops[0], ops.size() > 1 ? ops[1] : 0};
      if (spec) {
        words[0] = words[1] = 0;
        std::memcpy(words, spec->data(), std::min(spec->size(), sizeof(words)));
      }
      made = scalar_constant(t, words, spec ? 2 : ops.size());
      break;
    }
    case spv::OpConstantComposite:
    case spv::OpSpecConstantComposite: {
      std::vector<llvm::Constant*> parts;
      for (uint32_t part : ops) {
        auto* c = llvm::dyn_cast_or_null<llvm::Constant>(values_[part]);
        if (!c) return fail("composite constant of a non-constant part");
        parts.push_back(c);
      }
      if (t->isVectorTy())
        made = llvm::ConstantVector::get(parts);
      else if (auto* array = llvm::dyn_cast<llvm::ArrayType>(t))
        made = llvm::ConstantArray::get(array, parts);
      else if (auto* s = llvm::dyn_cast<llvm::StructType>(t))
        made = llvm::ConstantStruct::get(s, parts);
      break;
    }
    case spv::OpConstantNull:
      made = llvm::Constant::getNullValue(t);
      break;
    case spv::OpConstantSampler: {
      // Addressing mode, normalized coordinates, filter mode: the CLK_* bits an OpenCL C sampler
      // initializer has (CLK_ADDRESS_* = 2 x SPIR-V's mode, CLK_FILTER_NEAREST 0x10, LINEAR 0x20).
      if (ops.size() < 3) return fail("OpConstantSampler without its three operands");
      const uint64_t bits = (ops[1] ? 1u : 0u) | (ops[0] * 2) | (ops[2] ? 0x20u : 0x10u);
      made = llvm::ConstantExpr::getIntToPtr(
          llvm::ConstantInt::get(llvm::Type::getInt64Ty(context_), bits), t);
      break;
    }
    case spv::OpSpecConstantOp:
      try {
        made = fold_spec_constant_op(inst);
      } catch (const ReaderError& e) {
        return fail(std::string(e.what()) + " (in OpSpecConstantOp)");
      }
      if (!made)
        return fail("OpSpecConstantOp " + opcode_name(ops.at(0)) + " does not fold to a constant");
      break;
    case spv::OpUndef:
      made = llvm::UndefValue::get(t);
      break;
    default:
      return fail("unsupported constant instruction " + opcode_name(inst.opcode));
  }
  if (!made) return fail("unsupported constant of " + opcode_name(inst.opcode));
  values_[inst.id] = made;
  return true;
}

llvm::Constant* Reader::fold_spec_constant_op(const Instruction& inst) {
  if (inst.operands.empty()) throw ReaderError("OpSpecConstantOp without an operation");
  Instruction operation;
  operation.opcode = inst.operands[0];
  operation.type = inst.type;
  operation.id = inst.id;
  operation.operands.assign(inst.operands.begin() + 1, inst.operands.end());
  if (!constant_scratch_) {
    constant_scratch_ =
        llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context_), false),
                               llvm::GlobalValue::InternalLinkage, "spirv.constants", *module_);
    llvm::BasicBlock::Create(context_, "fold", constant_scratch_);
  }
  // Module-scope constants come before any function body: no builder is in use.
  std::unique_ptr<llvm::IRBuilder<>> saved = std::move(builder_);
  builder_ = std::make_unique<llvm::IRBuilder<>>(&constant_scratch_->getEntryBlock());
  llvm::Value* v = nullptr;
  try {
    v = translate_instruction(*this, operation);
  } catch (...) {
    builder_ = std::move(saved);
    throw;
  }
  builder_ = std::move(saved);
  return llvm::dyn_cast_or_null<llvm::Constant>(v);
}

bool Reader::translate_global_variable(const Instruction& inst) {
  const uint32_t storage = inst.operands[0];
  const Decorations& d = decorations(inst.id);
  // A BuiltIn is read through a private copy of its value (Reader::value). Besides Input
  // variables, SPIR-V made from LLVM IR that declares the builtin as a global (addrspace(1))
  // carries it in CrossWorkgroup storage, imported by its `__spirv_BuiltIn*` name.
  if (const int builtin = builtin_of_variable(d); builtin >= 0) {
    builtin_variables_[inst.id] = builtin;
    return true;
  }
  if (storage == spv::StorageClassInput)
    return fail("an Input variable without a BuiltIn decoration");
  if (storage != spv::StorageClassCrossWorkgroup && storage != spv::StorageClassUniformConstant &&
      storage != spv::StorageClassWorkgroup && storage != spv::StorageClassPrivate)
    return fail("unsupported storage class " + std::to_string(storage) +
                " of a module-scope variable");
  llvm::Type* value_type = type(pointee(inst.type));
  if (!value_type) return fail("variable of unknown type");
  llvm::Constant* initializer = nullptr;
  if (inst.operands.size() > 1) {
    initializer = llvm::dyn_cast_or_null<llvm::Constant>(values_[inst.operands[1]]);
    if (!initializer) return fail("variable initializer is not a constant");
  }
  const bool imported = d.linkage == 1;
  if (!initializer && !imported)
    initializer = storage == spv::StorageClassWorkgroup
                      ? static_cast<llvm::Constant*>(llvm::UndefValue::get(value_type))
                      : llvm::Constant::getNullValue(value_type);
  std::string name = d.linkage >= 0 ? d.linkage_name : name_of(inst.id);
  if (name.empty()) name = "spirv.variable";
  auto linkage =
      d.linkage >= 0 ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage;
  auto* g = new llvm::GlobalVariable(*module_, value_type,
                                     d.is_constant || storage == spv::StorageClassUniformConstant,
                                     linkage, imported ? nullptr : initializer, name, nullptr,
                                     llvm::GlobalValue::NotThreadLocal, address_space(storage));
  if (d.alignment) g->setAlignment(llvm::Align(d.alignment));
  values_[inst.id] = g;
  return true;
}

std::string Reader::image_type_name(uint32_t image_type) const {
  const Instruction* t = def(image_type);
  if (!t || t->opcode != spv::OpTypeImage || t->operands.size() < 6) return "image";
  // Sampled type, Dim, Depth, Arrayed, MS, Sampled[, format, access qualifier].
  std::string name = "image";
  switch (t->operands[1]) {
    case spv::Dim1D:
      name += "1d";
      break;
    case spv::Dim2D:
      name += "2d";
      break;
    case spv::Dim3D:
      name += "3d";
      break;
    case spv::DimBuffer:
      name += "1d_buffer";
      break;
    default:
      name += "_unknown";
      break;
  }
  if (t->operands[3]) name += "_array";
  if (t->operands[2] == 1) name += "_depth";
  return name;
}

std::string Reader::image_access(uint32_t image_type) const {
  const Instruction* t = def(image_type);
  const uint32_t access =
      t && t->operands.size() > 7 ? t->operands[7] : uint32_t{spv::AccessQualifierReadOnly};
  return access == spv::AccessQualifierWriteOnly   ? "write_only"
         : access == spv::AccessQualifierReadWrite ? "read_write"
                                                   : "read_only";
}

std::string Reader::opencl_type_name(uint32_t type_id) const {
  const Instruction* t = def(type_id);
  if (!t) return "unknown";
  switch (t->opcode) {
    case spv::OpTypeVoid:
      return "void";
    case spv::OpTypeBool:
      return "bool";
    case spv::OpTypeInt:
      switch (t->operands[0]) {
        case 8:
          return "char";
        case 16:
          return "short";
        case 32:
          return "int";
        default:
          return "long";
      }
    case spv::OpTypeFloat:
      return t->operands[0] == 16 ? "half" : t->operands[0] == 32 ? "float" : "double";
    case spv::OpTypeVector:
      return opencl_type_name(t->operands[0]) + std::to_string(t->operands[1]);
    case spv::OpTypePointer:
      return opencl_type_name(t->operands[1]) + "*";
    case spv::OpTypeStruct: {
      std::string name = name_of(type_id);
      if (name.rfind("struct.", 0) == 0) name = name.substr(7);
      return "struct " + (name.empty() ? std::string("anonymous") : name);
    }
    case spv::OpTypeArray:
      return opencl_type_name(t->operands[0]) + "[]";
    case spv::OpTypeImage:
      return image_type_name(type_id) + "_t";
    case spv::OpTypeSampler:
      return "sampler_t";
    default:
      return "unknown";
  }
}

}  // namespace manifold::compiler::spirv
