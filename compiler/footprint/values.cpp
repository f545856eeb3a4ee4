#include "compiler/footprint/values.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>

#include "compiler/footprint/builtins.h"

namespace manifold::compiler::footprint {

// Bytes [offset, offset + bytes) of argument `arg`'s value, zero-extended to `width` bytes.
struct Values::ArgBytes {
  unsigned arg = 0;
  uint32_t offset = 0;
  unsigned bytes = 0, width = 0;
};

namespace {

// Whether the kernel only reads the memory of a by-value argument passed as a pointer (its
// loads then see the bytes clSetKernelArg gave).
bool only_read(const llvm::Argument& arg) {
  std::vector<const llvm::Value*> work = {&arg};
  while (!work.empty()) {
    const llvm::Value* v = work.back();
    work.pop_back();
    for (const llvm::User* user : v->users()) {
      if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(user)) {
        if (load->isVolatile() || load->isAtomic()) return false;
      } else if (llvm::isa<llvm::GEPOperator>(user) || llvm::isa<llvm::BitCastOperator>(user) ||
                 llvm::isa<llvm::AddrSpaceCastOperator>(user)) {
        work.push_back(user);
      } else {
        return false;
      }
    }
  }
  return true;
}

std::optional<uint32_t> aggregate_offset(const llvm::DataLayout& layout, llvm::Type* type,
                                         llvm::ArrayRef<unsigned> indices) {
  uint64_t offset = 0;
  for (unsigned index : indices) {
    if (auto* s = llvm::dyn_cast<llvm::StructType>(type)) {
      offset += layout.getStructLayout(s)->getElementOffset(index);
      type = s->getElementType(index);
    } else if (auto* a = llvm::dyn_cast<llvm::ArrayType>(type)) {
      offset += index * layout.getTypeAllocSize(a->getElementType());
      type = a->getElementType();
    } else {
      return std::nullopt;
    }
  }
  return offset < (uint64_t(1) << 31) ? std::optional<uint32_t>(uint32_t(offset)) : std::nullopt;
}

bool strict_predicate(llvm::CmpInst::Predicate p) {
  using P = llvm::CmpInst::Predicate;
  return p == P::ICMP_SLT || p == P::ICMP_ULT || p == P::ICMP_SGT || p == P::ICMP_UGT;
}

}  // namespace

Values::Values(const llvm::Function& kernel, const llvm::DominatorTree& dominators,
               const llvm::LoopInfo& loops, std::vector<BoundedVariable>* bounded)
    : kernel_(kernel),
      layout_(kernel.getParent()->getDataLayout()),
      dominators_(dominators),
      loops_(loops),
      bounded_(bounded) {
  uniform_groups_ = kernel.getFnAttribute("uniform-work-group-size").getValueAsString() == "true";
}

