#include "compiler/spirv/names.h"

#include <unordered_map>

namespace manifold::compiler::spirv {
namespace {

using NameTable = std::unordered_map<uint32_t, const char*>;

std::string lookup(const NameTable& table, uint32_t value, const char* kind) {
  auto it = table.find(value);
  if (it != table.end()) return it->second;
  return std::string(kind) + " " + std::to_string(value);
}

}  // namespace

std::string opcode_name(uint32_t opcode) {
#define SPIRV_OPCODE(value, name) {value, name},
  static const NameTable table = {
#include "compiler/spirv/spirv_names.inc"
  };
#undef SPIRV_OPCODE
  return lookup(table, opcode, "opcode");
}

std::string capability_name(uint32_t capability) {
#define SPIRV_CAPABILITY(value, name) {value, name},
  static const NameTable table = {
#include "compiler/spirv/spirv_names.inc"
  };
#undef SPIRV_CAPABILITY
  return lookup(table, capability, "capability");
}

std::string decoration_name(uint32_t decoration) {
#define SPIRV_DECORATION(value, name) {value, name},
  static const NameTable table = {
#include "compiler/spirv/spirv_names.inc"
  };
#undef SPIRV_DECORATION
  return lookup(table, decoration, "decoration");
}

std::string builtin_name(uint32_t builtin) {
#define SPIRV_BUILTIN(value, name) {value, name},
  static const NameTable table = {
#include "compiler/spirv/spirv_names.inc"
  };
#undef SPIRV_BUILTIN
  return lookup(table, builtin, "BuiltIn");
}

std::string opencl_std_name(uint32_t instruction) {
  static const NameTable table = {
#include "compiler/spirv/opencl_std_names.inc"
  };
  auto it = table.find(instruction);
  return it == table.end() ? std::string() : it->second;
}

}  // namespace manifold::compiler::spirv
