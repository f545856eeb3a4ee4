// evaluate_part on hand-made footprints: interval evaluation over a part's work-groups, and the
// cases where it must answer "unknown" rather than a range.
#include <gtest/gtest.h>

#include <cstdint>

#include "tests/compiler/footprint_test_util.h"

namespace manifold::compiler {
namespace {

using testing::ArgValues;
using testing::range_1d;

Symbol sym(SymbolKind kind, uint32_t index = 0) { return Symbol{kind, index}; }

Symbol scalar(uint32_t arg, uint8_t bytes, bool is_signed, uint32_t byte_offset = 0) {
  return Symbol{SymbolKind::ScalarArg, arg, byte_offset, bytes, is_signed};
}

// One buffer argument (0) with one access at `offset`.
KernelFootprint single(Polynomial offset, uint64_t size, bool write,
                       std::vector<RangeCheck> checks = {}) {
  KernelFootprint f;
  f.analyzed = true;
  f.args.resize(2);
  f.args[0].accesses.push_back({write, std::move(offset), size, std::move(checks)});
  return f;
}

PartFootprint eval(const KernelFootprint& f, const NDRange& r, const ArgValues& values) {
  const auto spans = values.spans();
  return evaluate_part(f, 0, r, spans);
}

TEST(FootprintEvaluate, DenseOneDimensional) {
  KernelFootprint f = single({{{4, {sym(SymbolKind::GlobalId)}}}}, 4, true);
  PartFootprint p = eval(f, range_1d(1024, 64, 2, 2), ArgValues().buffer().add<int32_t>(0));
  ASSERT_TRUE(p.writes);
  EXPECT_EQ(p.writes->first, 512u);
  EXPECT_EQ(p.writes->end, 1024u);
  ASSERT_TRUE(p.reads);
  EXPECT_TRUE(p.reads->empty());
}

// Two strided outputs (out[i] and out[i + 1024]): the union of a part's writes spans both, the
// pieces keep them apart.
TEST(FootprintEvaluate, WritePiecesKeepStridedOutputsApart) {
  KernelFootprint f = single({{{4, {sym(SymbolKind::GlobalId)}}}}, 4, true);
  f.args[0].accesses.push_back({true, {{{4, {sym(SymbolKind::GlobalId)}}, {4096, {}}}}, 4, {}});
  PartFootprint p = eval(f, range_1d(1024, 64, 2, 2), ArgValues().buffer().add<int32_t>(0));
  ASSERT_TRUE(p.writes);
  EXPECT_EQ(p.writes->first, 512u);
  EXPECT_EQ(p.writes->end, 4096u + 1024u);
  ASSERT_EQ(p.write_pieces.size(), 2u);
  EXPECT_EQ(p.write_pieces[0].first, 512u);
  EXPECT_EQ(p.write_pieces[0].end, 1024u);
  EXPECT_EQ(p.write_pieces[1].first, 4096u + 512u);
  EXPECT_EQ(p.write_pieces[1].end, 4096u + 1024u);
  // Touching pieces merge.
  f.args[0].accesses.push_back({true, {{{4, {sym(SymbolKind::GlobalId)}}, {256, {}}}}, 4, {}});
  p = eval(f, range_1d(1024, 64, 2, 2), ArgValues().buffer().add<int32_t>(0));
  ASSERT_EQ(p.write_pieces.size(), 2u);
  EXPECT_EQ(p.write_pieces[0].end, 1024u + 256u);
}

TEST(FootprintEvaluate, LastGroupOfNonUniformRangeStopsAtGlobalSize) {
  KernelFootprint f = single({{{4, {sym(SymbolKind::GlobalId)}}}}, 4, false);
  PartFootprint p = eval(f, range_1d(1000, 64, 15, 0), ArgValues().buffer().add<int32_t>(0));
  ASSERT_TRUE(p.reads);
  EXPECT_EQ(p.reads->first, 960u * 4);
  EXPECT_EQ(p.reads->end, 1000u * 4);
}

TEST(FootprintEvaluate, NotAnalyzedIsUnknown) {
  KernelFootprint f = single({{{4, {sym(SymbolKind::GlobalId)}}}}, 4, true);
  f.analyzed = false;
  PartFootprint p = eval(f, range_1d(1024, 64, 2, 2), ArgValues().buffer().add<int32_t>(0));
  EXPECT_FALSE(p.reads);
  EXPECT_FALSE(p.writes);
}

TEST(FootprintEvaluate, SignedScalarArguments) {
  // 4 * (gid + s): s = -64 moves groups [2, 4) down by one group.
  KernelFootprint f =
      single({{{4, {sym(SymbolKind::GlobalId)}}, {4, {scalar(1, 4, true)}}}}, 4, true);
  const NDRange r = range_1d(1024, 64, 2, 2);
  PartFootprint p = eval(f, r, ArgValues().buffer().add<int32_t>(-64));
  ASSERT_TRUE(p.writes);
  EXPECT_EQ(p.writes->first, 256u);
  EXPECT_EQ(p.writes->end, 768u);
  // The same bytes read unsigned are 2^32 - 64.
  KernelFootprint u =
      single({{{4, {sym(SymbolKind::GlobalId)}}, {4, {scalar(1, 4, false)}}}}, 4, true);
  PartFootprint q = eval(u, r, ArgValues().buffer().add<int32_t>(-64));
  ASSERT_TRUE(q.writes);
  EXPECT_EQ(q.writes->first, (uint64_t(0xFFFFFFC0u) + 128) * 4);
  // Below the buffer's start: unknown.
  PartFootprint below = eval(f, r, ArgValues().buffer().add<int32_t>(-1000));
  EXPECT_FALSE(below.writes);
}

TEST(FootprintEvaluate, ScalarFieldOfStructArgument) {
  KernelFootprint f = single({{{1, {scalar(1, 2, false, 6)}}}}, 1, false);
  struct Args {
    uint16_t a, b, c, d;
  };
  PartFootprint p = eval(f, range_1d(64, 64), ArgValues().buffer().add(Args{1, 2, 3, 500}));
  ASSERT_TRUE(p.reads);
  EXPECT_EQ(p.reads->first, 500u);
  EXPECT_EQ(p.reads->end, 501u);
  // A field past the argument's bytes: unknown.
  KernelFootprint past = single({{{1, {scalar(1, 4, false, 6)}}}}, 1, false);
  EXPECT_FALSE(eval(past, range_1d(64, 64), ArgValues().buffer().add(Args{})).reads);
}

TEST(FootprintEvaluate, FailedRangeCheckIsUnknown) {
  // (gid + s) computed in 32-bit unsigned arithmetic.
  Polynomial value = {{{1, {sym(SymbolKind::GlobalId)}}, {1, {scalar(1, 4, false)}}}};
  Polynomial offset = {{{4, {sym(SymbolKind::GlobalId)}}, {4, {scalar(1, 4, false)}}}};
  KernelFootprint f = single(offset, 4, true, {RangeCheck{value, 32, false}});
  const NDRange r = range_1d(1024, 64, 2, 2);
  PartFootprint fits = eval(f, r, ArgValues().buffer().add<uint32_t>(16));
  ASSERT_TRUE(fits.writes);
  EXPECT_EQ(fits.writes->first, 144u * 4);
  PartFootprint wraps = eval(f, r, ArgValues().buffer().add<uint32_t>(0xFFFFFFC0u));
  EXPECT_FALSE(wraps.writes);
}

TEST(FootprintEvaluate, OverflowIsUnknown) {
  // A coefficient near 2^62 times ids in the hundreds leaves every integer type.
  KernelFootprint f = single({{{int64_t(1) << 61, {sym(SymbolKind::GlobalId)}}}}, 4, true);
  EXPECT_FALSE(eval(f, range_1d(1024, 64, 2, 2), ArgValues().buffer()).writes);
  // A product of two large arguments: beyond 64-bit addresses.
  KernelFootprint g = single({{{1, {scalar(1, 8, false), scalar(2, 8, false)}}}}, 4, false);
  const ArgValues big =
      ArgValues().buffer().add<uint64_t>(uint64_t(1) << 40).add<uint64_t>(uint64_t(1) << 40);
  EXPECT_FALSE(eval(g, range_1d(64, 64), big).reads);
}

TEST(FootprintEvaluate, BoundedVariables) {
  // 4 * b0 with b0 in [s, s + 9], and an empty range once s + 9 < s' bound.
  KernelFootprint f = single({{{4, {sym(SymbolKind::Bounded, 0)}}}}, 4, false);
  f.bounded.push_back({{{{1, {scalar(1, 4, true)}}}}, {{{1, {scalar(1, 4, true)}}, {9, {}}}}});
  PartFootprint p = eval(f, range_1d(64, 64), ArgValues().buffer().add<int32_t>(10));
  ASSERT_TRUE(p.reads);
  EXPECT_EQ(p.reads->first, 40u);
  EXPECT_EQ(p.reads->end, 80u);
  f.bounded[0].last = {{{1, {scalar(1, 4, true)}}, {-1, {}}}};
  EXPECT_FALSE(eval(f, range_1d(64, 64), ArgValues().buffer().add<int32_t>(10)).reads);
}

TEST(FootprintEvaluate, UnknownArgumentStaysUnknownAcrossParts) {
  KernelFootprint f = single({{{4, {sym(SymbolKind::GlobalId)}}}}, 4, true);
  f.args[0].writes_known = false;
  PartFootprint p = eval(f, range_1d(1024, 64, 2, 2), ArgValues().buffer());
  EXPECT_FALSE(p.writes);
  ASSERT_TRUE(p.reads);
  EXPECT_TRUE(p.reads->empty());
}

}  // namespace
}  // namespace manifold::compiler
