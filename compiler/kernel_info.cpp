#include "compiler/kernel_info.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include <sstream>

#include "compiler/frontend.h"

namespace manifold::compiler {
namespace {

std::string md_string(const llvm::MDNode* node, unsigned index) {
  if (!node || index >= node->getNumOperands()) return {};
  if (auto* s = llvm::dyn_cast_or_null<llvm::MDString>(node->getOperand(index)))
    return s->getString().str();
  return {};
}

uint64_t md_int(const llvm::MDNode* node, unsigned index) {
  if (!node || index >= node->getNumOperands()) return 0;
  if (auto* c = llvm::mdconst::dyn_extract_or_null<llvm::ConstantInt>(node->getOperand(index)))
    return c->getZExtValue();
  return 0;
}

// OpenCL C spelling of an LLVM scalar or vector type, for vec_type_hint.
std::string opencl_type_name(llvm::Type* type, bool is_signed) {
  unsigned lanes = 0;
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type)) {
    lanes = vector->getNumElements();
    type = vector->getElementType();
  }
  std::string base;
  if (type->isFloatTy())
    base = "float";
  else if (type->isDoubleTy())
    base = "double";
  else if (type->isHalfTy())
    base = "half";
  else if (type->isIntegerTy(8))
    base = is_signed ? "char" : "uchar";
  else if (type->isIntegerTy(16))
    base = is_signed ? "short" : "ushort";
  else if (type->isIntegerTy(32))
    base = is_signed ? "int" : "uint";
  else if (type->isIntegerTy(64))
    base = is_signed ? "long" : "ulong";
  else
    base = "unknown";
  return lanes ? base + std::to_string(lanes) : base;
}

cl_kernel_arg_access_qualifier access_qualifier(const std::string& text) {
  if (text == "read_only") return CL_KERNEL_ARG_ACCESS_READ_ONLY;
  if (text == "write_only") return CL_KERNEL_ARG_ACCESS_WRITE_ONLY;
  if (text == "read_write") return CL_KERNEL_ARG_ACCESS_READ_WRITE;
  return CL_KERNEL_ARG_ACCESS_NONE;
}

cl_kernel_arg_type_qualifier type_qualifier(const std::string& text) {
  cl_kernel_arg_type_qualifier bits = CL_KERNEL_ARG_TYPE_NONE;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (word == "const")
      bits |= CL_KERNEL_ARG_TYPE_CONST;
    else if (word == "restrict")
      bits |= CL_KERNEL_ARG_TYPE_RESTRICT;
    else if (word == "volatile")
      bits |= CL_KERNEL_ARG_TYPE_VOLATILE;
    else if (word == "pipe")
      bits |= CL_KERNEL_ARG_TYPE_PIPE;
  }
  return bits;
}

bool is_image_type(const std::string& base_type) {
  return base_type.find("image1d") != std::string::npos ||
         base_type.find("image2d") != std::string::npos ||
         base_type.find("image3d") != std::string::npos;
}

}  // namespace

bool is_kernel(const llvm::Function& function) {
  // SPIR_KERNEL: the CPU (and SPIR-V) targets; PTX_Kernel and AMDGPU_KERNEL: clang's kernels
  // for NVPTX and AMDGPU.
  const auto cc = function.getCallingConv();
  return (cc == llvm::CallingConv::SPIR_KERNEL || cc == llvm::CallingConv::PTX_Kernel ||
          cc == llvm::CallingConv::AMDGPU_KERNEL) &&
         !function.isDeclaration();
}

