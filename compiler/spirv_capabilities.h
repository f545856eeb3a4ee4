// The checks every SPIR-V module Manifold hands to a Level Zero driver passes: SPIRV-Tools'
// validation for the OpenCL environment of its version, only the capabilities the Level Zero
// spec lists for OpenCL kernels (the optional ones only where the device reports them), and no
// import left unresolved.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/compiler.h"

namespace manifold::compiler {

// The capabilities (spv::Capability values) a module for `target` may declare: Addresses,
// Float16Buffer, Int64, Int16, Int8, Kernel, Linkage, Vector16, GenericPointer, Groups, plus
// Float16, Float64, Int64Atomics and ImageBasic where the target has them.
std::vector<uint32_t> allowed_spirv_capabilities(const Target& target);

// Validates `module` (bytes of a SPIR-V binary) and checks its capabilities and imports. False
// with the first problem in *why.
bool check_emitted_spirv(std::span<const uint8_t> module, const Target& target, std::string* why);

// LLVM's SPIR-V backend declares Float16 for every half type, also where half is only the pointee
// of pointers (vload_half, vstore_half on a `half*`), which is all that Float16Buffer allows and
// what devices without cl_khr_fp16 take. Rewrites the capability so on such a target when the
// module has no value of half.
void declare_float16_buffer_only(std::vector<uint8_t>& module, const Target& target);

}  // namespace manifold::compiler
