#include "compiler/footprint/builtins.h"

#include <array>
#include <cctype>
#include <utility>

namespace manifold::compiler::footprint {
namespace {

bool starts_with_any(std::string_view name, std::initializer_list<std::string_view> prefixes) {
  for (std::string_view p : prefixes)
    if (name.starts_with(p)) return true;
  return false;
}

// "4" -> 4 for the vector widths OpenCL C has; "" -> 1.
std::optional<unsigned> width(std::string_view digits) {
  if (digits.empty()) return 1u;
  for (unsigned n : {2u, 3u, 4u, 8u, 16u})
    if (digits == std::to_string(n)) return n;
  return std::nullopt;
}

// "_rte" and the other rounding suffixes of vstore_half.
std::string_view without_rounding(std::string_view name) {
  for (std::string_view suffix : {"_rte", "_rtz", "_rtp", "_rtn"})
    if (name.ends_with(suffix)) return name.substr(0, name.size() - suffix.size());
  return name;
}

}  // namespace

std::string_view plain_name(std::string_view mangled) {
  if (!mangled.starts_with("_Z")) return mangled;
  size_t at = 2, length = 0;
  while (at < mangled.size() && std::isdigit(static_cast<unsigned char>(mangled[at])))
    length = length * 10 + size_t(mangled[at++] - '0');
  if (length == 0 || at + length > mangled.size()) return mangled;
  return mangled.substr(at, length);
}

std::optional<SymbolKind> work_item_symbol(std::string_view plain, bool uniform_groups) {
  static constexpr std::array<std::pair<std::string_view, SymbolKind>, 7> kQueries = {{
      {"get_global_id", SymbolKind::GlobalId},
      {"get_local_id", SymbolKind::LocalId},
      {"get_group_id", SymbolKind::GroupId},
      {"get_global_size", SymbolKind::GlobalSize},
      {"get_num_groups", SymbolKind::NumGroups},
      {"get_global_offset", SymbolKind::GlobalOffset},
      {"get_enqueued_local_size", SymbolKind::LocalSize},
  }};
  for (const auto& [name, kind] : kQueries)
    if (plain == name) return kind;
  // The last group of a non-uniform NDRange is smaller than the enqueued size.
  if (plain == "get_local_size" && uniform_groups) return SymbolKind::LocalSize;
  return std::nullopt;
}

std::optional<VectorAccess> vector_access(std::string_view plain) {
  VectorAccess out;
  std::string_view rest;
  bool half = false, aligned = false;
  if (plain.starts_with("vloada_half")) {
    rest = plain.substr(11), half = aligned = true;
  } else if (plain.starts_with("vload_half")) {
    rest = plain.substr(10), half = true;
  } else if (plain.starts_with("vload")) {
    rest = plain.substr(5);
    if (rest.empty()) return std::nullopt;
  } else if (plain.starts_with("vstorea_half")) {
    rest = without_rounding(plain.substr(12)), half = aligned = out.write = true;
  } else if (plain.starts_with("vstore_half")) {
    rest = without_rounding(plain.substr(11)), half = out.write = true;
  } else if (plain.starts_with("vstore")) {
    rest = plain.substr(6), out.write = true;
    if (rest.empty()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  std::optional<unsigned> n = width(rest);
  if (!n) return std::nullopt;
  out.elements = *n;
  // vloada_half3 and vstorea_half3 step over four halves, as their alignment asks.
  out.stride_elements = aligned && *n == 3 ? 4 : *n;
  out.element_bytes = half ? 2 : 0;
  out.offset_operand = out.write ? 1 : 0;
  out.pointer_operand = out.write ? 2 : 1;
  return out;
}

std::optional<unsigned> pointee_bytes(std::string_view mangled) {
  const size_t pointer = mangled.rfind('P');
  if (pointer == std::string_view::npos) return std::nullopt;
  std::string_view rest = mangled.substr(pointer + 1);
  // The address space, a vendor qualifier (U3AS1, U8CLglobal), and cv-qualifiers before the type.
  if (rest.starts_with("U")) {
    rest.remove_prefix(1);
    size_t length = 0;
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') {
      length = length * 10 + size_t(rest.front() - '0');
      rest.remove_prefix(1);
    }
    if (length > rest.size()) return std::nullopt;
    rest.remove_prefix(length);
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') rest.remove_prefix(1);
  }
  while (!rest.empty() && (rest.front() == 'K' || rest.front() == 'V')) rest.remove_prefix(1);
  if (rest == "Dh") return 2u;
  if (rest.size() != 1) return std::nullopt;
  switch (rest.front()) {
    case 'c':
    case 'a':
    case 'h':
      return 1u;
    case 's':
    case 't':
      return 2u;
    case 'i':
    case 'j':
    case 'f':
      return 4u;
    case 'l':
    case 'm':
    case 'd':
    case 'x':
    case 'y':
      return 8u;
    default:
      return std::nullopt;
  }
}

bool address_space_conversion(std::string_view plain) {
  if (plain.starts_with("__")) plain.remove_prefix(2);
  return plain == "to_global" || plain == "to_local" || plain == "to_private";
}

CallKind classify_call(std::string_view plain) {
  if (plain == "printf") return CallKind::Printf;
  if (address_space_conversion(plain)) return CallKind::Harmless;
  if (plain.find("pipe") != std::string_view::npos) return CallKind::Pipe;
  if (starts_with_any(plain, {"read_image", "write_image", "get_image"})) return CallKind::Image;
  if (starts_with_any(plain, {"__enqueue_kernel", "enqueue_kernel", "enqueue_marker"}))
    return CallKind::Enqueue;
  if (starts_with_any(plain, {"barrier", "work_group_barrier", "sub_group_barrier", "mem_fence",
                              "read_mem_fence", "write_mem_fence", "atomic_work_item_fence",
                              "work_group_", "sub_group_", "get_", "prefetch"}))
    return CallKind::Harmless;
  if (starts_with_any(plain, {"atomic_", "atom_", "__spirv_Atomic"})) return CallKind::Atomic;
  if (starts_with_any(plain, {"fract", "modf", "sincos", "frexp", "lgamma_r", "remquo",
                              "async_work_group", "wait_group_events"}))
    return CallKind::ArgMemory;
  return CallKind::Unknown;
}

}  // namespace manifold::compiler::footprint
