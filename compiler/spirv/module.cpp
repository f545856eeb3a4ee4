#include "compiler/spirv/module.h"

#include <spirv-tools/libspirv.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <spirv/unified1/spirv.hpp>

namespace manifold::compiler::spirv {
namespace {

constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kMagicSwapped = 0x03022307;

struct ContextDeleter {
  void operator()(spv_context c) const { spvContextDestroy(c); }
};
using ContextPtr = std::unique_ptr<std::remove_pointer_t<spv_context>, ContextDeleter>;

std::string take_diagnostic(spv_diagnostic diagnostic) {
  std::string text = diagnostic && diagnostic->error ? diagnostic->error : "unknown error";
  spvDiagnosticDestroy(diagnostic);
  return text;
}

uint32_t native_word(uint32_t word, bool swapped) {
  return swapped ? __builtin_bswap32(word) : word;
}

// The module's version (0x00MMmm00), or 0 without a SPIR-V header.
uint32_t header_version(std::span<const uint32_t> words) {
  if (words.size() < 5 || (words[0] != kMagic && words[0] != kMagicSwapped)) return 0;
  return native_word(words[1], words[0] == kMagicSwapped);
}

// Whether the module's OpCapability instructions (they come first, after the header) name a
// capability that the OpenCL environment grants only with an extension.
bool declares_extension_capability(std::span<const uint32_t> words) {
  constexpr size_t kHeaderWords = 5;
  for (size_t i = kHeaderWords; i < words.size();) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    if (count == 0 || opcode != spv::OpCapability) return false;
    if (count >= 2 && i + 1 < words.size() &&
        (words[i + 1] == spv::CapabilityFloat16 || words[i + 1] == spv::CapabilityInt64Atomics))
      return true;
    i += count;
  }
  return false;
}

// A literal string at words[first...] (of an instruction ending before `end`).
std::string literal_string(std::span<const uint32_t> words, size_t first, size_t end) {
  std::string text;
  for (size_t i = first; i < end; ++i)
    for (int byte = 0; byte < 4; ++byte) {
      const char c = static_cast<char>((words[i] >> (8 * byte)) & 0xff);
      if (c == '\0') return text;
      text += c;
    }
  return text;
}

// The module without what SPIRV-Tools refuses in producers' output although it changes nothing
// the kernels compute: debug information (OpenCL.DebugInfo.100, the translator's SPIRV.debug;
// SPIRV-LLVM-Translator writes some that SPIRV-Tools refuses, a DebugTypePointer to a qualified
// type) and LinkageAttributes on an entry point's function (older translators export each kernel
// so; the reader gives the kernel that name anyway). Nullopt when there is none of it.
std::optional<std::vector<uint32_t>> without_what_validation_refuses(
    std::span<const uint32_t> words) {
  constexpr size_t kHeaderWords = 5;
  if (words.size() < kHeaderWords || words[0] != kMagic) return std::nullopt;
  std::vector<uint32_t> debug_sets, entry_points;
  bool refused = false;
  for (size_t i = kHeaderWords; i < words.size();) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    if (count == 0 || i + count > words.size()) return std::nullopt;
    if (opcode == spv::OpFunction) break;  // what is looked for comes before functions
    if (opcode == spv::OpExtInstImport && count >= 3) {
      const std::string set = literal_string(words, i + 2, i + count);
      if (set == "OpenCL.DebugInfo.100" || set == "SPIRV.debug") debug_sets.push_back(words[i + 1]);
    }
    if (opcode == spv::OpEntryPoint && count >= 3) entry_points.push_back(words[i + 2]);
    if (opcode == spv::OpDecorate && count >= 3 &&
        words[i + 2] == spv::DecorationLinkageAttributes &&
        std::find(entry_points.begin(), entry_points.end(), words[i + 1]) != entry_points.end())
      refused = true;
    i += count;
  }
  if (debug_sets.empty() && !refused) return std::nullopt;
  auto is_debug_set = [&](uint32_t id) {
    return std::find(debug_sets.begin(), debug_sets.end(), id) != debug_sets.end();
  };
  std::vector<uint32_t> out(words.begin(), words.begin() + kHeaderWords);
  for (size_t i = kHeaderWords; i < words.size();) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    if (count == 0 || i + count > words.size()) return std::nullopt;
    const bool drop =
        (opcode == spv::OpExtInstImport && count >= 2 && is_debug_set(words[i + 1])) ||
        (opcode == spv::OpExtInst && count >= 4 && is_debug_set(words[i + 3])) ||
        (opcode == spv::OpDecorate && count >= 3 &&
         words[i + 2] == spv::DecorationLinkageAttributes &&
         std::find(entry_points.begin(), entry_points.end(), words[i + 1]) != entry_points.end());
    if (!drop) out.insert(out.end(), words.begin() + i, words.begin() + i + count);
    i += count;
  }
  return out;
}

}  // namespace

