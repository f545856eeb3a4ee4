// Targets by name, for offline compilation (`manifold compile --device-target NAME`). Adding a
// target is one entry in kTargets.
#include <cctype>
#include <string>

#include "compiler/binary_format.h"
#include "compiler/compiler.h"

namespace manifold::compiler {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// "sm_90" -> nvptx_target(9, 0); "sm_100" -> (10, 0).
std::optional<Target> nvptx_named(std::string_view name) {
  const std::string_view digits = name.substr(3);
  if (digits.size() < 2 || digits.size() > 3) return std::nullopt;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  const unsigned number = static_cast<unsigned>(std::stoul(std::string(digits)));
  return nvptx_target(number / 10, number % 10);
}

// "spirv64", "spirv64+fp64+fp16+int64-atomics" -> spirv_target with those device features.
std::optional<Target> spirv_named(std::string_view name) {
  SpirvDeviceFeatures features;
  std::string_view rest = name.substr(std::string_view("spirv64").size());
  while (!rest.empty()) {
    if (rest[0] != '+') return std::nullopt;
    rest.remove_prefix(1);
    const std::string_view feature = rest.substr(0, rest.find('+'));
    rest.remove_prefix(feature.size());
    if (feature == "fp16")
      features.fp16 = true;
    else if (feature == "fp64")
      features.fp64 = true;
    else if (feature == "int64-atomics")
      features.int64_atomics = true;
    else
      return std::nullopt;
  }
  return spirv_target(features);
}

struct NamedTarget {
  const char* form;         // what the usage text shows
  const char* description;  // likewise
  bool (*matches)(std::string_view name);
  std::optional<Target> (*make)(std::string_view name);
};

const NamedTarget kTargets[] = {
    {"x86-64", "this host's CPU (Manifold's CPU device)",
     [](std::string_view name) { return name == "x86-64" || name == "host"; },
     [](std::string_view) -> std::optional<Target> { return host_cpu_target(); }},
    {"sm_XY", "NVIDIA GPU of compute capability X.Y (PTX)",
     [](std::string_view name) { return starts_with(name, "sm_"); }, nvptx_named},
    {"gfxNNN[:sramecc+|-][:xnack+|-]", "AMD GPU (code object v5)",
     [](std::string_view name) { return starts_with(name, "gfx"); }, amdgpu_target},
    {"spirv64[+fp16][+fp64][+int64-atomics]", "SPIR-V 1.2 for Level Zero devices",
     [](std::string_view name) { return starts_with(name, "spirv64"); }, spirv_named},
};

}  // namespace

std::optional<Target> target_named(std::string_view name, std::string* why) {
  for (const NamedTarget& entry : kTargets) {
    if (!entry.matches(name)) continue;
    std::optional<Target> target = entry.make(name);
    if (!target && why)
      *why = "'" + std::string(name) + "' is no " + entry.description + " LLVM knows";
    return target;
  }
  if (why) *why = "unknown target '" + std::string(name) + "'";
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> target_name_forms() {
  std::vector<std::pair<std::string, std::string>> forms;
  for (const NamedTarget& entry : kTargets) forms.emplace_back(entry.form, entry.description);
  return forms;
}

std::optional<std::vector<uint8_t>> native_code_of(std::span<const uint8_t> binary,
                                                   std::string* error) {
  std::optional<ProgramBinary> program = deserialize_executable(binary, "", "an executable", error);
  if (!program) return std::nullopt;
  // Code objects (AMDGPU) and CPU objects are in `object`; PTX text is NVPTX's payload.
  if (!program->object.empty()) return std::move(program->object);
  return std::move(program->bitcode);
}

}  // namespace manifold::compiler
