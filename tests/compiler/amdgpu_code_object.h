// Reading AMDGPU code objects in tests: the ELF header, the dynamic symbols and the
// NT_AMDGPU_METADATA note (msgpack) with each kernel's argument layout.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace amdgpu_test {

struct KernelArgument {
  uint64_t offset = 0, size = 0;
  std::string value_kind;     // by_value, global_buffer, hidden_* ...
  std::string address_space;  // global, constant (pointers only)
};

struct KernelMetadata {
  std::vector<KernelArgument> args;
  uint64_t kernarg_segment_size = 0;
  uint64_t group_segment_fixed_size = 0;  // static LDS bytes
  uint64_t wavefront_size = 0;
  uint64_t max_flat_workgroup_size = 0;
  bool uses_dynamic_stack = false;
};

struct CodeObject {
  uint16_t machine = 0;     // e_machine: EM_AMDGPU (224)
  uint8_t os_abi = 0;       // ELFOSABI_AMDGPU_HSA (64)
  uint8_t abi_version = 0;  // 3: code object v5
  uint16_t type = 0;        // ET_DYN (3)
  std::string processor;    // the metadata's amdhsa.target, e.g. amdgcn-amd-amdhsa--gfx90a
  std::vector<std::string> undefined_symbols;  // .dynsym entries without a definition
  std::vector<std::string> defined_symbols;    // kernels' descriptors (<name>.kd), variables
  std::map<std::string, KernelMetadata> kernels;
};

// nullopt with *error when the bytes are no ELF or the note is missing or unreadable.
std::optional<CodeObject> read_code_object(std::span<const uint8_t> bytes, std::string* error);

}  // namespace amdgpu_test
