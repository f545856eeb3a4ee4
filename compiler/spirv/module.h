// A SPIR-V module as the reader sees it: SPIRV-Tools validates the binary for the OpenCL
// environment its version implies and parses it into instructions; everything after that is
// Manifold's own (compiler/spirv/reader.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace manifold::compiler::spirv {

// One instruction: its opcode, result type and result id (0 when it has none) and the words
// after them (for OpExtInst: set, instruction number, operands).
struct Instruction {
  uint32_t opcode = 0;
  uint32_t type = 0;
  uint32_t id = 0;
  std::vector<uint32_t> operands;

  // A literal string starting at operands[first]; *next (if given) is the word after it.
  std::string string_at(size_t first, size_t* next = nullptr) const;
};

struct Module {
  uint32_t version = 0;  // 0x00MMmm00
  uint32_t bound = 0;    // every id is below it
  std::vector<Instruction> instructions;
};

// The SPIR-V versions the devices report (CL_DEVICE_IL_VERSION), as (major, minor): 1.0 up to
// this.
inline constexpr unsigned kHighestMinorVersion = 2;
// The versions the reader takes: also 1.3 and 1.4, which SPIRV-LLVM-Translator writes by default
// (a module of 1.0-1.2 code with 1.4's NoSignedWrap or an extension's instructions), validated
// against SPIR-V's universal rules, as SPIRV-Tools has no OpenCL environment of those versions.
// Not reported until the CTS's SPIR-V 1.3 and 1.4 tests have run against the reader.
inline constexpr unsigned kHighestReadMinorVersion = 4;

// Checks the header and validates the module with SPIRV-Tools for the OpenCL environment of its
// version (SPIR-V 1.0: OpenCL 2.1, 1.1 and 1.2: OpenCL 2.2); a module of 1.3 or 1.4, or one
// declaring Float16 or Int64Atomics (granted by OpenCL extensions), against SPIR-V's universal
// rules. Debug information and LinkageAttributes on entry points are left out of the validation
// (SPIRV-Tools refuses some that producers write; neither changes what a kernel computes). False
// with the reason in *error.
bool validate(std::span<const uint32_t> words, std::string* error);

// The checks clCreateProgramWithIL makes: a SPIR-V header of a version the devices take and a
// stream of whole instructions. The full validation (validate) comes with the first build: a
// module found in the program cache was validated when it was built.
bool well_formed(std::span<const uint32_t> words, std::string* error);

// The minor version of a module with a SPIR-V 1.x header; nullopt for anything else.
std::optional<unsigned> minor_version(std::span<const uint32_t> words);

// Validates the module against SPIR-V's universal rules of its version (no client API's
// environment). False with the reason in *error.
bool validate_universal(std::span<const uint32_t> words, std::string* error);

// Parses a valid module; nullopt with the reason in *error.
std::optional<Module> parse(std::span<const uint32_t> words, std::string* error);

// The words of an IL given as bytes (copied: the bytes need not be aligned); nullopt when the
// length is not a whole number of words.
std::optional<std::vector<uint32_t>> words_of(std::span<const uint8_t> bytes);

}  // namespace manifold::compiler::spirv