std::string Instruction::string_at(size_t first, size_t* next) const {
  std::string text;
  size_t i = first;
  for (; i < operands.size(); ++i) {
    const uint32_t word = operands[i];
    bool ended = false;
    for (int byte = 0; byte < 4; ++byte) {
      const char c = static_cast<char>((word >> (8 * byte)) & 0xff);
      if (c == '\0') {
        ended = true;
        break;
      }
      text += c;
    }
    if (ended) {
      ++i;
      break;
    }
  }
  if (next) *next = i;
  return text;
}

std::optional<unsigned> minor_version(std::span<const uint32_t> words) {
  const uint32_t version = header_version(words);
  if ((version >> 16) != 1) return std::nullopt;
  return (version >> 8) & 0xff;
}

std::optional<std::vector<uint32_t>> words_of(std::span<const uint8_t> bytes) {
  if (bytes.size() % 4 != 0) return std::nullopt;
  std::vector<uint32_t> words(bytes.size() / 4);
  if (!bytes.empty()) std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

namespace {

// The module's SPIR-V minor version when the header names a version the devices take.
std::optional<unsigned> supported_minor_version(std::span<const uint32_t> words,
                                                std::string* error) {
  const uint32_t version = header_version(words);
  if (!version) {
    *error = "not a SPIR-V module (no SPIR-V magic number)";
    return std::nullopt;
  }
  const unsigned major = (version >> 16) & 0xff, minor = (version >> 8) & 0xff;
  if (major != 1 || minor > kHighestReadMinorVersion) {
    *error = "SPIR-V " + std::to_string(major) + "." + std::to_string(minor) +
             " is not supported (the devices take SPIR-V 1.0 to 1.4)";
    return std::nullopt;
  }
  return minor;
}

}  // namespace

bool well_formed(std::span<const uint32_t> words, std::string* error) {
  if (!supported_minor_version(words, error)) return false;
  const bool swapped = words[0] == kMagicSwapped;
  constexpr size_t kHeaderWords = 5;
  if (native_word(words[3], swapped) == 0) {
    *error = "invalid SPIR-V header: the id bound is 0";
    return false;
  }
  bool in_function = false;
  for (size_t i = kHeaderWords; i < words.size();) {
    const uint32_t count = native_word(words[i], swapped) >> 16;
    const uint32_t opcode = native_word(words[i], swapped) & 0xffff;
    if (count == 0 || count > words.size() - i) {
      *error = "invalid SPIR-V: the instruction at word " + std::to_string(i) +
               (count == 0 ? " has a word count of 0" : " runs past the end of the module");
      return false;
    }
    if (opcode == spv::OpFunction) in_function = true;
    if (opcode == spv::OpFunctionEnd) in_function = false;
    i += count;
  }
  if (in_function) {
    *error = "invalid SPIR-V: the module ends inside a function (no OpFunctionEnd)";
    return false;
  }
  return true;
}

bool validate(std::span<const uint32_t> words, std::string* error) {
  const std::optional<unsigned> supported = supported_minor_version(words, error);
  if (!supported) return false;
  const unsigned minor = *supported;
  if (std::optional<std::vector<uint32_t>> accepted = without_what_validation_refuses(words))
    return validate(*accepted, error);
  // SPIRV-Tools' OpenCL environments refuse Float16 and Int64Atomics outright, though the
  // environment spec allows them with cl_khr_fp16 and cl_khr_int64_base_atomics, which SPIRV-Tools
  // cannot know a device has. A module declaring them is validated against SPIR-V's universal
  // rules instead; whether the device has them is checked when it is built for one.
  if (declares_extension_capability(words) || minor > kHighestMinorVersion)
    return validate_universal(words, error);
  // SPIR-V 1.0 is the version of OpenCL 2.1's environment, 1.1 and 1.2 of OpenCL 2.2's: the
  // environment whose rules the module was written for (the environment spec's "Consumption").
  const spv_target_env env = minor == 0 ? SPV_ENV_OPENCL_2_1 : SPV_ENV_OPENCL_2_2;
  ContextPtr context(spvContextCreate(env));
  spv_validator_options options = spvValidatorOptionsCreate();
  spv_const_binary_t binary{words.data(), words.size()};
  spv_diagnostic diagnostic = nullptr;
  const spv_result_t result = spvValidateWithOptions(context.get(), options, &binary, &diagnostic);
  spvValidatorOptionsDestroy(options);
  if (result != SPV_SUCCESS) {
    *error = "invalid SPIR-V: " + take_diagnostic(diagnostic);
    return false;
  }
  spvDiagnosticDestroy(diagnostic);
  return true;
}

bool validate_universal(std::span<const uint32_t> words, std::string* error) {
  const uint32_t version = header_version(words);
  const unsigned minor = (version >> 8) & 0xff;
  if (!version || (version >> 16) != 1 || minor > kHighestReadMinorVersion) {
    *error = "not a SPIR-V 1.0 to 1.4 module";
    return false;
  }
  static constexpr spv_target_env kUniversal[] = {SPV_ENV_UNIVERSAL_1_0, SPV_ENV_UNIVERSAL_1_1,
                                                  SPV_ENV_UNIVERSAL_1_2, SPV_ENV_UNIVERSAL_1_3,
                                                  SPV_ENV_UNIVERSAL_1_4};
  const spv_target_env env = kUniversal[minor];
  ContextPtr context(spvContextCreate(env));
  spv_const_binary_t binary{words.data(), words.size()};
  spv_diagnostic diagnostic = nullptr;
  if (spvValidate(context.get(), &binary, &diagnostic) != SPV_SUCCESS) {
    *error = "invalid SPIR-V: " + take_diagnostic(diagnostic);
    return false;
  }
  spvDiagnosticDestroy(diagnostic);
  return true;
}

std::optional<Module> parse(std::span<const uint32_t> words, std::string* error) {
  Module module;
  module.version = header_version(words);
  ContextPtr context(spvContextCreate(SPV_ENV_UNIVERSAL_1_4));
  auto on_header = [](void* user, spv_endianness_t, uint32_t, uint32_t version, uint32_t,
                      uint32_t id_bound, uint32_t) -> spv_result_t {
    auto* m = static_cast<Module*>(user);
    m->version = version;
    m->bound = id_bound;
    return SPV_SUCCESS;
  };
  auto on_instruction = [](void* user, const spv_parsed_instruction_t* parsed) -> spv_result_t {
    auto* m = static_cast<Module*>(user);
    Instruction inst;
    inst.opcode = parsed->opcode;
    inst.type = parsed->type_id;
    inst.id = parsed->result_id;
    // Operand words follow the opcode word, result type and result id.
    size_t skip = 1 + (parsed->type_id ? 1 : 0) + (parsed->result_id ? 1 : 0);
    inst.operands.assign(parsed->words + skip, parsed->words + parsed->num_words);
    m->instructions.push_back(std::move(inst));
    return SPV_SUCCESS;
  };
  spv_diagnostic diagnostic = nullptr;
  if (spvBinaryParse(context.get(), &module, words.data(), words.size(), on_header, on_instruction,
                     &diagnostic) != SPV_SUCCESS) {
    *error = "unreadable SPIR-V: " + take_diagnostic(diagnostic);
    return std::nullopt;
  }
  spvDiagnosticDestroy(diagnostic);
  return module;
}

}  // namespace manifold::compiler::spirv
