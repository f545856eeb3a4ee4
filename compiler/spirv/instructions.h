// The instruction translators of function bodies (compiler/spirv/*.cpp) and the error they
// throw for what the reader does not support, caught per function.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace llvm {
class Value;
}  // namespace llvm

namespace manifold::compiler::spirv {

class Reader;
struct Instruction;

struct ReaderError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The value of `inst`'s operand k (an id); throws ReaderError naming it when it is undefined.
llvm::Value* operand_value(Reader& reader, const Instruction& inst, size_t k);

// One instruction of a function body (not OpLabel or OpPhi); its result, or null for none.
llvm::Value* translate_instruction(Reader& reader, const Instruction& inst);
// Atomics, barriers, loads, stores, variables and pointer arithmetic (memory.cpp); null with
// *handled false when `inst` is none of those.
llvm::Value* translate_memory_instruction(Reader& reader, const Instruction& inst, bool* handled);
// Work-group async copies and their events, and work-group collectives (groups.cpp); null with
// *handled false when `inst` is none of those.
llvm::Value* translate_group_instruction(Reader& reader, const Instruction& inst, bool* handled);
// Images and samplers (images.cpp); null with *handled false when `inst` is none of those.
llvm::Value* translate_image_instruction(Reader& reader, const Instruction& inst, bool* handled);

}  // namespace manifold::compiler::spirv
