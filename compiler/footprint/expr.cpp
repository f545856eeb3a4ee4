#include "compiler/footprint/expr.h"

#include <algorithm>
#include <tuple>

namespace manifold::compiler::footprint {
namespace {

auto key(const Symbol& s) {
  return std::make_tuple(uint8_t(s.kind), s.index, s.byte_offset, s.bytes, s.is_signed);
}

}  // namespace

bool same_polynomial(const Polynomial& a, const Polynomial& b) {
  if (a.terms.size() != b.terms.size()) return false;
  for (size_t i = 0; i < a.terms.size(); ++i)
    if (a.terms[i].coefficient != b.terms[i].coefficient ||
        a.terms[i].factors != b.terms[i].factors)
      return false;
  return true;
}

bool same_check(const RangeCheck& a, const RangeCheck& b) {
  return a.bits == b.bits && a.is_signed == b.is_signed && same_polynomial(a.value, b.value);
}

namespace {

void add_term(Poly& p, const std::vector<Symbol>& factors, int64_t coefficient, bool* ok) {
  int64_t& slot = p.terms[factors];
  if (__builtin_add_overflow(slot, coefficient, &slot)) *ok = false;
  if (slot == 0) p.terms.erase(factors);
}

}  // namespace

bool symbol_less(const Symbol& a, const Symbol& b) { return key(a) < key(b); }

bool FactorsLess::operator()(const std::vector<Symbol>& a, const std::vector<Symbol>& b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), symbol_less);
}

Poly Poly::constant(int64_t value) {
  Poly p;
  if (value != 0) p.terms[{}] = value;
  return p;
}

Poly Poly::symbol(const Symbol& s) {
  Poly p;
  p.terms[{s}] = 1;
  return p;
}

Polynomial Poly::to_polynomial() const {
  Polynomial out;
  for (const auto& [factors, coefficient] : terms) out.terms.push_back({coefficient, factors});
  return out;
}

std::optional<int64_t> Poly::as_constant() const {
  if (terms.empty()) return 0;
  if (terms.size() == 1 && terms.begin()->first.empty()) return terms.begin()->second;
  return std::nullopt;
}

std::optional<Poly> add(const Poly& a, const Poly& b) {
  Poly out = a;
  bool ok = true;
  for (const auto& [factors, coefficient] : b.terms) add_term(out, factors, coefficient, &ok);
  if (!ok) return std::nullopt;
  return out;
}

std::optional<Poly> scale(const Poly& a, int64_t factor) {
  Poly out;
  if (factor == 0) return out;
  for (const auto& [factors, coefficient] : a.terms) {
    int64_t product = 0;
    if (__builtin_mul_overflow(coefficient, factor, &product)) return std::nullopt;
    out.terms[factors] = product;
  }
  return out;
}

std::optional<Poly> multiply(const Poly& a, const Poly& b) {
  Poly out;
  bool ok = true;
  for (const auto& [fa, ca] : a.terms)
    for (const auto& [fb, cb] : b.terms) {
      int64_t product = 0;
      if (__builtin_mul_overflow(ca, cb, &product)) return std::nullopt;
      std::vector<Symbol> factors = fa;
      factors.insert(factors.end(), fb.begin(), fb.end());
      std::sort(factors.begin(), factors.end(), symbol_less);
      add_term(out, factors, product, &ok);
    }
  if (!ok) return std::nullopt;
  return out;
}

void merge_conditions(Expr& into, const Expr& from) {
  for (const RangeCheck& c : from.checks)
    if (std::none_of(into.checks.begin(), into.checks.end(),
                     [&](const RangeCheck& have) { return same_check(have, c); }))
      into.checks.push_back(c);
  for (const llvm::PHINode* g : from.guards)
    if (std::find(into.guards.begin(), into.guards.end(), g) == into.guards.end())
      into.guards.push_back(g);
}

std::optional<Expr> combine(const Expr& a, const Expr& b, const Poly& poly) {
  Expr out;
  out.poly = poly;
  merge_conditions(out, a);
  merge_conditions(out, b);
  return out;
}

Expr with_check(Expr e, unsigned bits, bool is_signed) {
  if (std::optional<int64_t> c = e.poly.as_constant()) {
    // A constant needs no check where it fits; one that does not fit makes the check fail.
    const __int128 lo = is_signed ? -(__int128(1) << (bits - 1)) : 0;
    const __int128 hi = is_signed ? (__int128(1) << (bits - 1)) - 1 : (__int128(1) << bits) - 1;
    if (*c >= lo && *c <= hi) return e;
  }
  Expr check_only;
  check_only.checks.push_back({e.poly.to_polynomial(), uint8_t(bits), is_signed});
  merge_conditions(e, check_only);
  return e;
}

}  // namespace manifold::compiler::footprint
