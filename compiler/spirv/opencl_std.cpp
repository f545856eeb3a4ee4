// OpenCL.std extended instructions and conversions with rounding or saturation, as calls of the
// OpenCL C builtins the target's libraries define, by the names clang mangles them with for that
// target (the CPU library: address spaces as CLglobal...; libclc on NVPTX: AS1/AS3/AS4, generic
// unqualified; the SPIR-V target: AS1 to AS4).
#include <llvm/IR/Constants.h>
#include <spirv/unified1/OpenCL.std.h>

#include <spirv/unified1/spirv.hpp>

#include "compiler/spirv/instructions.h"
#include "compiler/spirv/names.h"
#include "compiler/spirv/reader_impl.h"

namespace manifold::compiler::spirv {
namespace {

std::string scalar_code(llvm::Type* t, bool is_signed) {
  if (t->isHalfTy()) return "Dh";
  if (t->isFloatTy()) return "f";
  if (t->isDoubleTy()) return "d";
  switch (t->getIntegerBitWidth()) {
    case 1:
      return "b";
    case 8:
      return is_signed ? "c" : "h";
    case 16:
      return is_signed ? "s" : "t";
    case 32:
      return is_signed ? "i" : "j";
    default:
      return is_signed ? "l" : "m";
  }
}

std::string scalar_name(llvm::Type* t, bool is_signed) {
  if (t->isHalfTy()) return "half";
  if (t->isFloatTy()) return "float";
  if (t->isDoubleTy()) return "double";
  const char* names[] = {"char", "short", "int", "long"};
  const unsigned width = t->getIntegerBitWidth();
  const char* base = names[width == 8 ? 0 : width == 16 ? 1 : width == 32 ? 2 : 3];
  return std::string(is_signed ? "" : "u") + base;
}

std::string rounding_suffix(uint32_t mode) {
  switch (mode) {
    case spv::FPRoundingModeRTE:
      return "_rte";
    case spv::FPRoundingModeRTZ:
      return "_rtz";
    case spv::FPRoundingModeRTP:
      return "_rtp";
    case spv::FPRoundingModeRTN:
      return "_rtn";
    default:
      throw ReaderError("unknown rounding mode " + std::to_string(mode));
  }
}

}  // namespace

std::string with_length(const std::string& name) {
  return "_Z" + std::to_string(name.size()) + name;
}

std::string mangle_id(const Reader& r, uint32_t type_id, bool is_signed,
                      std::vector<std::string>& subs, bool pointee_const) {
  llvm::Type* t = r.type(type_id);
  auto substitute = [&](const std::string& spelled) -> std::string {
    for (size_t k = 0; k < subs.size(); ++k)
      if (subs[k] == spelled) return k == 0 ? "S_" : "S" + std::to_string(k - 1) + "_";
    subs.push_back(spelled);
    return spelled;
  };
  // Opaque OpenCL types: pointers to LLVM, named types (substitution candidates) to the mangling.
  if (const Instruction* def = r.def(type_id)) {
    if (def->opcode == spv::OpTypeEvent) return substitute("9ocl_event");
    if (def->opcode == spv::OpTypeSampler) return substitute("11ocl_sampler");
    if (def->opcode == spv::OpTypeImage) {
      const std::string access = r.image_access(type_id);
      const std::string name = "ocl_" + r.image_type_name(type_id) + "_" +
                               (access == "write_only"   ? "wo"
                                : access == "read_write" ? "rw"
                                                         : "ro");
      return substitute(std::to_string(name.size()) + name);
    }
  }
  if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(t))
    return substitute("Dv" + std::to_string(v->getNumElements()) + "_" +
                      scalar_code(v->getElementType(), is_signed));
  if (t->isPointerTy()) {
    const uint32_t storage = r.storage_class(type_id);
    std::string qualifier;
    if (r.nvptx_ || r.amdgpu_ || r.spirv_target_) {
      const unsigned as = r.address_space(storage);
      if (as != 0) qualifier = "U3AS" + std::to_string(as);
    } else {
      switch (storage) {
        case spv::StorageClassCrossWorkgroup:
          qualifier = "U8CLglobal";
          break;
        case spv::StorageClassWorkgroup:
          qualifier = "U7CLlocal";
          break;
        case spv::StorageClassUniformConstant:
          qualifier = "U10CLconstant";
          break;
        case spv::StorageClassGeneric:
          qualifier = "U9CLgeneric";
          break;
        default:
          qualifier = "U9CLprivate";
          break;
      }
    }
    std::string pointee = mangle_id(r, r.pointee(type_id), is_signed, subs, false);
    std::string qualified = qualifier + (pointee_const ? "K" : "") + pointee;
    if (qualified != pointee) qualified = substitute(qualified);
    return "P" + qualified;
  }
  return scalar_code(t, is_signed);
}

