// The compiler's footprint analysis on real OpenCL C kernels built for the host CPU: what it
// proves per buffer argument, why it keeps some kernels whole, and the byte ranges a part of an
// NDRange then reaches (evaluate_part).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "tests/compiler/footprint_test_util.h"

namespace manifold::compiler {
namespace {

using testing::ArgValues;
using testing::describe;
using testing::host;
using testing::range_1d;

KernelInfo kernel(const std::string& source, const std::string& options = "") {
  BuildOutput out = build(source, options, host());
  EXPECT_TRUE(out.success) << out.log;
  if (!out.success || out.kernels.empty()) return {};
  // What the binary carries is what the build reported.
  std::string error;
  std::optional<BinaryInfo> info = inspect_binary(out.binary, &error);
  EXPECT_TRUE(info) << error;
  if (info) {
    EXPECT_EQ(describe(info->kernels[0].footprint), describe(out.kernels[0].footprint));
  }
  return out.kernels[0];
}

void expect_range(const std::optional<ByteRange>& range, uint64_t first, uint64_t end,
                  const KernelInfo& k) {
  ASSERT_TRUE(range.has_value()) << describe(k.footprint);
  EXPECT_EQ(range->first, first) << describe(k.footprint);
  EXPECT_EQ(range->end, end) << describe(k.footprint);
}

PartFootprint part(const KernelInfo& k, size_t arg, const NDRange& r, const ArgValues& values) {
  const auto spans = values.spans();
  return evaluate_part(k.footprint, arg, r, spans);
}

TEST(FootprintAnalysis, VectorAddIsDense) {
  KernelInfo k = kernel(R"(
    kernel void add(global const float* a, global const float* b, global float* out) {
      size_t i = get_global_id(0);
      out[i] = a[i] + b[i];
    })");
  ASSERT_TRUE(k.footprint.analyzed);
  EXPECT_EQ(k.footprint.whole_reason, "");
  ASSERT_EQ(k.footprint.args.size(), 3u);
  ASSERT_EQ(k.footprint.args[2].accesses.size(), 1u) << describe(k.footprint);
  const Access& w = k.footprint.args[2].accesses[0];
  EXPECT_TRUE(w.write);
  EXPECT_EQ(w.size, 4u);
  EXPECT_EQ(describe(w.offset), "4*gid0");
  const ArgValues args = ArgValues().buffer().buffer().buffer();
  // Groups [2, 4) of 64 work-items write floats 128 to 255.
  const NDRange r = range_1d(1024, 64, 2, 2);
  PartFootprint out = part(k, 2, r, args);
  expect_range(out.writes, 512, 1024, k);
  ASSERT_TRUE(out.reads.has_value());
  EXPECT_TRUE(out.reads->empty());
  expect_range(part(k, 0, r, args).reads, 512, 1024, k);
  EXPECT_TRUE(part(k, 0, r, args).writes->empty());
}

TEST(FootprintAnalysis, RowMajor2DWithWidthArgument) {
  KernelInfo k = kernel(R"(
    kernel void copy(global const float* in, global float* out, int w) {
      int x = get_global_id(0), y = get_global_id(1);
      out[y * w + x] = in[y * w + x] * 2.0f;
    })");
  ASSERT_EQ(k.footprint.whole_reason, "");
  NDRange r;
  r.work_dim = 2;
  r.global_size[0] = 32, r.global_size[1] = 8;
  r.local_size[0] = 8, r.local_size[1] = 4;
  r.group_first[1] = 1, r.group_count[1] = 1;  // rows 4 to 7, every column
  const ArgValues args = ArgValues().buffer().buffer().add<int32_t>(32);
  expect_range(part(k, 1, r, args).writes, 4 * 32 * 4, 8 * 32 * 4, k);
  expect_range(part(k, 0, r, args).reads, 4 * 32 * 4, 8 * 32 * 4, k);
}

TEST(FootprintAnalysis, ThreeDimensionsFromGlobalSizes) {
  KernelInfo k = kernel(R"(
    kernel void fill(global int* out) {
      size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
      size_t w = get_global_size(0), h = get_global_size(1);
      out[(z * h + y) * w + x] = 1;
    })");
  ASSERT_EQ(k.footprint.whole_reason, "");
  NDRange r;
  r.work_dim = 3;
  r.global_size[0] = 8, r.global_size[1] = 4, r.global_size[2] = 4;
  r.local_size[0] = 8, r.local_size[1] = 4, r.local_size[2] = 1;
  r.group_first[2] = 1, r.group_count[2] = 2;  // planes 1 and 2
  expect_range(part(k, 0, r, ArgValues().buffer()).writes, 1 * 32 * 4, 3 * 32 * 4, k);
}

// The calling convention may pass a small vector as one integer (a ushort3 as i64): the element
// size comes from the builtin's pointer type, not from the value's IR type.
TEST(FootprintAnalysis, Vstore3OfShortsStepsBySixBytes) {
  KernelInfo k = kernel(
      "kernel void v(global const ushort* in, global ushort* out) {\n"
      "  size_t i = get_global_id(0);\n"
      "  vstore3(vload3(i, in), i, out);\n}");
  ASSERT_EQ(k.footprint.whole_reason, "");
  expect_range(part(k, 1, range_1d(1024, 64, 1, 1), ArgValues().buffer().buffer()).writes, 64 * 6,
               128 * 6, k);
  expect_range(part(k, 0, range_1d(1024, 64, 1, 1), ArgValues().buffer().buffer()).reads, 64 * 6,
               128 * 6, k);
}

TEST(FootprintAnalysis, VectorStoresAndVstore) {
  for (const char* body :
       {"((global float4*)out)[i] = (float4)(1.0f);", "vstore4((float4)(1.0f), i, out);"}) {
    KernelInfo k = kernel(std::string("kernel void v(global float* out) {\n"
                                      "  size_t i = get_global_id(0);\n  ") +
                          body + "\n}");
    ASSERT_EQ(k.footprint.whole_reason, "") << body;
    ASSERT_EQ(k.footprint.args[0].accesses.size(), 1u) << body << "\n" << describe(k.footprint);
    EXPECT_EQ(k.footprint.args[0].accesses[0].size, 16u) << body;
    expect_range(part(k, 0, range_1d(1024, 64, 2, 2), ArgValues().buffer()).writes, 2048, 4096, k);
  }
}

TEST(FootprintAnalysis, MatrixRowLoopIsBounded) {
  KernelInfo k = kernel(R"(
    kernel void mm(global const float* A, global const float* B, global float* C, int n) {
      int row = get_global_id(1), col = get_global_id(0);
      float acc = 0.0f;
      for (int k = 0; k < n; ++k) acc += A[row * n + k] * B[k * n + col];
      C[row * n + col] = acc;
    })");
  ASSERT_EQ(k.footprint.whole_reason, "");
  ASSERT_EQ(k.footprint.bounded.size(), 1u) << describe(k.footprint);
  NDRange r;
  r.work_dim = 2;
  r.global_size[0] = 16, r.global_size[1] = 16;
  r.local_size[0] = 16, r.local_size[1] = 4;
  r.group_first[1] = 1, r.group_count[1] = 1;  // rows 4 to 7
  const ArgValues args = ArgValues().buffer().buffer().buffer().add<int32_t>(16);
  expect_range(part(k, 0, r, args).reads, 4 * 16 * 4, 8 * 16 * 4, k);
  expect_range(part(k, 1, r, args).reads, 0, 16 * 16 * 4, k);
  expect_range(part(k, 2, r, args).writes, 4 * 16 * 4, 8 * 16 * 4, k);
  // No iteration at all: the bounded variable is empty, so nothing is claimed.
  const ArgValues none = ArgValues().buffer().buffer().buffer().add<int32_t>(0);
  EXPECT_FALSE(part(k, 0, r, none).reads.has_value());
}

TEST(FootprintAnalysis, LoopShapes) {
  KernelInfo k = kernel(R"(
    kernel void loops(global float* down, global float* tri, global float* after, int n) {
      int i = get_global_id(0);
      for (int k = n - 1; k >= 0; --k) down[k] = 0.0f;
      for (int j = 0; j < i; ++j) tri[i * n + j] = 1.0f;
      int k;
      for (k = 0; k < n; ++k) after[k] = 2.0f;
      after[k] = 3.0f;
    })");
  ASSERT_EQ(k.footprint.whole_reason, "");
  const NDRange r = range_1d(64, 16, 1, 1);  // work-items 16 to 31
  const ArgValues args = ArgValues().buffer().buffer().buffer().add<int32_t>(64);
  expect_range(part(k, 0, r, args).writes, 0, 64 * 4, k);
  // Row i, columns [0, i): rows 16 to 31 without the diagonal and beyond.
  expect_range(part(k, 1, r, args).writes, 16 * 64 * 4, (31 * 64 + 30 + 1) * 4, k);
  // Steps of four in unsigned arithmetic: bounded where the last step cannot wrap.
  KernelInfo quads = kernel(R"(
    kernel void quads(global float* out, uint n) {
      for (uint k = 0; k < n; k += 4) out[k] = 0.0f;
    })");
  expect_range(part(quads, 0, r, ArgValues().buffer().add<uint32_t>(64)).writes, 0, 63 * 4 + 4,
               quads);
  EXPECT_FALSE(part(quads, 0, r, ArgValues().buffer().add<uint32_t>(0xFFFFFFFEu)).writes);
  // The value the induction variable leaves the loop with is not one the loop bounds.
  EXPECT_FALSE(part(k, 2, r, args).writes.has_value()) << describe(k.footprint);
}

TEST(FootprintAnalysis, LocalSizeOnlyWhereGroupsAreUniform) {
  const char* source = R"(
    kernel void blocks(global int* out) {
      out[get_group_id(0) * get_local_size(0) + get_local_id(0)] = 1;
    })";
  const NDRange r = range_1d(1024, 64, 2, 2);
  // OpenCL C 3.0 allows a smaller last group, whose get_local_size the enqueued size is not.
  KernelInfo free_groups = kernel(source, "-cl-std=CL3.0");
  EXPECT_FALSE(free_groups.footprint.args[0].writes_known) << describe(free_groups.footprint);
  KernelInfo uniform = kernel(source, "-cl-std=CL3.0 -cl-uniform-work-group-size");
  expect_range(part(uniform, 0, r, ArgValues().buffer()).writes, 512, 1024, uniform);
}

TEST(FootprintAnalysis, StrideTwo) {
  KernelInfo k = kernel(R"(
    kernel void odd(global const float* in, global float* out) {
      int i = get_global_id(0);
      out[2 * i] = in[2 * i + 1];
    })");
  ASSERT_EQ(k.footprint.whole_reason, "");
  const NDRange r = range_1d(1024, 64, 2, 2);
  const ArgValues args = ArgValues().buffer().buffer();
  expect_range(part(k, 1, r, args).writes, 8 * 128, 8 * 255 + 4, k);
  expect_range(part(k, 0, r, args).reads, 8 * 128 + 4, 8 * 255 + 8, k);
}

TEST(FootprintAnalysis, GlobalOffsetSubtracted) {
  KernelInfo k = kernel(R"(
    kernel void shifted(global int* out) {
      out[get_global_id(0) - get_global_offset(0)] = 7;
    })");
  ASSERT_EQ(k.footprint.whole_reason, "");
  NDRange r = range_1d(256, 64, 1, 1);
  r.global_offset[0] = 100;
  expect_range(part(k, 0, r, ArgValues().buffer()).writes, 64 * 4, 128 * 4, k);
}

TEST(FootprintAnalysis, UnsignedIndexWrapNeedsRangeCheck) {
  KernelInfo k = kernel(R"(
    kernel void wrap(global int* out, uint base) {
      uint i = get_global_id(0);
      out[i + base] = 1;
    })");
  ASSERT_EQ(k.footprint.whole_reason, "");
  ASSERT_EQ(k.footprint.args[0].accesses.size(), 1u) << describe(k.footprint);
  EXPECT_FALSE(k.footprint.args[0].accesses[0].checks.empty()) << describe(k.footprint);
  const NDRange r = range_1d(1024, 64, 2, 2);
  expect_range(part(k, 0, r, ArgValues().buffer().add<uint32_t>(16)).writes, 144 * 4, 272 * 4, k);
  // i + base wraps past 2^32 for some work-items of the part: nothing is claimed.
  EXPECT_FALSE(part(k, 0, r, ArgValues().buffer().add<uint32_t>(0xFFFFFFC0u)).writes);
}

TEST(FootprintAnalysis, SignedScalarAndStructField) {
  KernelInfo k = kernel(R"(
    typedef struct { int w; int pad; int shift; } Params;
    kernel void s(global float* out, int delta, Params p) {
      int i = get_global_id(0);
      out[i + delta + p.shift] = 0.0f;
    })");
  ASSERT_EQ(k.footprint.whole_reason, "");
  struct Params {
    int32_t w, pad, shift;
  };
  const NDRange r = range_1d(1024, 64, 2, 2);
  const ArgValues args = ArgValues().buffer().add<int32_t>(-64).add(Params{0, 0, 4});
  expect_range(part(k, 0, r, args).writes, (128 - 60) * 4, (256 - 60) * 4, k);
}

TEST(FootprintAnalysis, DataDependentIndexIsUnknown) {
  KernelInfo k = kernel(R"(
    kernel void scatter(global const int* idx, global float* out) {
      int i = get_global_id(0);
      out[idx[i]] = 1.0f;
    })");
  ASSERT_EQ(k.footprint.whole_reason, "");
  EXPECT_FALSE(k.footprint.args[1].writes_known);
  EXPECT_TRUE(k.footprint.args[0].reads_known);
  const NDRange r = range_1d(1024, 64, 2, 2);
  const ArgValues args = ArgValues().buffer().buffer();
  EXPECT_FALSE(part(k, 1, r, args).writes.has_value());
  expect_range(part(k, 0, r, args).reads, 512, 1024, k);
}

TEST(FootprintAnalysis, PointerOfUnknownOriginReadMakesAllReadsUnknown) {
  KernelInfo k = kernel(R"(
    typedef struct { global int* p; } Table;
    kernel void chase(global Table* table, global int* out) {
      int i = get_global_id(0);
      out[i] = table[0].p[i];
    })");
  ASSERT_EQ(k.footprint.whole_reason, "");
  EXPECT_FALSE(k.footprint.args[0].reads_known);
  EXPECT_FALSE(k.footprint.args[1].reads_known);
  EXPECT_TRUE(k.footprint.args[1].writes_known);
}

TEST(FootprintAnalysis, KernelsKeptWhole) {
  struct Case {
    const char* source;
    const char* reason;
    const char* options = "";
  };
  const Case cases[] = {
      {"kernel void k(global int* c) { atomic_add(c, 1); }", "global atomics"},
      {"kernel void k(global atomic_int* c) {\n"
       "  atomic_fetch_add_explicit(c, 1, memory_order_relaxed, memory_scope_device); }",
       "global atomics", "-cl-std=CL3.0"},
      {"kernel void k(global int* out) { printf(\"%d\\n\", 1); out[0] = 1; }", "printf"},
      {"typedef struct { global int* p; } S;\n"
       "kernel void k(global S* s, global int* a) { s[0].p = a; }",
       "a pointer stored in memory"},
      {"global int counter = 0;\n"
       "kernel void k(global int* out) { out[get_global_id(0)] = counter++; }",
       "program-scope variables", "-cl-std=CL3.0"},
      {"typedef struct { global int* p; } T;\n"
       "kernel void k(global T* t) { t[0].p[get_global_id(0)] = 1; }",
       "a write through a pointer of unknown origin"},
  };
  for (const auto& [source, reason, options] : cases) {
    KernelInfo k = kernel(source, options);
    EXPECT_TRUE(k.footprint.analyzed) << source;
    EXPECT_EQ(k.footprint.whole_reason, reason) << source;
  }
}

TEST(FootprintAnalysis, LocalMemoryAndBarriersStaySplittable) {
  KernelInfo k = kernel(R"(
    kernel void tile(global const float* in, global float* out, local float* scratch) {
      local float fixed[64];
      local int count;
      size_t l = get_local_id(0), g = get_global_id(0);
      if (l == 0) count = 0;
      scratch[l] = in[g];
      fixed[l] = in[g];
      barrier(CLK_LOCAL_MEM_FENCE);
      atomic_inc(&count);
      out[g] = scratch[63 - l] + fixed[l];
    })");
  EXPECT_EQ(k.footprint.whole_reason, "") << describe(k.footprint);
  const NDRange r = range_1d(1024, 64, 2, 2);
  const ArgValues args = ArgValues().buffer().buffer().add<uint64_t>(256);
  expect_range(part(k, 1, r, args).writes, 512, 1024, k);
  expect_range(part(k, 0, r, args).reads, 512, 1024, k);
}

TEST(FootprintAnalysis, MathBuiltinsKeepKernelsSplittable) {
  KernelInfo k = kernel(R"(
    kernel void math(global const float* a, global float* out) {
      size_t i = get_global_id(0);
      float whole_part;
      out[i] = sin(a[i]) + native_exp(a[i]) + fmax(a[i], 1.0f) + fract(a[i], &whole_part) +
               whole_part;
    })");
  EXPECT_EQ(k.footprint.whole_reason, "") << describe(k.footprint);
  expect_range(part(k, 1, range_1d(1024, 64, 2, 2), ArgValues().buffer().buffer()).writes, 512,
               1024, k);
}

TEST(FootprintAnalysis, MemsetOfLengthFromArgument) {
  KernelInfo k = kernel(R"(
    kernel void clear(global int* out, global const int* in, int n) {
      int i = get_global_id(0);
      __builtin_memset(out + i * n, 0, n * 4);
      __builtin_memcpy(out + 4096, in + 2 * i, 64);
    })");
  ASSERT_EQ(k.footprint.whole_reason, "");
  const NDRange r = range_1d(64, 16, 1, 1);  // rows 16 to 31 of n ints
  const ArgValues args = ArgValues().buffer().buffer().add<int32_t>(8);
  expect_range(part(k, 0, r, args).writes, 16 * 8 * 4, 4096 * 4 + 64, k);
  expect_range(part(k, 1, r, args).reads, 16 * 8, 31 * 8 + 64, k);
}

TEST(FootprintAnalysis, ManyDistinctAccessesCountAsUnknown) {
  std::string source =
      "kernel void many(global int* out, global int* few) {\n"
      "  size_t i = get_global_id(0);\n  few[i] = 1;\n";
  for (int k = 0; k < 300; ++k) source += "  out[i * 300 + " + std::to_string(k) + "] = 0;\n";
  KernelInfo k = kernel(source + "}\n");
  ASSERT_EQ(k.footprint.whole_reason, "");
  EXPECT_FALSE(k.footprint.args[0].writes_known);
  EXPECT_TRUE(k.footprint.args[0].accesses.empty());
  EXPECT_TRUE(k.footprint.args[1].writes_known);
}

TEST(FootprintAnalysis, HelperFunctionsAreInlinedAndStructsCopied) {
  KernelInfo k = kernel(R"(
    typedef struct { float v[8]; } Block;
    size_t index(void) { return get_global_id(0); }
    kernel void copy(global const Block* in, global Block* out) {
      out[index()] = in[index()];
    })");
  ASSERT_EQ(k.footprint.whole_reason, "");
  const NDRange r = range_1d(1024, 64, 2, 2);
  expect_range(part(k, 1, r, ArgValues().buffer().buffer()).writes, 128 * 32, 256 * 32, k);
}

}  // namespace
}  // namespace manifold::compiler
