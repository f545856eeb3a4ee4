// The specialization constants a module declares (clSetProgramSpecializationConstant checks
// ids and sizes against them before any build).
#include <map>
#include <spirv/unified1/spirv.hpp>

#include "compiler/compiler.h"
#include "compiler/spirv/module.h"

namespace manifold::compiler {

std::map<uint32_t, size_t> il_spec_constants(std::span<const uint8_t> il) {
  std::map<uint32_t, size_t> sizes;
  std::optional<std::vector<uint32_t>> words = spirv::words_of(il);
  std::string error;
  if (!words) return sizes;
  std::optional<spirv::Module> module = spirv::parse(*words, &error);
  if (!module) return sizes;
  std::map<uint32_t, uint32_t> spec_ids;  // constant id -> SpecId
  std::map<uint32_t, size_t> type_sizes;  // scalar type id -> bytes
  for (const spirv::Instruction& inst : module->instructions) {
    switch (inst.opcode) {
      case spv::OpDecorate:
        if (inst.operands.size() > 2 && inst.operands[1] == spv::DecorationSpecId)
          spec_ids[inst.operands[0]] = inst.operands[2];
        break;
      case spv::OpTypeBool:
        type_sizes[inst.id] = 1;  // the spec: a boolean is set with a cl_uchar
        break;
      case spv::OpTypeInt:
      case spv::OpTypeFloat:
        type_sizes[inst.id] = inst.operands[0] / 8;
        break;
      case spv::OpSpecConstantTrue:
      case spv::OpSpecConstantFalse:
      case spv::OpSpecConstant: {
        auto id = spec_ids.find(inst.id);
        auto size = type_sizes.find(inst.type);
        if (id != spec_ids.end() && size != type_sizes.end()) sizes[id->second] = size->second;
        break;
      }
      default:
        break;
    }
  }
  return sizes;
}

}  // namespace manifold::compiler
