// OpenCL C -> LLVM IR with clang in-process.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/compiler.h"
#include "compiler/options.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace manifold::compiler {

// Module flag set when the program was compiled with -cl-kernel-arg-info.
inline constexpr const char* kArgInfoRequestedFlag = "manifold.kernel_arg_info";

struct FrontendResult {
  std::unique_ptr<llvm::Module> module;  // null on failure
  std::string log;
};

// Compiles one source (plus in-memory headers) to unoptimized IR for the target. The module
// keeps clang's OpenCL address spaces (fake map: 1 global, 2 constant, 3 local, 4 generic).
FrontendResult run_frontend(llvm::LLVMContext& context, std::string_view source,
                            const ParsedOptions& options,
                            const std::vector<std::pair<std::string, std::string>>& headers,
                            const Target& target);

// The OpenCL C version the program is compiled as: -cl-std, else the highest 1.x the device
// accepts (the spec's default).
unsigned effective_cl_version(const ParsedOptions& options, const Target& target);

// The clang -cl-ext value for the target: everything off, then exactly what it supports.
std::string cl_ext_argument(const Target& target);

}  // namespace manifold::compiler
