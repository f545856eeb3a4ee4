// Kernels: each OpEntryPoint becomes a kernel function of the entry point's name with the
// target's kernel calling convention that calls the SPIR-V function (inlined by every
// pipeline), and carries the kernel_arg_* and attribute metadata the frontend would give it
// (compiler/kernel_info.cpp reads them).
#include <llvm/IR/AttributeMask.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Metadata.h>

#include <spirv/unified1/spirv.hpp>

#include "compiler/frontend.h"
#include "compiler/spirv/reader_impl.h"

namespace manifold::compiler::spirv {
namespace {

llvm::MDNode* strings(llvm::LLVMContext& c, const std::vector<std::string>& values) {
  std::vector<llvm::Metadata*> parts;
  for (const std::string& v : values) parts.push_back(llvm::MDString::get(c, v));
  return llvm::MDNode::get(c, parts);
}

llvm::MDNode* integers(llvm::LLVMContext& c, const std::vector<uint32_t>& values) {
  std::vector<llvm::Metadata*> parts;
  for (uint32_t v : values)
    parts.push_back(
        llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(c), v)));
  return llvm::MDNode::get(c, parts);
}

// The vec_type_hint metadata of a VecTypeHint execution mode: its low 16 bits are the vector's
// length, the high 16 bits the element type (0 char ... 6 double, the SPIR-V spec).
llvm::MDNode* vec_type_hint(llvm::LLVMContext& c, uint32_t hint) {
  const unsigned lanes = hint & 0xffff;
  llvm::Type* element = nullptr;
  switch (hint >> 16) {
    case 0:
      element = llvm::Type::getInt8Ty(c);
      break;
    case 1:
      element = llvm::Type::getInt16Ty(c);
      break;
    case 2:
      element = llvm::Type::getInt32Ty(c);
      break;
    case 3:
      element = llvm::Type::getInt64Ty(c);
      break;
    case 4:
      element = llvm::Type::getHalfTy(c);
      break;
    case 5:
      element = llvm::Type::getFloatTy(c);
      break;
    default:
      element = llvm::Type::getDoubleTy(c);
      break;
  }
  llvm::Type* t = lanes > 1 ? llvm::FixedVectorType::get(element, lanes) : element;
  return llvm::MDNode::get(
      c, {llvm::ConstantAsMetadata::get(llvm::UndefValue::get(t)),
          llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(c), 1))});
}

}  // namespace