llvm::CallInst* Reader::call_builtin(const std::string& mangled, llvm::Type* result,
                                     llvm::ArrayRef<llvm::Value*> args, bool pure) {
  std::vector<llvm::Type*> params;
  for (llvm::Value* a : args) params.push_back(a->getType());
  auto* type = llvm::FunctionType::get(result, params, false);
  llvm::FunctionCallee callee = module_->getOrInsertFunction(mangled, type);
  auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee());
  if (!f || f->getFunctionType() != type)
    throw ReaderError("builtin " + mangled + " used with two different signatures");
  f->addFnAttr(llvm::Attribute::NoUnwind);
  if (pure) {
    f->setDoesNotAccessMemory();
    f->addFnAttr(llvm::Attribute::WillReturn);
  }
  return builder_->CreateCall(callee, args);
}

llvm::Value* Reader::conversion_call(const Instruction& inst, const Decorations& d, bool dst_signed,
                                     bool src_signed) {
  llvm::Type* result = type(inst.type);
  llvm::Value* source = value(inst.operands[0]);
  if (!source) throw ReaderError("conversion of an undefined value");
  std::string name = "convert_" + scalar_name(result->getScalarType(), dst_signed);
  if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(result))
    name += std::to_string(v->getNumElements());
  if (d.saturated) name += "_sat";
  if (d.rounding >= 0) name += rounding_suffix(static_cast<uint32_t>(d.rounding));
  std::vector<std::string> subs;
  const std::string mangled =
      with_length(name) + mangle_id(*this, type_id_of(inst.operands[0]), src_signed, subs, false);
  return call_builtin(mangled, result, {source}, true);
}

// OpenCL.std printf is a call of OpenCL C's printf, which each target pipeline lowers as it
// lowers the frontend's (the CPU: a call into the runtime; NVPTX: vprintf). The format is a
// pointer to the UniformConstant string, possibly through a cast or an access chain; the other
// operands are passed as they come, vectors whole.
llvm::Value* Reader::printf_call(llvm::ArrayRef<llvm::Value*> args, llvm::Type* result) {
  if (args.empty() || !args[0]->getType()->isPointerTy())
    throw ReaderError("OpenCL.std printf without a format pointer");
  if (!result->isIntegerTy(32)) throw ReaderError("OpenCL.std printf must return a 32-bit int");
  auto* type = llvm::FunctionType::get(result, {args[0]->getType()}, /*isVarArg=*/true);
  llvm::FunctionCallee callee = module_->getOrInsertFunction("printf", type);
  auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee());
  if (!f || f->getFunctionType() != type)
    throw ReaderError("OpenCL.std printf with formats in two address spaces");
  f->addFnAttr(llvm::Attribute::NoUnwind);
  return builder_->CreateCall(callee, args);
}

