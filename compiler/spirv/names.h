// Names of SPIR-V opcodes, capabilities, decorations and builtins for build logs.
#pragma once

#include <cstdint>
#include <string>

namespace manifold::compiler::spirv {

std::string opcode_name(uint32_t opcode);
std::string capability_name(uint32_t capability);
std::string decoration_name(uint32_t decoration);
std::string builtin_name(uint32_t builtin);
// The OpenCL.std extended instruction's name ("s_abs", "vloadn"); empty when unknown.
std::string opencl_std_name(uint32_t instruction);

}  // namespace manifold::compiler::spirv
