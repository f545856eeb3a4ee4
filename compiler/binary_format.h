// Manifold's program binary: a versioned, checksummed container of LLVM bitcode plus the kernel
// metadata, so clCreateProgramWithBinary and the CPU loader need no recompilation from source.
//
// Layout (little endian):
//   char     magic[8] = "MNFDCLB1"
//   uint32   format version (kFormatVersion)
//   uint32   BinaryType
//   uint64   payload size in bytes
//   uint64   xxh3-64 of the payload
//   payload: strings and arrays, each length-prefixed (uint64), see binary_format.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/compiler.h"

namespace manifold::compiler {

// What the CPU loader needs beyond the OpenCL-visible KernelInfo.
struct KernelExec {
  std::string entry_symbol;             // the work-group function
  uint64_t static_local_size = 0;       // bytes of the kernel's static __local variables
  uint64_t scratch_bytes_per_item = 0;  // spilled values + private arrays, per work-item
  bool has_barriers = false;
  bool uses_printf = false;
  // The item-loop function: the kernel's code run for one work-item after another, its own
  // vector types kept as SIMD (no scalarizing, no vectorizing across work-items) and barriers
  // dropped. Right for any group of one work-item; for larger groups only without barriers.
  std::string item_loop_symbol;
  bool item_loop_fits_any_group = false;  // the kernel has no barriers
  bool item_loop_preferred = false;       // and runs faster so (workgroup/form_choice.cpp)
  // Work-items the item loop runs at once (compiler/item_lockstep.h; 0: one at a time). It is
  // the faster form for groups of at least that many.
  uint32_t item_loop_lockstep_items = 0;
  // The kernel's results do not depend on how the NDRange is divided into work-groups: no
  // barriers, no __local memory, no query but global ids, sizes, offsets and work_dim. The
  // CPU device may then run it with groups of its own choosing (groups of one work-item
  // become vectors of work-items).
  bool partition_independent = false;
};

struct ProgramBinary {
  BinaryType type = BinaryType::None;
  std::string triple;
  std::string options;   // the options it was compiled/linked with
  std::string producer;  // compiler identification; a mismatch means recompile
  std::vector<KernelInfo> kernels;
  std::vector<KernelExec> execs;  // parallel to kernels, Executable binaries only
  std::vector<uint8_t> bitcode;
  // Executables only: machine code of `bitcode` for exactly this CPU and feature string, as a
  // relocatable object. Loading it skips code generation; for another CPU the loader falls
  // back to the bitcode.
  std::string cpu;
  std::string features;
  std::vector<uint8_t> object;
  // Executables: the bytes of the program's own global-address-space variables
  // (CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE), counted before optimization.
  uint64_t global_variable_bytes = 0;
};

std::vector<uint8_t> serialize(const ProgramBinary& program);
// nullopt with *error on a bad magic, version, size or checksum, or a malformed payload.
std::optional<ProgramBinary> deserialize(std::span<const uint8_t> bytes, std::string* error);
// An executable binary whose triple starts with `triple_prefix` (any triple when empty); nullopt
// with *error ("not <what>") for anything else.
std::optional<ProgramBinary> deserialize_executable(std::span<const uint8_t> bytes,
                                                    std::string_view triple_prefix,
                                                    const char* what, std::string* error);

// Identifies this compiler build; binaries from another producer are rejected at load.
const std::string& producer_id();

}  // namespace manifold::compiler
