// The SPIR-V reader: a validated SPIR-V module for the OpenCL environment becomes an LLVM module
// shaped like the frontend's output for the same target (compiler/frontend.h): the target's
// address spaces, kernels with the target's calling convention and kernel_arg_* metadata,
// OpenCL C builtins called by their mangled names, so that every target pipeline takes it as
// it takes OpenCL C.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compiler/compiler.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace manifold::compiler::spirv {

// Values given with clSetProgramSpecializationConstant: SpecId -> the value's bytes.
using SpecValues = std::map<uint32_t, std::vector<uint8_t>>;

struct ReadResult {
  std::unique_ptr<llvm::Module> module;  // null on failure
  std::string log;                       // why it failed: the instruction, capability...
};

// `words`: a module that passed validate() (compiler/spirv/module.h).
ReadResult read(llvm::LLVMContext& context, std::span<const uint32_t> words, const Target& target,
                const SpecValues& spec_values, bool kernel_arg_info);

}  // namespace manifold::compiler::spirv