bool Reader::make_kernels(bool kernel_arg_info) {
  for (const auto& [function_id, name] : entry_points_) {
    auto* body = llvm::dyn_cast_or_null<llvm::Function>(values_[function_id]);
    if (!body || body->isDeclaration()) return fail("entry point '" + name + "' has no body");
    if (!body->getReturnType()->isVoidTy()) return fail("kernel '" + name + "' returns a value");
    // A function of the kernel's own name exported from the module: the kernel takes the name.
    // SPIRV-LLVM-Translator exports the kernel's body as a function of that name and makes the
    // entry point a wrapper that calls it; modules of other producers export the entry point's
    // own function.
    if (llvm::Function* named = module_->getFunction(name)) {
      const bool exported = named == body || (!named->isDeclaration() && exported_.count(named));
      if (!exported) return fail("kernel '" + name + "' has the name of another function");
      named->setName("spirv." + name);
      named->setLinkage(llvm::GlobalValue::InternalLinkage);
    }
    // AMDGPU kernels take no byval pointers: a struct passed by value is a value parameter
    // (in the kernarg segment), copied to private memory for the body.
    std::vector<llvm::Type*> params;
    for (llvm::Argument& a : body->args())
      params.push_back(amdgpu_ && a.hasByValAttr() ? a.getParamByValType() : a.getType());
    auto* kernel =
        llvm::Function::Create(llvm::FunctionType::get(body->getReturnType(), params, false),
                               llvm::GlobalValue::ExternalLinkage, name, *module_);
    kernel->setCallingConv(nvptx_    ? llvm::CallingConv::PTX_Kernel
                           : amdgpu_ ? llvm::CallingConv::AMDGPU_KERNEL
                                     : llvm::CallingConv::SPIR_KERNEL);
    kernel->setAttributes(body->getAttributes());
    kernel->removeFnAttr(llvm::Attribute::AlwaysInline);
    body->addFnAttr(llvm::Attribute::AlwaysInline);
    body->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context_, "entry", kernel));
    std::vector<llvm::Value*> args;
    for (llvm::Argument& a : kernel->args()) {
      llvm::Argument& formal = *body->getArg(a.getArgNo());
      if (a.getType() == formal.getType()) {
        args.push_back(&a);
        continue;
      }
      kernel->removeParamAttrs(
          a.getArgNo(), llvm::AttributeMask(kernel->getAttributes().getParamAttrs(a.getArgNo())));
      llvm::AllocaInst* copy = b.CreateAlloca(a.getType());
      if (llvm::MaybeAlign align = formal.getParamAlign())
        copy->setAlignment(std::max(*align, copy->getAlign()));
      b.CreateStore(&a, copy);
      args.push_back(copy);
    }
    b.CreateCall(body, args);
    b.CreateRetVoid();

    // Argument metadata from the SPIR-V parameters.
    const Instruction* function = def(function_id);
    const Instruction* function_type = def(function->operands[1]);
    std::vector<uint32_t> address_spaces;
    std::vector<std::string> access, types, qualifiers, names;
    size_t index = 0;
    const size_t position = static_cast<size_t>(function - spirv_.instructions.data());
    for (size_t k = position + 1; k < spirv_.instructions.size(); ++k) {
      const Instruction& inst = spirv_.instructions[k];
      if (inst.opcode != spv::OpFunctionParameter) break;
      if (index + 1 >= function_type->operands.size()) break;
      const uint32_t param_type = inst.type;
      const bool pointer = pointers_.count(param_type) != 0;
      const Decorations& d = decorations(inst.id);
      const bool by_value =
          std::find(d.param_attributes.begin(), d.param_attributes.end(),
                    spv::FunctionParameterAttributeByVal) != d.param_attributes.end();
      const uint32_t storage =
          pointer ? storage_class(param_type) : uint32_t{spv::StorageClassFunction};
      address_spaces.push_back(by_value ? 0 : spir_address_space(storage));
      const Instruction* type_def = def(param_type);
      access.push_back(type_def && type_def->opcode == spv::OpTypeImage ? image_access(param_type)
                                                                        : "none");
      types.push_back(opencl_type_name(by_value ? pointee(param_type) : param_type));
      std::string qualifier;
      if (pointer && !by_value) {
        const bool read_only =
            storage == spv::StorageClassUniformConstant ||
            std::find(d.param_attributes.begin(), d.param_attributes.end(),
                      spv::FunctionParameterAttributeNoWrite) != d.param_attributes.end();
        if (read_only) qualifier = "const";
        if (d.is_volatile) qualifier += qualifier.empty() ? "volatile" : " volatile";
        if (std::find(d.param_attributes.begin(), d.param_attributes.end(),
                      spv::FunctionParameterAttributeNoAlias) != d.param_attributes.end())
          qualifier += qualifier.empty() ? "restrict" : " restrict";
      }
      qualifiers.push_back(qualifier);
      names.push_back(name_of(inst.id));
      kernel->getArg(index)->setName(names.back());
      ++index;
    }
    kernel->setMetadata("kernel_arg_addr_space", integers(context_, address_spaces));
    kernel->setMetadata("kernel_arg_access_qual", strings(context_, access));
    kernel->setMetadata("kernel_arg_type", strings(context_, types));
    kernel->setMetadata("kernel_arg_base_type", strings(context_, types));
    kernel->setMetadata("kernel_arg_type_qual", strings(context_, qualifiers));
    kernel->setMetadata("kernel_arg_name", strings(context_, names));

    auto mode = modes_.find(function_id);
    if (mode != modes_.end()) {
      const ExecutionModes& m = mode->second;
      if (m.local_size[0])
        kernel->setMetadata(
            "reqd_work_group_size",
            integers(context_, {m.local_size[0], m.local_size[1], m.local_size[2]}));
      if (m.local_size_hint[0])
        kernel->setMetadata(
            "work_group_size_hint",
            integers(context_, {m.local_size_hint[0], m.local_size_hint[1], m.local_size_hint[2]}));
      if (m.has_vec_type_hint)
        kernel->setMetadata("vec_type_hint", vec_type_hint(context_, m.vec_type_hint));
    }
  }
  if (kernel_arg_info) module_->addModuleFlag(llvm::Module::Max, kArgInfoRequestedFlag, 1);
  return true;
}

}  // namespace manifold::compiler::spirv