std::optional<Values::ArgBytes> Values::arg_bytes(const llvm::Value* value, int depth) const {
  if (depth > 16) return std::nullopt;
  auto* type = llvm::dyn_cast<llvm::IntegerType>(value->getType());
  if (!type || type->getBitWidth() % 8 || type->getBitWidth() > 64) return std::nullopt;
  const unsigned width = type->getBitWidth() / 8;
  if (const auto* arg = llvm::dyn_cast<llvm::Argument>(value))
    return ArgBytes{arg->getArgNo(), 0, width, width};
  if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(value)) {
    if (load->isVolatile() || load->isAtomic()) return std::nullopt;
    llvm::APInt offset(layout_.getIndexTypeSizeInBits(load->getPointerOperandType()), 0);
    const llvm::Value* base =
        load->getPointerOperand()->stripAndAccumulateConstantOffsets(layout_, offset, true);
    const auto* arg = llvm::dyn_cast<llvm::Argument>(base);
    if (!arg || !(arg->hasByValAttr() || arg->hasByRefAttr()) || offset.isNegative() ||
        offset.getZExtValue() >= (uint64_t(1) << 31) || !only_read(*arg))
      return std::nullopt;
    return ArgBytes{arg->getArgNo(), uint32_t(offset.getZExtValue()), width, width};
  }
  if (const auto* extract = llvm::dyn_cast<llvm::ExtractValueInst>(value)) {
    const auto* arg = llvm::dyn_cast<llvm::Argument>(extract->getAggregateOperand());
    if (!arg) return std::nullopt;
    std::optional<uint32_t> offset =
        aggregate_offset(layout_, arg->getType(), extract->getIndices());
    if (!offset) return std::nullopt;
    return ArgBytes{arg->getArgNo(), *offset, width, width};
  }
  if (const auto* extract = llvm::dyn_cast<llvm::ExtractElementInst>(value)) {
    const auto* arg = llvm::dyn_cast<llvm::Argument>(extract->getVectorOperand());
    const auto* index = llvm::dyn_cast<llvm::ConstantInt>(extract->getIndexOperand());
    if (!arg || !index || index->getZExtValue() >= 64) return std::nullopt;
    return ArgBytes{arg->getArgNo(), uint32_t(index->getZExtValue() * width), width, width};
  }
  const auto* inst = llvm::dyn_cast<llvm::Instruction>(value);
  if (!inst) return std::nullopt;
  if (llvm::isa<llvm::TruncInst>(inst)) {
    std::optional<ArgBytes> from = arg_bytes(inst->getOperand(0), depth + 1);
    if (!from) return std::nullopt;
    return ArgBytes{from->arg, from->offset, std::min(from->bytes, width), width};
  }
  const auto* amount = inst->getNumOperands() == 2
                           ? llvm::dyn_cast<llvm::ConstantInt>(inst->getOperand(1))
                           : nullptr;
  if (!amount) return std::nullopt;
  const uint64_t c = amount->getZExtValue();
  if (inst->getOpcode() == llvm::Instruction::LShr && c % 8 == 0 && c < 8 * width) {
    std::optional<ArgBytes> from = arg_bytes(inst->getOperand(0), depth + 1);
    if (!from || from->bytes <= c / 8) return std::nullopt;
    return ArgBytes{from->arg, from->offset + uint32_t(c / 8), from->bytes - unsigned(c / 8),
                    width};
  }
  if (inst->getOpcode() == llvm::Instruction::And && c != 0 && (c & (c + 1)) == 0) {
    const unsigned bits = 64 - __builtin_clzll(c);
    std::optional<ArgBytes> from = arg_bytes(inst->getOperand(0), depth + 1);
    if (!from || bits % 8) return std::nullopt;
    return ArgBytes{from->arg, from->offset, std::min(from->bytes, bits / 8), width};
  }
  return std::nullopt;
}

std::optional<Expr> Values::of(const llvm::Value* value, bool is_signed) {
  const auto key = std::make_pair(value, unsigned(is_signed));
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  // Deep enough for any index expression; a value defined through itself (possible in
  // unreachable code) stops here.
  if (depth_ > 256) return std::nullopt;
  ++depth_;
  std::optional<Expr> result = compute(value, is_signed);
  --depth_;
  memo_[key] = result;
  return result;
}

std::optional<Expr> Values::compute(const llvm::Value* value, bool is_signed) {
  auto* type = llvm::dyn_cast<llvm::IntegerType>(value->getType());
  if (!type || type->getBitWidth() > 64 || type->getBitWidth() < 2) return std::nullopt;
  if (const auto* c = llvm::dyn_cast<llvm::ConstantInt>(value)) {
    if (is_signed) return Expr{Poly::constant(c->getSExtValue()), {}, {}};
    if (c->getValue().isNegative() && type->getBitWidth() == 64) return std::nullopt;
    return Expr{Poly::constant(int64_t(c->getZExtValue())), {}, {}};
  }
  if (std::optional<ArgBytes> bytes = arg_bytes(value)) {
    if (bytes->bytes != 1 && bytes->bytes != 2 && bytes->bytes != 4 && bytes->bytes != 8)
      return std::nullopt;
    Symbol s{SymbolKind::ScalarArg, bytes->arg, bytes->offset, uint8_t(bytes->bytes), false};
    // Bytes zero-extended into a wider value read alike either way.
    s.is_signed = bytes->bytes == bytes->width && is_signed;
    return Expr{Poly::symbol(s), {}, {}};
  }
  const auto* inst = llvm::dyn_cast<llvm::Instruction>(value);
  if (!inst) return std::nullopt;
  if (llvm::isa<llvm::BinaryOperator>(inst)) return binary(inst, is_signed);
  if (llvm::isa<llvm::CastInst>(inst)) return cast(inst, is_signed);
  if (llvm::isa<llvm::FreezeInst>(inst)) return of(inst->getOperand(0), is_signed);
  if (llvm::isa<llvm::CallInst>(inst)) return call(inst, is_signed);
  if (const auto* phi = llvm::dyn_cast<llvm::PHINode>(inst)) return induction(phi, is_signed);
  return std::nullopt;
}

