// The OpenCL C builtins the footprint analysis knows by their (Itanium-mangled) names.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "compiler/footprint.h"

namespace manifold::compiler::footprint {

// "_Z13get_global_idj" -> "get_global_id"; names that are not mangled stay as they are.
std::string_view plain_name(std::string_view mangled);

// get_global_id and the other work-item functions a Symbol stands for. uniform_groups: every
// group has the enqueued size, so get_local_size is that size.
std::optional<SymbolKind> work_item_symbol(std::string_view plain, bool uniform_groups);

// vloadN, vstoreN and their half forms: `elements` of `element_bytes` each at the pointer plus
// offset x `stride_elements` elements.
struct VectorAccess {
  bool write = false;
  unsigned elements = 1;
  unsigned stride_elements = 1;
  unsigned element_bytes = 0;  // 0: the vector's own element type decides
  unsigned offset_operand = 0, pointer_operand = 1;
};
std::optional<VectorAccess> vector_access(std::string_view plain);
// The bytes of the scalar a vload/vstore's pointer points to, read from the mangled name
// (`_Z7vstore3Dv3_tmPU3AS1t`: ushort): the value's IR type may be coerced by the calling
// convention (a ushort3 passed as one i64). nullopt for a name it cannot read.
std::optional<unsigned> pointee_bytes(std::string_view mangled);

// to_global, to_local, to_private: the same address in another address space, or null.
bool address_space_conversion(std::string_view plain);

// What a call to a builtin that remains after inlining means for splitting a kernel.
enum class CallKind {
  Harmless,   // no memory effects the footprint must know (queries, math, barriers, fences)
  Atomic,     // an atomic builtin: only local memory keeps the kernel splittable
  ArgMemory,  // reaches memory only through its pointer arguments (fract, async copies...)
  Printf,
  Pipe,
  Image,
  Enqueue,
  Unknown,
};
CallKind classify_call(std::string_view plain);

}  // namespace manifold::compiler::footprint
