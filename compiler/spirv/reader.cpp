// The reader's module-level pass: capabilities and extensions are checked against what
// Manifold implements, names, decorations and execution modes collected, then types, constants,
// global variables and functions are made in the module's order (compiler/spirv/reader_impl.h).
#include "compiler/spirv/reader.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <spirv/unified1/spirv.hpp>

#include "compiler/spirv/names.h"
#include "compiler/spirv/reader_impl.h"
#include "compiler/stages.h"

namespace manifold::compiler::spirv {
namespace {

// Capabilities whose every use the reader translates. Float64 and Float16 depend on the
// device (checked separately), Groups on the work-group collectives or sub-groups, images on
// the device's images; pipes and device enqueue are not done.
bool capability_supported(uint32_t capability, const Target& target) {
  switch (capability) {
    case spv::CapabilityAddresses:
    case spv::CapabilityLinkage:
    case spv::CapabilityKernel:
    case spv::CapabilityVector16:
    case spv::CapabilityFloat16Buffer:
    case spv::CapabilityInt64:
    case spv::CapabilityInt64Atomics:
    case spv::CapabilityInt16:
    case spv::CapabilityInt8:
    case spv::CapabilityGenericPointer:
    case spv::CapabilityExpectAssumeKHR:
      return true;
    case spv::CapabilityImageBasic:
    case spv::CapabilityLiteralSampler:
    case spv::CapabilitySampled1D:
    case spv::CapabilityImage1D:
    case spv::CapabilitySampledBuffer:
    case spv::CapabilityImageBuffer:
      return target.images;
    case spv::CapabilityImageReadWrite:
      return target.images && target.has_feature("__opencl_c_read_write_images");
    case spv::CapabilityGroups:  // each instruction checks its scope (spirv/groups.cpp)
      return target.has_feature("__opencl_c_work_group_collective_functions") ||
             target.has_feature("__opencl_c_subgroups");
    case spv::CapabilityFloat64:
      return target.fp64;
    case spv::CapabilityFloat16:
      return target.fp16;
    default:
      return false;
  }
}

// Extensions whose instructions and decorations the reader understands.
bool extension_supported(const std::string& name) {
  return name == "SPV_KHR_no_integer_wrap_decoration" || name == "SPV_KHR_expect_assume" ||
         name == "SPV_KHR_non_semantic_info";
}

}  // namespace

Reader::Reader(llvm::LLVMContext& context, const Module& spirv, const Target& target,
               const SpecValues& spec_values)
    : context_(context), spirv_(spirv), target_(target), spec_values_(spec_values) {
  nvptx_ = llvm::Triple(target.triple).isNVPTX();
  amdgpu_ = llvm::Triple(target.triple).isAMDGCN();
  spirv_target_ = llvm::Triple(target.triple).isSPIRV();
  defs_.assign(spirv.bound, nullptr);
  types_.assign(spirv.bound, nullptr);
  values_.assign(spirv.bound, nullptr);
}

bool Reader::fail(const std::string& message) {
  log_ += "error: SPIR-V: " + message + "\n";
  return false;
}

const Decorations& Reader::decorations(uint32_t id) const {
  static const Decorations kNone;
  auto it = decorations_.find(id);
  return it == decorations_.end() ? kNone : it->second;
}

std::string Reader::name_of(uint32_t id) const {
  auto it = names_.find(id);
  return it == names_.end() ? std::string() : it->second;
}

uint32_t Reader::type_id_of(uint32_t value) const {
  const Instruction* d = def(value);
  return d ? d->type : 0;
}

namespace {

// Applies one OpDecorate's decoration (operands from `first` on: decoration, literals).
bool apply_decoration(Reader& r, Decorations& d, const Instruction& inst, size_t first) {
  const uint32_t decoration = inst.operands[first];
  auto literal = [&](size_t k) {
    return first + k < inst.operands.size() ? inst.operands[first + k] : 0;
  };
  switch (decoration) {
    case spv::DecorationAlignment:
      d.alignment = valid_alignment(literal(1));
      return true;
    case spv::DecorationBuiltIn:
      d.builtin = static_cast<int>(literal(1));
      return true;
    case spv::DecorationLinkageAttributes: {
      size_t next = 0;
      d.linkage_name = inst.string_at(first + 1, &next);
      d.linkage = next < inst.operands.size() ? static_cast<int>(inst.operands[next]) : 0;
      return true;
    }
    case spv::DecorationFuncParamAttr:
      d.param_attributes.push_back(literal(1));
      return true;
    case spv::DecorationSpecId:
      d.spec_id = static_cast<int>(literal(1));
      return true;
    case spv::DecorationFPRoundingMode:
      d.rounding = static_cast<int>(literal(1));
      return true;
    case spv::DecorationSaturatedConversion:
      d.saturated = true;
      return true;
    case spv::DecorationNoSignedWrap:
      d.no_signed_wrap = true;
      return true;
    case spv::DecorationNoUnsignedWrap:
      d.no_unsigned_wrap = true;
      return true;
    case spv::DecorationFPFastMathMode:
      d.fast_math = literal(1);
      return true;
    case spv::DecorationVolatile:
      d.is_volatile = true;
      return true;
    case spv::DecorationConstant:
      d.is_constant = true;
      return true;
    case spv::DecorationCPacked:
      d.packed = true;
      return true;
    // Hints and facts that change nothing in the code Manifold generates.
    case spv::DecorationRestrict:
    case spv::DecorationAliased:
    case spv::DecorationCoherent:
    case spv::DecorationNonWritable:
    case spv::DecorationNonReadable:
    case spv::DecorationMaxByteOffset:
    case spv::DecorationAlignmentId:
    case spv::DecorationMaxByteOffsetId:
    case spv::DecorationUniform:
      return true;
    default:
      return r.fail("unsupported decoration " + decoration_name(decoration));
  }
}

}  // namespace

std::string Reader::target_builtin_name(const std::string& spir_name) const {
  // SPIR mangles address spaces by number (1 global, 2 constant, 3 local, 4 generic); each
  // target's library spells them its own way (compiler/spirv/opencl_std.cpp), the SPIR-V
  // target's as SPIR does.
  if (spirv_target_) return spir_name;
  static const char* const kCpu[] = {"U8CLglobal", "U10CLconstant", "U7CLlocal", "U9CLgeneric"};
  static const char* const kNvptx[] = {"U3AS1", "U3AS4", "U3AS3", ""};  // and AMDGPU
  std::string out;
  for (size_t i = 0; i < spir_name.size();) {
    if (spir_name.compare(i, 4, "U3AS") == 0 && i + 4 < spir_name.size() &&
        spir_name[i + 4] >= '1' && spir_name[i + 4] <= '4') {
      out += (nvptx_ || amdgpu_ ? kNvptx : kCpu)[spir_name[i + 4] - '1'];
      i += 5;
    } else {
      out += spir_name[i++];
    }
  }
  return out;
}

// The SPIR-V target's libraries (clang's output for spirv64) define every function as spir_func:
// a call whose convention differs from its callee's is undefined behaviour, which the optimizer
// turns into `unreachable`.
void Reader::use_spir_function_convention() {
  for (llvm::Function& f : *module_) {
    if (f.isIntrinsic() || f.getCallingConv() == llvm::CallingConv::SPIR_KERNEL) continue;
    f.setCallingConv(llvm::CallingConv::SPIR_FUNC);
    for (llvm::User* user : f.users())
      if (auto* call = llvm::dyn_cast<llvm::CallBase>(user);
          call && call->getCalledFunction() == &f)
        call->setCallingConv(llvm::CallingConv::SPIR_FUNC);
  }
}

bool Reader::run(bool kernel_arg_info) {
  module_ = std::make_unique<llvm::Module>("spirv", context_);
  module_->setTargetTriple(llvm::Triple(target_.triple));
  // The data layout of the target's code generator, as the frontend's modules have it.
  if (nvptx_ || amdgpu_) {
    if (auto machine = make_target_machine(target_, CodeDestination::Driver))
      module_->setDataLayout(machine->createDataLayout());
  } else if (llvm::TargetMachine* machine =
                 thread_target_machine(target_, CodeDestination::HostJit)) {
    module_->setDataLayout(machine->createDataLayout());
  }

  // Each id's OpDecorate's, for decoration groups (older translators emit them): a group's
  // decorations come before its OpDecorationGroup, its OpGroupDecorate's after.
  std::map<uint32_t, std::vector<const Instruction*>> decorates;
  for (const Instruction& inst : spirv_.instructions) {
    if (inst.id && inst.id < defs_.size()) defs_[inst.id] = &inst;
    switch (inst.opcode) {
      case spv::OpCapability:
        if (!capability_supported(inst.operands[0], target_))
          return fail("unsupported capability " + capability_name(inst.operands[0]) +
                      (inst.operands[0] == spv::CapabilityGroups
                           ? " (the device has neither sub-groups nor work-group collectives)"
                           : ""));
        break;
      case spv::OpExtension:
        if (!extension_supported(inst.string_at(0)))
          return fail("unsupported extension " + inst.string_at(0));
        break;
      case spv::OpExtInstImport: {
        const std::string set = inst.string_at(0);
        if (set == "OpenCL.std") {
          opencl_std_ = inst.id;
        } else if (set == "OpenCL.DebugInfo.100" || set == "SPIRV.debug" ||
                   set.rfind("NonSemantic.", 0) == 0) {
          // Debug information (clang -g through the translator) and non-semantic sets: their
          // instructions change nothing the kernel computes.
          ignored_instruction_sets_.insert(inst.id);
        } else {
          return fail("unsupported extended instruction set " + set);
        }
        break;
      }
      case spv::OpMemoryModel:
        if (inst.operands[0] != spv::AddressingModelPhysical64 &&
            inst.operands[0] != spv::AddressingModelPhysical32)
          return fail("unsupported addressing model");
        physical32_ = inst.operands[0] == spv::AddressingModelPhysical32;
        break;
      case spv::OpEntryPoint:
        if (inst.operands[0] != spv::ExecutionModelKernel)
          return fail("entry point of an execution model other than Kernel");
        entry_points_.emplace_back(inst.operands[1], inst.string_at(2));
        break;
      case spv::OpExecutionMode: {
        ExecutionModes& m = modes_[inst.operands[0]];
        switch (inst.operands[1]) {
          case spv::ExecutionModeLocalSize:
            for (int d = 0; d < 3; ++d) m.local_size[d] = inst.operands[2 + d];
            break;
          case spv::ExecutionModeLocalSizeHint:
            for (int d = 0; d < 3; ++d) m.local_size_hint[d] = inst.operands[2 + d];
            break;
          case spv::ExecutionModeVecTypeHint:
            m.vec_type_hint = inst.operands[2];
            m.has_vec_type_hint = true;
            break;
          case spv::ExecutionModeContractionOff:
            // Manifold never contracts a separate multiply and add of a module: nothing to do.
            break;
          default:
            return fail("unsupported execution mode " + std::to_string(inst.operands[1]));
        }
        break;
      }
      case spv::OpName:
        names_[inst.operands[0]] = inst.string_at(1);
        break;
      case spv::OpDecorate:
        if (!apply_decoration(*this, decorations_[inst.operands[0]], inst, 1)) return false;
        decorates[inst.operands[0]].push_back(&inst);
        break;
      case spv::OpGroupDecorate:
        for (size_t k = 1; k < inst.operands.size(); ++k)
          for (const Instruction* d : decorates[inst.operands[0]])
            if (!apply_decoration(*this, decorations_[inst.operands[k]], *d, 1)) return false;
        break;
      case spv::OpMemberDecorate:
      case spv::OpGroupMemberDecorate:
        // Member offsets and alignments follow from the C layout the module was made for.
        break;
      default:
        break;
    }
  }

  // Types, constants, global variables and function declarations, then function bodies.
  const auto& all = spirv_.instructions;
  std::vector<std::pair<size_t, size_t>> bodies;
  for (size_t i = 0; i < all.size(); ++i) {
    const Instruction& inst = all[i];
    if (inst.opcode == spv::OpFunction) {
      size_t end = i;
      while (end < all.size() && all[end].opcode != spv::OpFunctionEnd) ++end;
      llvm::Type* function_type = type(inst.operands[1]);
      if (!function_type) return fail("function of unknown type");
      const Decorations& d = decorations(inst.id);
      std::string name = d.linkage >= 0 ? d.linkage_name : name_of(inst.id);
      if (name.empty()) name = "spirv.function." + std::to_string(inst.id);
      // An imported OpenCL C builtin (clang's SPIR-V target leaves some legacy atomics as
      // calls): the target's library defines it under the target's mangling.
      const bool has_body =
          std::any_of(all.begin() + i, all.begin() + end,
                      [](const Instruction& x) { return x.opcode == spv::OpLabel; });
      if (d.linkage == 1 && !has_body && name.rfind("_Z", 0) == 0) name = target_builtin_name(name);
      auto linkage =
          d.linkage >= 0 ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage;
      auto* f = llvm::Function::Create(llvm::cast<llvm::FunctionType>(function_type), linkage,
                                       d.linkage >= 0 ? name : "spirv." + name, *module_);
      f->addFnAttr(llvm::Attribute::NoUnwind);
      if (inst.operands[0] & spv::FunctionControlInlineMask)
        f->addFnAttr(llvm::Attribute::AlwaysInline);
      values_[inst.id] = f;
      if (d.linkage == 0) exported_.insert(f);
      if (d.linkage == 1 && !has_body) {
        bool defined = false;
        if (!define_builtin_function(*f, &defined)) return false;
      }
      bodies.emplace_back(i, end);
      i = end;
      continue;
    }
    if (inst.opcode >= spv::OpTypeVoid && inst.opcode <= spv::OpTypeForwardPointer) {
      if (!translate_type(inst)) return false;
    } else if ((inst.opcode >= spv::OpConstantTrue && inst.opcode <= spv::OpSpecConstantOp) ||
               inst.opcode == spv::OpUndef) {
      if (!translate_constant(inst)) return false;
    } else if (inst.opcode == spv::OpVariable) {
      if (!translate_global_variable(inst)) return false;
    } else if (inst.opcode == spv::OpTypePipeStorage || inst.opcode == spv::OpTypeNamedBarrier) {
      return fail("unsupported type instruction " + opcode_name(inst.opcode));
    }
  }
  for (const auto& [first, end] : bodies)
    if (!translate_function_body(first, end)) return false;
  if (!make_kernels(kernel_arg_info)) return false;
  if (constant_scratch_) constant_scratch_->eraseFromParent();
  constant_scratch_ = nullptr;
  if (spirv_target_) use_spir_function_convention();

  std::string problems;
  llvm::raw_string_ostream stream(problems);
  if (llvm::verifyModule(*module_, &stream))
    return fail("the module made from the SPIR-V is invalid (a reader bug):\n" + problems);
  return true;
}

ReadResult read(llvm::LLVMContext& context, std::span<const uint32_t> words, const Target& target,
                const SpecValues& spec_values, bool kernel_arg_info) {
  ReadResult result;
  std::string error;
  std::optional<Module> parsed = parse(words, &error);
  if (!parsed) {
    result.log = "error: " + error + "\n";
    return result;
  }
  Reader reader(context, *parsed, target, spec_values);
  if (reader.run(kernel_arg_info)) result.module = reader.take_module();
  result.log = reader.log();
  return result;
}

}  // namespace manifold::compiler::spirv
