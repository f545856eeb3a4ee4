// Function bodies: one LLVM instruction (or a few) per SPIR-V instruction. Blocks are made
// first (branches and OpPhi name later blocks), phi operands filled in at the end.
#include "compiler/spirv/instructions.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include <spirv/unified1/spirv.hpp>

#include "compiler/spirv/names.h"
#include "compiler/spirv/reader_impl.h"

namespace manifold::compiler::spirv {

llvm::Value* Reader::value(uint32_t id) {
  if (id < values_.size() && values_[id]) return values_[id];
  auto builtin = builtin_variables_.find(id);
  if (builtin == builtin_variables_.end() || !function_) return nullptr;
  // A BuiltIn variable becomes a private copy of its value made at function entry, so that
  // loads, access chains and copies of it all work as on any variable.
  auto [copy, inserted] = builtin_copies_.try_emplace(id, nullptr);
  if (inserted) {
    llvm::Type* t = type(pointee(type_id_of(id)));
    if (!t) throw ReaderError("BuiltIn variable of unknown type");
    // Computed at function entry, where every use can see it.
    const llvm::IRBuilderBase::InsertPoint saved = builder_->saveIP();
    builder_->SetInsertPoint(entry_);
    llvm::Value* computed = builtin_variable_value(builtin->second, t);
    llvm::AllocaInst* slot = builder_->CreateAlloca(t);
    builder_->CreateStore(computed, slot);
    builder_->restoreIP(saved);
    copy->second = slot;
  }
  return copy->second;
}

namespace {

void apply_param_attributes(Reader& r, llvm::Function& f, unsigned index, uint32_t param_id,
                            uint32_t type_id) {
  const Decorations& d = r.decorations(param_id);
  llvm::LLVMContext& c = f.getContext();
  llvm::Type* pointee = r.type(r.pointee(type_id));
  for (uint32_t attribute : d.param_attributes) {
    switch (attribute) {
      case spv::FunctionParameterAttributeZext:
        f.addParamAttr(index, llvm::Attribute::ZExt);
        break;
      case spv::FunctionParameterAttributeSext:
        f.addParamAttr(index, llvm::Attribute::SExt);
        break;
      case spv::FunctionParameterAttributeByVal:
        if (pointee) f.addParamAttr(index, llvm::Attribute::getWithByValType(c, pointee));
        break;
      case spv::FunctionParameterAttributeSret:
        if (pointee) f.addParamAttr(index, llvm::Attribute::getWithStructRetType(c, pointee));
        break;
      case spv::FunctionParameterAttributeNoAlias:
        f.addParamAttr(index, llvm::Attribute::NoAlias);
        break;
      case spv::FunctionParameterAttributeNoWrite:
        f.addParamAttr(index, llvm::Attribute::ReadOnly);
        break;
      default:  // NoCapture, NoReadWrite: hints
        break;
    }
  }
  if (d.alignment && f.getArg(index)->getType()->isPointerTy())
    f.addParamAttr(index, llvm::Attribute::getWithAlignment(c, llvm::Align(d.alignment)));
}

}  // namespace

bool Reader::translate_function_body(size_t first, size_t end) {
  const auto& all = spirv_.instructions;
  auto* f = llvm::cast<llvm::Function>(values_[all[first].id]);
  function_ = f;
  builtin_copies_.clear();
  size_t i = first + 1;
  unsigned index = 0;
  for (; i < end && all[i].opcode == spv::OpFunctionParameter; ++i, ++index) {
    values_[all[i].id] = f->getArg(index);
    f->getArg(index)->setName(name_of(all[i].id));
    apply_param_attributes(*this, *f, index, all[i].id, all[i].type);
  }
  if (i == end) {
    // No body: a function of another module, resolved by linking.
    if (decorations(all[first].id).linkage != 1)
      return fail("function '" + name_of(all[first].id) + "' has no body and is not imported");
    return true;
  }
  entry_ = llvm::BasicBlock::Create(context_, "entry", f);
  for (size_t k = i; k < end; ++k)
    if (all[k].opcode == spv::OpLabel)
      values_[all[k].id] = llvm::BasicBlock::Create(context_, name_of(all[k].id), f);
  builder_ = std::make_unique<llvm::IRBuilder<>>(context_);
  std::vector<std::pair<llvm::PHINode*, const Instruction*>> phis;
  // Where each SPIR-V block ends in LLVM: a translation may split a block (an image write that
  // picks its builtin when it runs), and phis name the block that branches.
  std::map<uint32_t, llvm::BasicBlock*> exits;
  uint32_t current_label = 0;
  try {
    for (size_t k = i; k < end; ++k) {
      const Instruction& inst = all[k];
      if (inst.opcode == spv::OpLabel) {
        if (current_label) exits[current_label] = builder_->GetInsertBlock();
        current_label = inst.id;
        builder_->SetInsertPoint(llvm::cast<llvm::BasicBlock>(values_[inst.id]));
        continue;
      }
      if (inst.opcode == spv::OpPhi) {
        llvm::PHINode* phi = builder_->CreatePHI(type(inst.type), inst.operands.size() / 2);
        values_[inst.id] = phi;
        phis.emplace_back(phi, &inst);
        continue;
      }
      llvm::Value* result = translate_instruction(*this, inst);
      if (inst.id && result) {
        if (!result->getType()->isVoidTy() && !llvm::isa<llvm::Constant>(result))
          result->setName(name_of(inst.id));
        values_[inst.id] = result;
      }
    }
    if (current_label) exits[current_label] = builder_->GetInsertBlock();
    for (auto& [phi, inst] : phis) {
      for (size_t k = 0; k + 1 < inst->operands.size(); k += 2) {
        llvm::Value* incoming = value(inst->operands[k]);
        if (!incoming) throw ReaderError("OpPhi of an undefined value");
        auto exit = exits.find(inst->operands[k + 1]);
        phi->addIncoming(incoming, exit != exits.end() ? exit->second
                                                       : llvm::cast<llvm::BasicBlock>(
                                                             values_[inst->operands[k + 1]]));
      }
    }
  } catch (const ReaderError& e) {
    return fail(std::string(e.what()) + " (in function '" + f->getName().str() + "')");
  }
  llvm::IRBuilder<> at_entry(entry_);
  at_entry.CreateBr(llvm::cast<llvm::BasicBlock>(values_[all[i].id]));
  function_ = nullptr;
  return true;
}

}  // namespace manifold::compiler::spirv
