// What a range of a kernel's work-groups reaches in each buffer argument, so that one NDRange can
// run as parts on several devices (device groups): the compiler proves, per argument, the byte
// offsets a kernel reads and writes as polynomials of values a launch knows (work-item ids, sizes,
// integer arguments); the runtime evaluates them over each part's ids as intervals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace manifold::compiler {

struct NDRange;

// A value an offset is made of.
enum class SymbolKind : uint8_t {
  GlobalId,      // get_global_id(index)
  LocalId,       // get_local_id(index)
  GroupId,       // get_group_id(index)
  GlobalSize,    // get_global_size(index)
  LocalSize,     // get_local_size(index): the enqueued size (the last group's items stay inside)
  NumGroups,     // get_num_groups(index)
  GlobalOffset,  // get_global_offset(index)
  ScalarArg,     // the integer kernel argument `index`, `bytes` wide at `byte_offset` of its value
  Bounded,       // KernelFootprint::bounded[index]: a loop's induction variable
};

struct Symbol {
  SymbolKind kind = SymbolKind::GlobalId;
  uint32_t index = 0;        // the dimension, the argument, or the bounded variable
  uint32_t byte_offset = 0;  // ScalarArg: where the integer lies in the argument's value
  uint8_t bytes = 0;         // ScalarArg: 1, 2, 4 or 8
  bool is_signed = false;    // ScalarArg: sign-extended
  bool operator==(const Symbol&) const = default;
};

// coefficient x the product of the factors (none: a constant).
struct Term {
  int64_t coefficient = 0;
  std::vector<Symbol> factors;
};

// A sum of terms, exact over the integers.
struct Polynomial {
  std::vector<Term> terms;
};

// A value the kernel computed in `bits`-wide integers that wrap (no nsw/nuw): the polynomial of an
// access is exact only where this value stays in the range of that integer type.
struct RangeCheck {
  Polynomial value;
  uint8_t bits = 32;
  bool is_signed = false;
};

// A loop induction variable: every value it takes lies in [first, last] (both inclusive,
// polynomials of the other symbols, possibly earlier bounded ones).
struct BoundedVariable {
  Polynomial first, last;
};

// One load or store: `size` bytes at the argument's pointer + `offset` bytes.
struct Access {
  bool write = false;
  Polynomial offset;
  uint64_t size = 0;
  std::vector<RangeCheck> checks;
};

struct ArgFootprint {
  // Every access of the argument is in `accesses` (false: some offset is not an affine function
  // the analysis could prove; the whole buffer then counts as read, or written).
  bool reads_known = true, writes_known = true;
  std::vector<Access> accesses;
};

struct KernelFootprint {
  bool analyzed = false;  // false: nothing was proven (binaries of older compilers)
  // Non-empty: why the kernel never runs in parts on devices of different memory (global
  // atomics, printf, a pointer stored in memory, pipes, program-scope variables, a write through
  // a pointer of unknown origin, a call the analysis cannot see into).
  std::string whole_reason;
  // The kernel's program has variables in the global address space: each device has its own
  // copy, so the kernel runs on one member of a group whatever their memories.
  bool program_variables = false;
  std::vector<ArgFootprint> args;  // parallel to KernelInfo::args (empty for non-buffer args)
  std::vector<BoundedVariable> bounded;
};

// A half-open byte range [first, end) of a buffer argument.
struct ByteRange {
  uint64_t first = 0, end = 0;
  bool empty() const { return first >= end; }
};

// What one part of a launch reaches in one argument.
struct PartFootprint {
  // Empty optional: unknown (the whole buffer). Otherwise the smallest range holding every access
  // of that kind (empty range: none).
  std::optional<ByteRange> reads, writes;
  // The same writes as separate ranges, one per access (overlapping ones merged), in address
  // order: parts whose union ranges interleave (a kernel writing several strided outputs) may
  // still write disjoint bytes. Empty where `writes` is unknown or more than kMaxPieces remain.
  std::vector<ByteRange> write_pieces;
  static constexpr size_t kMaxPieces = 64;
};

// Evaluates `footprint` of argument `arg` for the part of `range` that its group_first/group_count
// select. `arg_values` are the kernel's argument values (the bytes clSetKernelArg got, per
// argument). Unknown where a range check fails, a bounded variable is empty, or arithmetic would
// overflow.
PartFootprint evaluate_part(const KernelFootprint& footprint, size_t arg, const NDRange& range,
                            std::span<const std::span<const uint8_t>> arg_values);

}  // namespace manifold::compiler