llvm::Value* Reader::extended_instruction(const Instruction& inst) {
  llvm::IRBuilder<>& b = *builder_;
  const auto& ops = inst.operands;
  if (ignored_instruction_sets_.count(ops[0])) return nullptr;
  if (ops[0] != opencl_std_) throw ReaderError("extended instruction of an unknown set");
  const uint32_t number = ops[1];
  std::string name = opencl_std_name(number);
  if (name.empty()) throw ReaderError("unknown OpenCL.std instruction " + std::to_string(number));
  // Operands that are literals of the instruction (n, a rounding mode) rather than ids.
  const bool trailing_literal =
      number == OpenCLLIB::Vloadn || number == OpenCLLIB::Vload_halfn ||
      number == OpenCLLIB::Vloada_halfn || number == OpenCLLIB::Vstore_half_r ||
      number == OpenCLLIB::Vstore_halfn_r || number == OpenCLLIB::Vstorea_halfn_r;
  const size_t id_end = ops.size() - (trailing_literal ? 1 : 0);
  const uint32_t literal = trailing_literal ? ops.back() : 0;
  std::vector<llvm::Value*> args;
  std::vector<uint32_t> arg_types;
  for (size_t k = 2; k < id_end; ++k) {
    llvm::Value* v = value(ops[k]);
    if (!v) throw ReaderError("operand of OpenCL.std " + name + " is undefined");
    args.push_back(v);
    arg_types.push_back(type_id_of(ops[k]));
  }
  llvm::Type* result = type(inst.type);

  switch (number) {
    case OpenCLLIB::Vloadn:
    case OpenCLLIB::Vstoren: {
      // vloadn/vstoren: n elements from p + offset * n, aligned as one element.
      const bool load = number == OpenCLLIB::Vloadn;
      llvm::Value* offset = args[load ? 0 : 1];
      llvm::Value* pointer = args[load ? 1 : 2];
      llvm::Type* vector = load ? result : args[0]->getType();
      auto* fixed = llvm::cast<llvm::FixedVectorType>(vector);
      llvm::Type* element = fixed->getElementType();
      llvm::Value* first =
          b.CreateMul(offset, llvm::ConstantInt::get(offset->getType(), fixed->getNumElements()));
      llvm::Value* at = b.CreateGEP(element, pointer, first);
      const llvm::Align align = module_->getDataLayout().getABITypeAlign(element);
      if (load) return b.CreateAlignedLoad(vector, at, align);
      return b.CreateAlignedStore(args[0], at, align);
    }
    case OpenCLLIB::Prefetch:
      return nullptr;  // a hint
    case OpenCLLIB::Printf:
      return printf_call(args, result);
    default:
      break;
  }

  bool is_signed = true;
  if (name.rfind("s_", 0) == 0) {
    name = name.substr(2);
  } else if (name.rfind("u_", 0) == 0) {
    name = name.substr(2);
    is_signed = false;
  }
  if (name == "fclamp") name = "clamp";
  if (name == "fmax_common") name = "max";
  if (name == "fmin_common") name = "min";
  const bool memory = name.find("vload") == 0 || name.find("vstore") == 0;
  // The vector length and rounding mode of the half conversions are part of the builtin name.
  auto lanes = [&](llvm::Value* v) {
    auto* f = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
    return f ? std::to_string(f->getNumElements()) : std::string();
  };
  switch (number) {
    case OpenCLLIB::Vload_halfn:
      name = "vload_half" + std::to_string(literal);
      break;
    case OpenCLLIB::Vloada_halfn:
      name = "vloada_half" + std::to_string(literal);
      break;
    case OpenCLLIB::Vstore_halfn:
      name = "vstore_half" + lanes(args[0]);
      break;
    case OpenCLLIB::Vstorea_halfn:
      name = "vstorea_half" + lanes(args[0]);
      break;
    case OpenCLLIB::Vstore_half_r:
      name = "vstore_half" + rounding_suffix(literal);
      break;
    case OpenCLLIB::Vstore_halfn_r:
      name = "vstore_half" + lanes(args[0]) + rounding_suffix(literal);
      break;
    case OpenCLLIB::Vstorea_halfn_r:
      name = "vstorea_half" + lanes(args[0]) + rounding_suffix(literal);
      break;
    default:
      break;
  }
  const size_t count = args.size();
  std::vector<std::string> subs;
  std::string mangled = with_length(name);
  bool pure = true;
  for (size_t k = 0; k < count; ++k) {
    bool sign = is_signed && !memory;
    if (name == "nan" || ((name == "shuffle" || name == "shuffle2") && k + 1 == count) ||
        (name == "upsample" && k == 1))
      sign = false;
    const bool is_pointer = args[k]->getType()->isPointerTy();
    pure = pure && !is_pointer;
    mangled += mangle_id(*this, arg_types[k], sign, subs, is_pointer && name.find("vload") == 0);
  }
  return call_builtin(mangled, result, args, pure);
}

}  // namespace manifold::compiler::spirv