std::vector<KernelInfo> read_kernel_infos(const llvm::Module& module) {
  std::vector<KernelInfo> kernels;
  const llvm::DataLayout& layout = module.getDataLayout();
  for (const llvm::Function& function : module) {
    if (!is_kernel(function)) continue;
    KernelInfo info;
    info.name = function.getName().str();
    const llvm::MDNode* address_spaces = function.getMetadata("kernel_arg_addr_space");
    const llvm::MDNode* access = function.getMetadata("kernel_arg_access_qual");
    const llvm::MDNode* types = function.getMetadata("kernel_arg_type");
    const llvm::MDNode* base_types = function.getMetadata("kernel_arg_base_type");
    const llvm::MDNode* qualifiers = function.getMetadata("kernel_arg_type_qual");
    const llvm::MDNode* names = function.getMetadata("kernel_arg_name");
    info.arg_info_available = names != nullptr && module.getModuleFlag(kArgInfoRequestedFlag);
    for (const llvm::Argument& arg : function.args()) {
      const unsigned i = arg.getArgNo();
      KernelArg out;
      const uint64_t address_space = md_int(address_spaces, i);
      const std::string base_type = md_string(base_types, i);
      out.type_name = md_string(types, i);
      out.name = md_string(names, i);
      out.access = access_qualifier(md_string(access, i));
      out.type_qualifier = type_qualifier(md_string(qualifiers, i));
      switch (address_space) {
        case 1:
          out.address = CL_KERNEL_ARG_ADDRESS_GLOBAL;
          break;
        case 2:
          out.address = CL_KERNEL_ARG_ADDRESS_CONSTANT;
          break;
        case 3:
          out.address = CL_KERNEL_ARG_ADDRESS_LOCAL;
          break;
        default:
          out.address = CL_KERNEL_ARG_ADDRESS_PRIVATE;
          break;
      }
      llvm::Type* type = arg.getType();
      if (base_type == "sampler_t") {
        out.kind = ArgKind::Sampler;
        out.size = sizeof(cl_sampler);
      } else if (is_image_type(base_type)) {
        out.kind = ArgKind::Image;
        out.size = sizeof(cl_mem);
        out.address = CL_KERNEL_ARG_ADDRESS_GLOBAL;
      } else if (address_space == 3) {
        out.kind = ArgKind::Local;
        out.size = sizeof(void*);
      } else if (address_space == 1 || address_space == 2) {
        out.kind = ArgKind::Buffer;
        out.size = sizeof(void*);
      } else {
        out.kind = ArgKind::Value;
        llvm::Type* value_type = arg.hasByValAttr() ? arg.getParamByValType() : type;
        out.size = layout.getTypeAllocSize(value_type);
        // A 3-component vector is set with the 4-component host type (cl_float3 = cl_float4).
      }
      info.args.push_back(std::move(out));
    }

    std::string attributes;
    auto append = [&](const std::string& text) {
      if (!attributes.empty()) attributes += ' ';
      attributes += text;
    };
    if (const llvm::MDNode* node = function.getMetadata("reqd_work_group_size")) {
      for (unsigned d = 0; d < 3; ++d) info.reqd_work_group_size[d] = md_int(node, d);
      append("reqd_work_group_size(" + std::to_string(info.reqd_work_group_size[0]) + "," +
             std::to_string(info.reqd_work_group_size[1]) + "," +
             std::to_string(info.reqd_work_group_size[2]) + ")");
    }
    if (const llvm::MDNode* node = function.getMetadata("work_group_size_hint")) {
      for (unsigned d = 0; d < 3; ++d) info.work_group_size_hint[d] = md_int(node, d);
      append("work_group_size_hint(" + std::to_string(info.work_group_size_hint[0]) + "," +
             std::to_string(info.work_group_size_hint[1]) + "," +
             std::to_string(info.work_group_size_hint[2]) + ")");
    }
    if (const llvm::MDNode* node = function.getMetadata("vec_type_hint")) {
      if (node->getNumOperands() >= 1) {
        if (auto* value = llvm::dyn_cast<llvm::ValueAsMetadata>(node->getOperand(0))) {
          info.vec_type_hint = opencl_type_name(value->getType(), md_int(node, 1) != 0);
          append("vec_type_hint(" + info.vec_type_hint + ")");
        }
      }
    }
    info.attributes = std::move(attributes);
    kernels.push_back(std::move(info));
  }
  return kernels;
}

}  // namespace manifold::compiler
