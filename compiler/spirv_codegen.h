// SPIR-V emission with LLVM's SPIR-V backend, made safe for many builds in one process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace manifold::compiler {

// Emits `module` as a SPIR-V binary into *code; false with a message in *log. Builds are
// serialized: the backend keeps module state in static objects.
bool emit_spirv(llvm::Module& module, llvm::TargetMachine& machine, std::vector<uint8_t>* code,
                std::string* log);

}  // namespace manifold::compiler