std::optional<Expr> Values::binary(const llvm::Instruction* inst, bool is_signed) {
  const unsigned bits = inst->getType()->getIntegerBitWidth();
  const llvm::Value* lhs = inst->getOperand(0);
  const llvm::Value* rhs = inst->getOperand(1);
  const auto* constant = llvm::dyn_cast<llvm::ConstantInt>(rhs);
  const auto opcode = inst->getOpcode();
  const bool no_wrap = llvm::isa<llvm::OverflowingBinaryOperator>(inst) &&
                       (is_signed ? inst->hasNoSignedWrap() : inst->hasNoUnsignedWrap());
  std::optional<Expr> a, b;
  std::optional<Poly> poly;
  switch (opcode) {
    case llvm::Instruction::Add:
    case llvm::Instruction::Sub:
    case llvm::Instruction::Mul: {
      a = of(lhs, is_signed), b = of(rhs, is_signed);
      if (!a || !b) return std::nullopt;
      if (opcode == llvm::Instruction::Mul) {
        poly = multiply(a->poly, b->poly);
      } else {
        std::optional<Poly> right = opcode == llvm::Instruction::Sub ? scale(b->poly, -1) : b->poly;
        if (right) poly = add(a->poly, *right);
      }
      if (!poly) return std::nullopt;
      std::optional<Expr> out = combine(*a, *b, *poly);
      return no_wrap ? out : with_check(*out, bits, is_signed);
    }
    case llvm::Instruction::Shl: {
      if (!constant || constant->getZExtValue() >= std::min(bits, 62u)) return std::nullopt;
      a = of(lhs, is_signed);
      if (!a) return std::nullopt;
      poly = scale(a->poly, int64_t(1) << constant->getZExtValue());
      if (!poly) return std::nullopt;
      Expr out = *a;
      out.poly = *poly;
      return no_wrap ? out : with_check(out, bits, is_signed);
    }
    case llvm::Instruction::Or: {
      // Disjoint bits add without carries, exact in either signedness.
      if (!llvm::cast<llvm::PossiblyDisjointInst>(inst)->isDisjoint()) return std::nullopt;
      a = of(lhs, is_signed), b = of(rhs, is_signed);
      if (!a || !b || !(poly = add(a->poly, b->poly))) return std::nullopt;
      return combine(*a, *b, *poly);
    }
    case llvm::Instruction::AShr:
    case llvm::Instruction::LShr: {
      // (x << a) >> b with b <= a: the low bits of x extended (instcombine's form of sext or
      // zext of trunc), times 2^(a - b).
      const auto* shl = llvm::dyn_cast<llvm::BinaryOperator>(lhs);
      const auto* left = shl && shl->getOpcode() == llvm::Instruction::Shl
                             ? llvm::dyn_cast<llvm::ConstantInt>(shl->getOperand(1))
                             : nullptr;
      if (!constant || !left || left->getZExtValue() >= bits || constant->isZero() ||
          constant->getZExtValue() > left->getZExtValue() ||
          left->getZExtValue() - constant->getZExtValue() >= 62)
        return std::nullopt;
      const bool arithmetic = opcode == llvm::Instruction::AShr;
      a = of(shl->getOperand(0), arithmetic);
      if (!a) return std::nullopt;
      Expr out = with_check(*a, bits - unsigned(left->getZExtValue()), arithmetic);
      poly = scale(out.poly, int64_t(1) << (left->getZExtValue() - constant->getZExtValue()));
      if (!poly) return std::nullopt;
      out.poly = *poly;
      return arithmetic && !is_signed ? with_check(out, bits, false) : out;
    }
    case llvm::Instruction::And: {
      // x & (2^k - 1) is x where x fits k bits unsigned (instcombine's form of zext(trunc x)).
      if (!constant) return std::nullopt;
      const llvm::APInt& mask = constant->getValue();
      if (!mask.isMask()) return std::nullopt;
      const unsigned kept = mask.countTrailingOnes();
      if (kept == bits) return of(lhs, is_signed);
      a = of(lhs, false);
      if (!a) return std::nullopt;
      return with_check(*a, kept, false);
    }
    default:
      return std::nullopt;
  }
}

