#include "compiler/footprint.h"

#include <algorithm>
#include <cstring>

#include "compiler/compiler.h"

namespace manifold::compiler {
namespace {

// Closed intervals of exact integers; 128 bits leave room for products of 64-bit values, and a
// result beyond +-2^100 counts as an overflow (the part's footprint is then unknown).
using Wide = __int128;
constexpr Wide kLimit = Wide(1) << 100;

struct Interval {
  Wide lo = 0, hi = 0;
};

bool in_limit(Wide v) { return v < kLimit && v > -kLimit; }

std::optional<Interval> multiply(Interval a, Interval b) {
  if (!in_limit(a.lo) || !in_limit(a.hi) || !in_limit(b.lo) || !in_limit(b.hi)) return {};
  // |values| < 2^100 each would overflow 128 bits in a product: keep factors below 2^62.
  const Wide small = Wide(1) << 62;
  for (Wide v : {a.lo, a.hi, b.lo, b.hi})
    if (v >= small || v <= -small) return {};
  const Wide p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return Interval{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}

struct Evaluator {
  const KernelFootprint& footprint;
  const NDRange& range;
  std::span<const std::span<const uint8_t>> args;
  int depth = 0;  // bounded variables may name earlier ones: no cycles beyond this

  std::optional<Interval> symbol(const Symbol& s) {
    const unsigned d = s.index;
    const bool in_dims = d < range.work_dim && d < 3;
    const Wide local = in_dims ? Wide(range.local_size[d] ? range.local_size[d] : 1) : 1;
    switch (s.kind) {
      case SymbolKind::GlobalId: {
        if (!in_dims) return Interval{0, 0};
        const Wide first = range.launch_first(d), end = range.launch_end(d);
        if (first >= end) return {};
        const Wide offset = range.global_offset[d];
        const Wide last = std::min<Wide>(end * local, Wide(range.global_size[d])) - 1;
        return Interval{offset + first * local, offset + last};
      }
      case SymbolKind::LocalId:
        return Interval{0, in_dims ? std::min<Wide>(local, Wide(range.global_size[d])) - 1 : 0};
      case SymbolKind::GroupId: {
        if (!in_dims) return Interval{0, 0};
        const Wide first = range.launch_first(d), end = range.launch_end(d);
        if (first >= end) return {};
        return Interval{first, end - 1};
      }
      case SymbolKind::GlobalSize: {
        const Wide v = in_dims ? Wide(range.global_size[d]) : 1;
        return Interval{v, v};
      }
      case SymbolKind::LocalSize:
        return Interval{local, local};
      case SymbolKind::NumGroups: {
        const Wide v = Wide(range.num_groups(d));
        return Interval{v, v};
      }
      case SymbolKind::GlobalOffset: {
        const Wide v = in_dims ? Wide(range.global_offset[d]) : 0;
        return Interval{v, v};
      }
      case SymbolKind::ScalarArg: {
        if (d >= args.size() || (s.bytes != 1 && s.bytes != 2 && s.bytes != 4 && s.bytes != 8))
          return {};
        const std::span<const uint8_t> bytes = args[d];
        if (s.byte_offset > bytes.size() || bytes.size() - s.byte_offset < s.bytes) return {};
        uint64_t raw = 0;
        std::memcpy(&raw, bytes.data() + s.byte_offset, s.bytes);  // little-endian hosts
        Wide v = Wide(raw);
        if (s.is_signed && s.bytes < 8 && (raw >> (8 * s.bytes - 1)) & 1)
          v -= Wide(1) << (8 * s.bytes);
        else if (s.is_signed && s.bytes == 8)
          v = Wide(int64_t(raw));
        return Interval{v, v};
      }
      case SymbolKind::Bounded: {
        if (d >= footprint.bounded.size() || depth > 8) return {};
        ++depth;
        auto first = polynomial(footprint.bounded[d].first);
        auto last = polynomial(footprint.bounded[d].last);
        --depth;
        if (!first || !last || first->lo > last->hi) return {};
        return Interval{first->lo, last->hi};
      }
    }
    return {};
  }

  std::optional<Interval> polynomial(const Polynomial& p) {
    Interval sum;
    for (const Term& t : p.terms) {
      std::optional<Interval> product = Interval{t.coefficient, t.coefficient};
      for (const Symbol& f : t.factors) {
        std::optional<Interval> v = symbol(f);
        if (!v) return {};
        product = multiply(*product, *v);
        if (!product) return {};
      }
      sum.lo += product->lo;
      sum.hi += product->hi;
      if (!in_limit(sum.lo) || !in_limit(sum.hi)) return {};
    }
    return sum;
  }

  bool check(const RangeCheck& c) {
    std::optional<Interval> v = polynomial(c.value);
    if (!v || c.bits == 0 || c.bits > 64) return false;
    const Wide lo = c.is_signed ? -(Wide(1) << (c.bits - 1)) : 0;
    const Wide hi = c.is_signed ? (Wide(1) << (c.bits - 1)) - 1 : (Wide(1) << c.bits) - 1;
    return v->lo >= lo && v->hi <= hi;
  }
};

void widen(std::optional<ByteRange>& into, Wide first, Wide end) {
  const ByteRange r{uint64_t(first), uint64_t(end)};
  if (into->empty())
    *into = r;
  else
    *into = {std::min(into->first, r.first), std::max(into->end, r.end)};
}

}  // namespace

PartFootprint evaluate_part(const KernelFootprint& footprint, size_t arg, const NDRange& range,
                            std::span<const std::span<const uint8_t>> arg_values) {
  PartFootprint out;
  if (!footprint.analyzed || arg >= footprint.args.size()) return out;
  const ArgFootprint& a = footprint.args[arg];
  if (a.reads_known) out.reads = ByteRange{};
  if (a.writes_known) out.writes = ByteRange{};
  Evaluator eval{footprint, range, arg_values};
  for (const Access& access : a.accesses) {
    std::optional<ByteRange>& into = access.write ? out.writes : out.reads;
    if (!into) continue;
    bool exact = true;
    for (const RangeCheck& c : access.checks) exact = exact && eval.check(c);
    std::optional<Interval> offset = exact ? eval.polynomial(access.offset) : std::nullopt;
    // A byte before the buffer's start, or past what 64-bit addresses reach, is outside it
    // (undefined behaviour of the kernel): the footprint then says nothing.
    if (!offset || offset->lo < 0 || !in_limit(offset->hi + Wide(access.size)) ||
        offset->hi + Wide(access.size) > Wide(UINT64_MAX)) {
      into.reset();
      continue;
    }
    widen(into, offset->lo, offset->hi + Wide(access.size));
    if (access.write)
      out.write_pieces.push_back({uint64_t(offset->lo), uint64_t(offset->hi + Wide(access.size))});
  }
  if (!out.writes) {
    out.write_pieces.clear();
    return out;
  }
  std::sort(out.write_pieces.begin(), out.write_pieces.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.first < b.first; });
  std::vector<ByteRange> merged;
  for (const ByteRange& r : out.write_pieces) {
    if (!merged.empty() && r.first <= merged.back().end)
      merged.back().end = std::max(merged.back().end, r.end);
    else
      merged.push_back(r);
  }
  out.write_pieces =
      merged.size() <= PartFootprint::kMaxPieces ? std::move(merged) : std::vector<ByteRange>{};
  return out;
}

}  // namespace manifold::compiler
