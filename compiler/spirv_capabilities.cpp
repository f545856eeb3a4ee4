#include "compiler/spirv_capabilities.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <spirv/unified1/spirv.hpp>

#include "compiler/spirv/module.h"

namespace manifold::compiler {
namespace {

bool has_extension(const Target& target, const char* name) {
  return std::find(target.extensions.begin(), target.extensions.end(), name) !=
         target.extensions.end();
}

const char* capability_name(uint32_t capability) {
  switch (capability) {
    case spv::CapabilityFloat16:
      return "Float16";
    case spv::CapabilityFloat64:
      return "Float64";
    case spv::CapabilityInt64Atomics:
      return "Int64Atomics";
    case spv::CapabilityImageBasic:
      return "ImageBasic";
    case spv::CapabilityDeviceEnqueue:
      return "DeviceEnqueue";
    case spv::CapabilityPipes:
      return "Pipes";
    case spv::CapabilitySubgroupDispatch:
      return "SubgroupDispatch";
    default:
      return nullptr;
  }
}

}  // namespace

std::vector<uint32_t> allowed_spirv_capabilities(const Target& target) {
  std::vector<uint32_t> allowed = {
      spv::CapabilityAddresses, spv::CapabilityFloat16Buffer, spv::CapabilityInt64,
      spv::CapabilityInt16,     spv::CapabilityInt8,          spv::CapabilityKernel,
      spv::CapabilityLinkage,   spv::CapabilityVector16,      spv::CapabilityGenericPointer,
      spv::CapabilityGroups,
  };
  if (target.fp16) allowed.push_back(spv::CapabilityFloat16);
  if (target.fp64) allowed.push_back(spv::CapabilityFloat64);
  if (has_extension(target, "cl_khr_int64_base_atomics"))
    allowed.push_back(spv::CapabilityInt64Atomics);
  if (target.images) allowed.push_back(spv::CapabilityImageBasic);
  return allowed;
}

bool check_emitted_spirv(std::span<const uint8_t> module, const Target& target, std::string* why) {
  std::optional<std::vector<uint32_t>> words = spirv::words_of(module);
  if (!words) {
    *why = "the module is not a whole number of words";
    return false;
  }
  if (!spirv::validate(*words, why)) return false;
  std::optional<spirv::Module> parsed = spirv::parse(*words, why);
  if (!parsed) return false;
  const std::vector<uint32_t> allowed = allowed_spirv_capabilities(target);
  std::map<uint32_t, std::string> names;
  std::map<uint32_t, uint32_t> defining_opcode;
  std::vector<std::pair<uint32_t, std::string>> imports;
  for (const spirv::Instruction& inst : parsed->instructions) {
    if (inst.id) defining_opcode[inst.id] = inst.opcode;
    if (inst.opcode == spv::OpCapability && !inst.operands.empty()) {
      const uint32_t capability = inst.operands[0];
      if (std::find(allowed.begin(), allowed.end(), capability) == allowed.end()) {
        const char* name = capability_name(capability);
        *why = "the module declares capability " +
               (name ? std::string(name) : std::to_string(capability)) +
               ", which the device does not support";
        return false;
      }
    } else if (inst.opcode == spv::OpExtension) {
      *why = "the module needs SPIR-V extension " + inst.string_at(0);
      return false;
    } else if (inst.opcode == spv::OpDecorate && inst.operands.size() >= 3 &&
               inst.operands[1] == spv::DecorationLinkageAttributes) {
      size_t next = 0;
      std::string name = inst.string_at(2, &next);
      if (next < inst.operands.size() && inst.operands[next] == spv::LinkageTypeImport)
        imports.emplace_back(inst.operands[0], std::move(name));
    }
  }
  // Built-in variables are imports by the backend's convention (the driver binds them);
  // an imported function is a builtin nothing implements.
  for (const auto& [id, name] : imports)
    if (defining_opcode[id] == spv::OpFunction) {
      *why = "function '" + name + "' is not implemented for SPIR-V devices";
      return false;
    }
  return true;
}

void declare_float16_buffer_only(std::vector<uint8_t>& module, const Target& target) {
  if (target.fp16) return;
  std::optional<std::vector<uint32_t>> words = spirv::words_of(module);
  std::string why;
  std::optional<spirv::Module> parsed = words ? spirv::parse(*words, &why) : std::nullopt;
  if (!parsed) return;
  // Types made of half: half itself, its vectors, and (taken as values) aggregates of them.
  std::vector<uint32_t> half_types;
  auto is_half = [&](uint32_t id) {
    return std::find(half_types.begin(), half_types.end(), id) != half_types.end();
  };
  for (const spirv::Instruction& inst : parsed->instructions) {
    const auto& ops = inst.operands;
    switch (inst.opcode) {
      case spv::OpTypeFloat:
        if (!ops.empty() && ops[0] == 16) half_types.push_back(inst.id);
        break;
      case spv::OpTypeVector:
        if (!ops.empty() && is_half(ops[0])) half_types.push_back(inst.id);
        break;
      case spv::OpTypeStruct:
      case spv::OpTypeArray:
      case spv::OpTypeRuntimeArray:
      case spv::OpTypeFunction:
        // half values in an aggregate or passed to a function: Float16 it is.
        if (std::any_of(ops.begin(), ops.end(), is_half)) return;
        break;
      default:
        if (inst.type && is_half(inst.type)) return;  // a value of half
        break;
    }
  }
  constexpr size_t kHeaderWords = 5;
  for (size_t i = kHeaderWords; i + 1 < words->size();) {
    const uint32_t count = (*words)[i] >> 16, opcode = (*words)[i] & 0xffff;
    if (count == 0 || opcode != spv::OpCapability) break;
    if ((*words)[i + 1] == spv::CapabilityFloat16) {
      (*words)[i + 1] = spv::CapabilityFloat16Buffer;
      std::memcpy(module.data() + 4 * (i + 1), &(*words)[i + 1], 4);
    }
    i += count;
  }
}

}  // namespace manifold::compiler
