// Exact integer expressions of the footprint analysis: polynomials over footprint Symbols with
// the range checks that keep them exact, built from an LLVM value's arithmetic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "compiler/footprint.h"

namespace llvm {
class PHINode;
}

namespace manifold::compiler::footprint {

// Orders symbols so that equal products of factors compare equal in any order.
bool symbol_less(const Symbol& a, const Symbol& b);
struct FactorsLess {
  bool operator()(const std::vector<Symbol>& a, const std::vector<Symbol>& b) const;
};

// A polynomial in canonical form: sorted factors -> non-zero coefficient.
struct Poly {
  std::map<std::vector<Symbol>, int64_t, FactorsLess> terms;

  static Poly constant(int64_t value);
  static Poly symbol(const Symbol& s);
  Polynomial to_polynomial() const;
  std::optional<int64_t> as_constant() const;
};

bool same_polynomial(const Polynomial& a, const Polynomial& b);
bool same_check(const RangeCheck& a, const RangeCheck& b);

// Exact integer arithmetic; nullopt where a coefficient leaves int64_t.
std::optional<Poly> add(const Poly& a, const Poly& b);
std::optional<Poly> scale(const Poly& a, int64_t factor);
std::optional<Poly> multiply(const Poly& a, const Poly& b);

// A value as a polynomial: exact where every check holds, and where every guard's loop test
// dominates the access (the induction variables whose bounds come from a test inside the loop).
struct Expr {
  Poly poly;
  std::vector<RangeCheck> checks;
  std::vector<const llvm::PHINode*> guards;
};

std::optional<Expr> combine(const Expr& a, const Expr& b, const Poly& poly);
// `e` where its value also must fit `bits` in the given signedness.
Expr with_check(Expr e, unsigned bits, bool is_signed);
// Appends `from`'s checks and guards to `into`'s (no duplicates).
void merge_conditions(Expr& into, const Expr& from);

}  // namespace manifold::compiler::footprint
