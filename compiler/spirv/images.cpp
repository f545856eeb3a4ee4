// Images and samplers (ImageBasic and friends): OpSampledImage, sampled and plain reads, writes
// and the size and format queries, as calls of the OpenCL C image builtins of the target's
// library (read_imagef, write_imageui, get_image_width, ...). Images are pointers to their
// descriptors, samplers their CLK_* bits (compiler/image_abi.h).
#include <spirv/unified1/spirv.hpp>

#include "compiler/spirv/instructions.h"
#include "compiler/spirv/names.h"
#include "compiler/spirv/reader_impl.h"

namespace manifold::compiler::spirv {
namespace {

// SPIR-V's image channel orders and data types are OpenCL's CL_* values less these (the SPIR-V
// environment spec's tables 2.1 and 2.2 list them in the same order).
constexpr int kChannelOrderBase = 0x10B0;     // CL_R
constexpr int kChannelDataTypeBase = 0x10D0;  // CL_SNORM_INT8
constexpr int kUnsignedInt8 = 0x10DA, kUnsignedInt32 = 0x10DC;

// f, i: the suffix of read_image* / write_image* for a texel type (int4 or float4).
const char* texel_suffix(llvm::Type* texel) {
  return texel->getScalarType()->isFloatingPointTy() ? "f" : "i";
}

}  // namespace

llvm::Value* translate_image_instruction(Reader& r, const Instruction& inst, bool* handled) {
  llvm::IRBuilder<>& b = *r.builder_;
  auto operand = [&](size_t k) { return operand_value(r, inst, k); };
  auto type_of = [&](size_t k) { return r.type_id_of(inst.operands.at(k)); };
  // The builtin `base` called with `args`, mangled by their SPIR-V types `types` (the last one
  // unsigned with `unsigned_last`: uint4 texels).
  auto builtin = [&](const std::string& base, llvm::Type* result,
                     const std::vector<llvm::Value*>& args, const std::vector<uint32_t>& types,
                     bool pure, bool unsigned_last = false) {
    std::vector<std::string> subs;
    std::string name = with_length(base);
    for (size_t k = 0; k < types.size(); ++k)
      name += mangle_id(r, types[k], !(unsigned_last && k + 1 == types.size()), subs, false);
    return r.call_builtin(name, result, args, pure);
  };

  switch (inst.opcode) {
    case spv::OpSampledImage: {
      llvm::Value* pair = llvm::UndefValue::get(r.type(inst.type));
      pair = b.CreateInsertValue(pair, operand(0), 0);
      return b.CreateInsertValue(pair, operand(1), 1);
    }
    case spv::OpImageSampleExplicitLod: {
      // Sampled image, coordinate, Lod 0 (OpenCL images have one level without mipmaps).
      const Instruction* sampled = r.def(type_of(0));
      if (!sampled || sampled->operands.empty())
        throw ReaderError("OpImageSampleExplicitLod of something that is not a sampled image");
      const uint32_t image_type = sampled->operands[0];
      llvm::Value* pair = operand(0);
      llvm::Value* image = b.CreateExtractValue(pair, 0);
      llvm::Value* sampler = b.CreateExtractValue(pair, 1);
      llvm::Type* result = r.type(inst.type);
      // The sampler has no type id here (OpTypeSampledImage names only the image): spelled out,
      // a substitution candidate after the image's.
      std::vector<std::string> subs;
      std::string name = with_length(std::string("read_image") + texel_suffix(result)) +
                         mangle_id(r, image_type, true, subs, false) + "11ocl_sampler";
      subs.push_back("11ocl_sampler");
      name += mangle_id(r, type_of(1), true, subs, false);
      return r.call_builtin(name, result, {image, sampler, operand(1)}, false);
    }
    case spv::OpImageRead: {
      llvm::Type* result = r.type(inst.type);
      return builtin(std::string("read_image") + texel_suffix(result), result,
                     {operand(0), operand(1)}, {type_of(0), type_of(1)}, false);
    }
    case spv::OpImageWrite: {
      // Integer texels: write_imagei for the signed formats, write_imageui for the unsigned ones;
      // SPIR-V before 1.4 does not say which, so the image's data type decides when it runs.
      llvm::Value* image = operand(0);
      llvm::Value* coordinate = operand(1);
      llvm::Value* texel = operand(2);
      const std::vector<uint32_t> types = {type_of(0), type_of(1), type_of(2)};
      if (texel->getType()->getScalarType()->isFloatingPointTy())
        return builtin("write_imagef", b.getVoidTy(), {image, coordinate, texel}, types, false);
      llvm::Value* data_type =
          builtin("get_image_channel_data_type", b.getInt32Ty(), {image}, {type_of(0)}, true);
      llvm::Value* is_unsigned =
          b.CreateAnd(b.CreateICmpSGE(data_type, b.getInt32(kUnsignedInt8)),
                      b.CreateICmpSLE(data_type, b.getInt32(kUnsignedInt32)));
      llvm::Function* function = b.GetInsertBlock()->getParent();
      auto* unsigned_block = llvm::BasicBlock::Create(r.context_, "write_imageui", function);
      auto* signed_block = llvm::BasicBlock::Create(r.context_, "write_imagei", function);
      auto* done = llvm::BasicBlock::Create(r.context_, "written", function);
      b.CreateCondBr(is_unsigned, unsigned_block, signed_block);
      b.SetInsertPoint(unsigned_block);
      builtin("write_imageui", b.getVoidTy(), {image, coordinate, texel}, types, false, true);
      b.CreateBr(done);
      b.SetInsertPoint(signed_block);
      builtin("write_imagei", b.getVoidTy(), {image, coordinate, texel}, types, false);
      b.CreateBr(done);
      b.SetInsertPoint(done);
      return nullptr;
    }
    case spv::OpImageQuerySizeLod:
    case spv::OpImageQuerySize: {
      // Width, then height (2D, 3D, 2D arrays), depth (3D) and the layer count (arrays).
      const uint32_t image_type = type_of(0);
      const Instruction* t = r.def(image_type);
      if (!t || t->operands.size() < 4) throw ReaderError("size query of a non-image");
      const uint32_t dim = t->operands[1];
      const bool arrayed = t->operands[3] != 0;
      llvm::Value* image = operand(0);
      std::vector<llvm::Value*> sizes;
      auto query = [&](const char* what, llvm::Type* type) {
        return builtin(what, type, {image}, {image_type}, true);
      };
      sizes.push_back(query("get_image_width", b.getInt32Ty()));
      if (dim == spv::Dim2D || dim == spv::Dim3D)
        sizes.push_back(query("get_image_height", b.getInt32Ty()));
      if (dim == spv::Dim3D) sizes.push_back(query("get_image_depth", b.getInt32Ty()));
      if (arrayed)
        sizes.push_back(
            query("get_image_array_size", r.physical32_ ? b.getInt32Ty() : b.getInt64Ty()));
      llvm::Type* result = r.type(inst.type);
      llvm::Type* element = result->getScalarType();
      auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(result);
      if (!vector) return b.CreateZExtOrTrunc(sizes[0], element);
      llvm::Value* out = llvm::UndefValue::get(result);
      for (unsigned k = 0; k < vector->getNumElements() && k < sizes.size(); ++k)
        out = b.CreateInsertElement(out, b.CreateZExtOrTrunc(sizes[k], element), k);
      return out;
    }
    case spv::OpImageQueryFormat:
    case spv::OpImageQueryOrder: {
      const bool format = inst.opcode == spv::OpImageQueryFormat;
      llvm::Value* cl_value =
          builtin(format ? "get_image_channel_data_type" : "get_image_channel_order",
                  b.getInt32Ty(), {operand(0)}, {type_of(0)}, true);
      llvm::Value* value =
          b.CreateSub(cl_value, b.getInt32(format ? kChannelDataTypeBase : kChannelOrderBase));
      return b.CreateZExtOrTrunc(value, r.type(inst.type));
    }
    default:
      *handled = false;
      return nullptr;
  }
}

}  // namespace manifold::compiler::spirv