std::optional<Expr> Values::cast(const llvm::Instruction* inst, bool is_signed) {
  const llvm::Value* from = inst->getOperand(0);
  if (!from->getType()->isIntegerTy()) return std::nullopt;
  const unsigned bits = inst->getType()->getIntegerBitWidth();
  switch (inst->getOpcode()) {
    case llvm::Instruction::ZExt:
      return of(from, false);
    case llvm::Instruction::SExt: {
      std::optional<Expr> a = of(from, true);
      if (!a) return std::nullopt;
      return is_signed ? *a : with_check(*a, bits, false);
    }
    case llvm::Instruction::Trunc: {
      const auto* trunc = llvm::cast<llvm::TruncInst>(inst);
      const bool kept = is_signed ? trunc->hasNoSignedWrap() : trunc->hasNoUnsignedWrap();
      std::optional<Expr> a = of(from, is_signed);
      if (!a) return std::nullopt;
      return kept ? *a : with_check(*a, bits, is_signed);
    }
    default:
      return std::nullopt;
  }
}

std::optional<Expr> Values::call(const llvm::Instruction* inst, bool is_signed) {
  const auto* call = llvm::cast<llvm::CallInst>(inst);
  const llvm::Function* callee = call->getCalledFunction();
  if (!callee || call->arg_size() != 1) return std::nullopt;
  std::optional<SymbolKind> kind = work_item_symbol(plain_name(callee->getName()), uniform_groups_);
  const auto* dim = llvm::dyn_cast<llvm::ConstantInt>(call->getArgOperand(0));
  if (!kind || !dim || dim->getZExtValue() > 3) return std::nullopt;
  Expr out{Poly::symbol({*kind, uint32_t(dim->getZExtValue())}), {}, {}};
  const unsigned bits = inst->getType()->getIntegerBitWidth();
  return bits >= 64 ? out : with_check(out, bits, is_signed);
}

std::optional<Expr> Values::induction(const llvm::PHINode* phi, bool is_signed) {
  auto it = inductions_.find(phi);
  if (it == inductions_.end()) {
    inductions_[phi] = Induction{};  // in progress: a phi whose bounds need it is unknown
    std::optional<Expr> value = bound(phi);
    it = inductions_.find(phi);
    if (value) it->second.value = *value, it->second.valid = true;
  }
  if (!it->second.valid) return std::nullopt;
  const Induction& found = it->second;
  if (found.is_signed == is_signed) return found.value;
  return with_check(found.value, phi->getType()->getIntegerBitWidth(), is_signed);
}

