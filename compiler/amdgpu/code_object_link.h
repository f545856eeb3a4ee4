// Links one relocatable AMDGPU object into a code object (a shared ELF the HSA loader takes),
// with lld's ELF driver in this process.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace manifold::compiler {

// False with lld's messages in *log. Undefined symbols are errors (--no-undefined). Calls are
// serialized: lld keeps its state in globals.
bool link_code_object(std::span<const uint8_t> object, std::vector<uint8_t>* code_object,
                      std::string* log);

}  // namespace manifold::compiler
