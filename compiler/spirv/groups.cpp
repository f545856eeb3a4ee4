// Work-group instructions: async copies and their events (Kernel capability) and the work-group
// and sub-group collectives (Groups capability, Workgroup or Subgroup scope), as calls of the
// OpenCL C builtins that the target's library implements (async_work_group_strided_copy,
// wait_group_events, work_group_*, sub_group_*).
#include <optional>
#include <spirv/unified1/spirv.hpp>

#include "compiler/spirv/instructions.h"
#include "compiler/spirv/names.h"
#include "compiler/spirv/reader_impl.h"

namespace manifold::compiler::spirv {
namespace {

// Async copies: work-group scope only.
void require_workgroup_scope(llvm::Value* scope, const Instruction& inst) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(scope);
  if (!c || c->getZExtValue() != spv::ScopeWorkgroup)
    throw ReaderError(opcode_name(inst.opcode) + " with a scope other than Workgroup");
}

// Collectives: "work_group_" or "sub_group_" by the execution scope (sub-groups where the device
// has them).
const char* collective_prefix(const Reader& r, llvm::Value* scope, const Instruction& inst) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(scope);
  if (c && c->getZExtValue() == spv::ScopeWorkgroup) {
    if (!r.target_.has_feature("__opencl_c_work_group_collective_functions"))
      throw ReaderError(opcode_name(inst.opcode) +
                        " of Workgroup scope: the device has no work-group collective functions "
                        "(Groups capability)");
    return "work_group_";
  }
  if (c && c->getZExtValue() == spv::ScopeSubgroup) {
    if (!r.target_.has_feature("__opencl_c_subgroups"))
      throw ReaderError(opcode_name(inst.opcode) +
                        " of Subgroup scope on a device without sub-groups");
    return "sub_group_";
  }
  throw ReaderError(opcode_name(inst.opcode) + " with a scope other than Workgroup or Subgroup");
}

// Every work-item of the group must reach these calls together.
llvm::CallInst* convergent(llvm::CallInst* call) {
  call->addFnAttr(llvm::Attribute::Convergent);
  call->getCalledFunction()->addFnAttr(llvm::Attribute::Convergent);
  return call;
}

// work_group_reduce_add / _scan_inclusive_min ... for OpGroupIAdd and friends; signedness picks
// the overload (min and max of uint differ from those of int).
struct Collective {
  const char* combine;  // add, min, max
  bool is_signed;
};

std::optional<Collective> collective_of(uint32_t opcode) {
  switch (opcode) {
    case spv::OpGroupIAdd:
    case spv::OpGroupFAdd:
      return Collective{"add", true};
    case spv::OpGroupFMin:
    case spv::OpGroupSMin:
      return Collective{"min", true};
    case spv::OpGroupUMin:
      return Collective{"min", false};
    case spv::OpGroupFMax:
    case spv::OpGroupSMax:
      return Collective{"max", true};
    case spv::OpGroupUMax:
      return Collective{"max", false};
    default:
      return std::nullopt;
  }
}

}  // namespace

llvm::Value* translate_group_instruction(Reader& r, const Instruction& inst, bool* handled) {
  llvm::IRBuilder<>& b = *r.builder_;
  const auto& ops = inst.operands;
  auto operand = [&](size_t k) { return operand_value(r, inst, k); };
  auto mangled = [&](size_t k, bool is_signed, std::vector<std::string>& subs,
                     bool pointee_const = false) {
    return mangle_id(r, r.type_id_of(ops.at(k)), is_signed, subs, pointee_const);
  };

  switch (inst.opcode) {
    case spv::OpGroupAsyncCopy: {
      // Scope, destination, source, element count, stride, event: the strided copy (stride 1
      // is the plain copy), strided on whichever side is global.
      require_workgroup_scope(operand(0), inst);
      // Count and stride are size_t to the builtin; modules give them in any integer width.
      std::vector<std::string> subs;
      std::string name = with_length("async_work_group_strided_copy");
      name += mangled(1, true, subs);
      name += mangled(2, true, subs, true);
      llvm::Type* size_type = r.physical32_ ? b.getInt32Ty() : b.getInt64Ty();
      const char* size_code = r.physical32_ ? "j" : "m";
      name += std::string(size_code) + size_code + mangled(5, false, subs);
      return convergent(
          r.call_builtin(name, r.type(inst.type),
                         {operand(1), operand(2), b.CreateZExtOrTrunc(operand(3), size_type),
                          b.CreateZExtOrTrunc(operand(4), size_type), operand(5)},
                         false));
    }
    case spv::OpGroupWaitEvents: {
      require_workgroup_scope(operand(0), inst);
      std::vector<std::string> subs;
      const std::string name =
          with_length("wait_group_events") + mangled(1, true, subs) + mangled(2, true, subs);
      return convergent(r.call_builtin(name, b.getVoidTy(), {operand(1), operand(2)}, false));
    }
    case spv::OpGroupAll:
    case spv::OpGroupAny: {
      const std::string prefix = collective_prefix(r, operand(0), inst);
      llvm::Value* predicate = b.CreateZExt(operand(1), b.getInt32Ty());
      const std::string name =
          with_length(prefix + (inst.opcode == spv::OpGroupAll ? "all" : "any")) + "i";
      llvm::Value* all = convergent(r.call_builtin(name, b.getInt32Ty(), {predicate}, false));
      return b.CreateICmpNE(all, b.getInt32(0));
    }
    case spv::OpGroupBroadcast: {
      // The local id: one size_t, or a vector of two or three (x, y[, z]); a sub-group's: a
      // uint.
      const std::string prefix = collective_prefix(r, operand(0), inst);
      std::vector<std::string> subs;
      std::string name = with_length(prefix + "broadcast") + mangled(1, true, subs);
      std::vector<llvm::Value*> args = {operand(1)};
      llvm::Value* id = operand(2);
      if (prefix == "sub_group_") {
        if (!id->getType()->isIntegerTy())
          throw ReaderError("OpGroupBroadcast of Subgroup scope with a vector id");
        args.push_back(b.CreateZExtOrTrunc(id, b.getInt32Ty()));
        name += "j";
      } else if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(id->getType())) {
        for (unsigned k = 0; k < v->getNumElements(); ++k) {
          args.push_back(b.CreateExtractElement(id, k));
          name += v->getElementType()->getIntegerBitWidth() == 64 ? "m" : "j";
        }
      } else {
        args.push_back(id);
        name += mangled(2, false, subs);
      }
      return convergent(r.call_builtin(name, r.type(inst.type), args, false));
    }
    default:
      break;
  }
  if (std::optional<Collective> c = collective_of(inst.opcode)) {
    const std::string prefix = collective_prefix(r, operand(0), inst);
    const char* operation = nullptr;
    switch (ops.at(1)) {  // a literal GroupOperation
      case spv::GroupOperationReduce:
        operation = "reduce_";
        break;
      case spv::GroupOperationInclusiveScan:
        operation = "scan_inclusive_";
        break;
      case spv::GroupOperationExclusiveScan:
        operation = "scan_exclusive_";
        break;
      default:
        throw ReaderError(opcode_name(inst.opcode) + " with an unsupported group operation " +
                          std::to_string(ops.at(1)));
    }
    std::vector<std::string> subs;
    const std::string name =
        with_length(prefix + operation + c->combine) + mangled(2, c->is_signed, subs);
    return convergent(r.call_builtin(name, r.type(inst.type), {operand(2)}, false));
  }
  *handled = false;
  return nullptr;
}

}  // namespace manifold::compiler::spirv