std::optional<Expr> Values::bound(const llvm::PHINode* phi) {
  const llvm::Loop* loop = loops_.getLoopFor(phi->getParent());
  if (!loop || loop->getHeader() != phi->getParent() || phi->getNumIncomingValues() != 2)
    return std::nullopt;
  const unsigned inside = loop->contains(phi->getIncomingBlock(0)) ? 0 : 1;
  if (!loop->contains(phi->getIncomingBlock(inside)) ||
      loop->contains(phi->getIncomingBlock(1 - inside)))
    return std::nullopt;
  const llvm::Value* start = phi->getIncomingValue(1 - inside);
  const llvm::BasicBlock* latch = phi->getIncomingBlock(inside);
  const auto* next = llvm::dyn_cast<llvm::BinaryOperator>(phi->getIncomingValue(inside));
  if (!next) return std::nullopt;
  int64_t step = 0;
  const auto* c0 = llvm::dyn_cast<llvm::ConstantInt>(next->getOperand(0));
  const auto* c1 = llvm::dyn_cast<llvm::ConstantInt>(next->getOperand(1));
  if (next->getOpcode() == llvm::Instruction::Add && next->getOperand(0) == phi && c1)
    step = c1->getSExtValue();
  else if (next->getOpcode() == llvm::Instruction::Add && next->getOperand(1) == phi && c0)
    step = c0->getSExtValue();
  else if (next->getOpcode() == llvm::Instruction::Sub && next->getOperand(0) == phi && c1)
    step = c1->getSExtValue() == INT64_MIN ? 0 : -c1->getSExtValue();
  if (step == 0) return std::nullopt;

  llvm::SmallVector<llvm::BasicBlock*, 4> exiting;
  loop->getExitingBlocks(exiting);
  for (const llvm::BasicBlock* block : exiting) {
    const auto* branch = llvm::dyn_cast<llvm::BranchInst>(block->getTerminator());
    if (!branch || !branch->isConditional()) continue;
    const auto* compare = llvm::dyn_cast<llvm::ICmpInst>(branch->getCondition());
    if (!compare) continue;
    const bool stays_if_true = loop->contains(branch->getSuccessor(0));
    if (stays_if_true == loop->contains(branch->getSuccessor(1))) continue;
    // Normalized: the loop goes on while `tested pred limit`.
    auto pred = stays_if_true ? compare->getPredicate() : compare->getInversePredicate();
    const llvm::Value* tested = compare->getOperand(0);
    const llvm::Value* limit = compare->getOperand(1);
    if (tested != phi && tested != next) {
      std::swap(tested, limit);
      pred = llvm::CmpInst::getSwappedPredicate(pred);
    }
    if ((tested != phi && tested != next) || !loop->isLoopInvariant(limit)) continue;
    const llvm::BasicBlock* stay = branch->getSuccessor(stays_if_true ? 0 : 1);
    // Tested before the step: its values are those the test let through, where the test
    // dominates. Tested after: every value is the start or one the test let through.
    const bool before = tested == phi;
    if (before && stay == loop->getHeader()) continue;
    if (!before && (block != latch || stay != loop->getHeader())) continue;
    const bool up = step > 0;
    bool is_signed = true, strict = true;
    using P = llvm::CmpInst::Predicate;
    if (pred == P::ICMP_NE) {
      if (step != 1 && step != -1) continue;
      is_signed = !next->hasNoUnsignedWrap() || next->hasNoSignedWrap();
    } else {
      if (up != (pred == P::ICMP_SLT || pred == P::ICMP_ULT || pred == P::ICMP_SLE ||
                 pred == P::ICMP_ULE))
        continue;
      if (!llvm::ICmpInst::isRelational(pred)) continue;
      is_signed = llvm::ICmpInst::isSigned(pred);
      strict = strict_predicate(pred);
    }
    // The step cannot wrap: the step says so, or it starts from a value the test let through
    // (a step of one past a strict test stays in range; a longer one is checked below).
    const bool flagged = is_signed ? next->hasNoSignedWrap() : next->hasNoUnsignedWrap();
    const bool unit = (step == 1 || step == -1) && strict;
    const bool test_dominates_step =
        !before || dominators_.dominates(llvm::BasicBlockEdge(block, stay), latch);
    if (!flagged && !test_dominates_step) continue;
    std::optional<Expr> first = of(start, is_signed), end = of(limit, is_signed);
    if (!first || !end) return std::nullopt;
    std::optional<Poly> edge = strict ? add(end->poly, Poly::constant(up ? -1 : 1)) : end->poly;
    if (!edge) return std::nullopt;
    Expr bound_expr = *end;
    bound_expr.poly = *edge;
    const uint32_t index = uint32_t(bounded_->size());
    if (up)
      bounded_->push_back({first->poly.to_polynomial(), bound_expr.poly.to_polynomial()});
    else
      bounded_->push_back({bound_expr.poly.to_polynomial(), first->poly.to_polynomial()});
    Expr value{Poly::symbol({SymbolKind::Bounded, index}), {}, {}};
    merge_conditions(value, *first);
    merge_conditions(value, bound_expr);
    if (!flagged && !unit) {
      // One step past the last value the test lets through still fits the type.
      std::optional<Poly> beyond = add(*edge, Poly::constant(step));
      if (!beyond) return std::nullopt;
      Expr past = bound_expr;
      past.poly = *beyond;
      merge_conditions(value, with_check(past, phi->getType()->getIntegerBitWidth(), is_signed));
    }
    if (before) {
      guards_[phi] = Guard{block, stay};
      value.guards.push_back(phi);
    }
    inductions_[phi].is_signed = is_signed;
    return value;
  }
  return std::nullopt;
}

std::optional<Expr> Values::counter(const Expr& count) {
  std::optional<Poly> last = add(count.poly, Poly::constant(-1));
  if (!last) return std::nullopt;
  const uint32_t index = uint32_t(bounded_->size());
  bounded_->push_back({Polynomial{}, last->to_polynomial()});
  Expr out = count;
  out.poly = Poly::symbol({SymbolKind::Bounded, index});
  return out;
}

bool Values::guarded(const Expr& e, const llvm::Instruction* at) const {
  for (const llvm::PHINode* phi : e.guards) {
    auto it = guards_.find(phi);
    const llvm::Loop* loop = loops_.getLoopFor(phi->getParent());
    if (it == guards_.end() || !loop || !loop->contains(at->getParent()) ||
        !dominators_.dominates(llvm::BasicBlockEdge(it->second.from, it->second.to),
                               at->getParent()))
      return false;
  }
  return true;
}

}  // namespace manifold::compiler::footprint
