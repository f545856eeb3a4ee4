// OpenCL C's math options on the NVPTX pipeline, read off the PTX: each option changes exactly
// the instructions it allows, and a build without it keeps the strict forms (the options of one
// build never reach the next).
#include <gtest/gtest.h>

#include <string>

#include "compiler/compiler.h"
#include "nvptx_test_util.h"

namespace {

using namespace manifold::compiler;
using manifold::compiler::nvptx_test::has;
using manifold::compiler::nvptx_test::ptx_of;

const char* kDivide = R"CLC(
kernel void divide(global float* out, global const float* x, global const float* y) {
  size_t i = get_global_id(0);
  out[i] = x[i] / y[i];
}
)CLC";

TEST(NvptxMathOptions, DivisionIsFullRangeUnlessCorrectlyRoundedIsAsked) {
  // A build with relaxed math first: nothing of it may stay for the builds after it.
  const std::string relaxed = ptx_of(kDivide, "-cl-fast-relaxed-math");
  EXPECT_TRUE(has(relaxed, "div.approx")) << relaxed;

  const std::string plain = ptx_of(kDivide, "");
  EXPECT_TRUE(has(plain, "div.full.f32")) << plain;
  EXPECT_FALSE(has(plain, "div.rn.f32")) << plain;
  EXPECT_FALSE(has(plain, "div.approx")) << plain;
  EXPECT_FALSE(has(plain, ".ftz")) << plain;

  const std::string exact = ptx_of(kDivide, "-cl-fp32-correctly-rounded-divide-sqrt");
  EXPECT_TRUE(has(exact, "div.rn.f32")) << exact;
  EXPECT_FALSE(has(exact, "div.full")) << exact;

  const std::string flushing = ptx_of(kDivide, "-cl-denorms-are-zero");
  EXPECT_TRUE(has(flushing, "div.full.ftz.f32")) << flushing;
}

TEST(NvptxMathOptions, ReciprocalIsApproximateUnlessCorrectlyRoundedIsAsked) {
  const char* source = R"CLC(
kernel void reciprocal(global float* out, global const float* y) {
  size_t i = get_global_id(0);
  out[i] = 1.0f / y[i];
}
)CLC";
  const std::string plain = ptx_of(source, "");
  EXPECT_TRUE(has(plain, "rcp.approx.f32")) << plain;
  EXPECT_FALSE(has(plain, "rcp.rn")) << plain;
  const std::string exact = ptx_of(source, "-cl-fp32-correctly-rounded-divide-sqrt");
  EXPECT_TRUE(has(exact, "rcp.rn.f32")) << exact;
  EXPECT_FALSE(has(exact, "approx")) << exact;
}

TEST(NvptxMathOptions, VectorDivisionIsFullRangeToo) {
  const std::string ptx = ptx_of(R"CLC(
kernel void divide4(global float4* out, global const float4* x, global const float4* y) {
  size_t i = get_global_id(0);
  out[i] = x[i] / y[i];
}
)CLC",
                                 "");
  EXPECT_FALSE(has(ptx, "div.rn.f32")) << ptx;
  size_t count = 0;
  for (size_t at = ptx.find("div.full.f32"); at != std::string::npos;
       at = ptx.find("div.full.f32", at + 1))
    ++count;
  EXPECT_EQ(count, 4u) << ptx;
}

TEST(NvptxMathOptions, BuiltinLibraryDivisionsStayCorrectlyRounded) {
  // half_divide is the library's x / y: its own division, not the program's.
  const std::string ptx = ptx_of(R"CLC(
kernel void library(global float* out, global const float* x, global const float* y) {
  size_t i = get_global_id(0);
  out[i] = half_divide(x[i], y[i]);
}
)CLC",
                                 "");
  EXPECT_FALSE(has(ptx, "div.full")) << ptx;
}

// A product and a sum in two statements: fused only where -cl-mad-enable (or an option that
// implies it) allows it; a product and a sum in one expression: fused by OpenCL C's default
// FP_CONTRACT.
TEST(NvptxMathOptions, MadEnableFusesAcrossStatements) {
  const char* across = R"CLC(
kernel void across(global float* out, global const float* a, global const float* b,
                   global const float* c) {
  size_t i = get_global_id(0);
  float product = a[i] * b[i];
  out[i] = product + c[i];
}
)CLC";
  for (const char* options :
       {"-cl-mad-enable", "-cl-unsafe-math-optimizations", "-cl-fast-relaxed-math"}) {
    const std::string fused = ptx_of(across, options);
    EXPECT_TRUE(has(fused, "fma.rn.f32")) << options << "\n" << fused;
  }
  const std::string plain = ptx_of(across, "");
  EXPECT_FALSE(has(plain, "fma.rn.f32")) << plain;
  EXPECT_TRUE(has(plain, "mul.rn.f32")) << plain;

  const std::string within = ptx_of(R"CLC(
kernel void within(global float* out, global const float* a, global const float* b,
                   global const float* c) {
  size_t i = get_global_id(0);
  out[i] = a[i] * b[i] + c[i];
}
)CLC",
                                    "");
  EXPECT_TRUE(has(within, "fma.rn.f32")) << within;
}

TEST(NvptxMathOptions, FiniteMathOnlyDropsNanChecks) {
  const char* source = R"CLC(
kernel void finite(global float* out, global const float* x) {
  size_t i = get_global_id(0);
  float v = x[i] * 3.0f;
  out[i] = v != v ? 1.0f : v;
}
)CLC";
  const std::string finite = ptx_of(source, "-cl-finite-math-only");
  EXPECT_FALSE(has(finite, "setp.")) << finite;
  const std::string plain = ptx_of(source, "");
  EXPECT_TRUE(has(plain, "setp.")) << plain;
}

TEST(NvptxMathOptions, FiniteMathOnlyDefinesItsMacro) {
  const char* source = R"CLC(
#if __FINITE_MATH_ONLY__ != EXPECTED
#error __FINITE_MATH_ONLY__
#endif
kernel void k(global int* out) { out[0] = 1; }
)CLC";
  EXPECT_FALSE(ptx_of(source, "-DEXPECTED=1 -cl-finite-math-only").empty());
  EXPECT_FALSE(ptx_of(source, "-DEXPECTED=0").empty());
}

TEST(NvptxMathOptions, NoSignedZerosFoldsAddingZero) {
  const char* source = R"CLC(
kernel void zero(global float* out, global const float* x) {
  size_t i = get_global_id(0);
  out[i] = x[i] + 0.0f;
}
)CLC";
  const std::string folded = ptx_of(source, "-cl-no-signed-zeros");
  EXPECT_FALSE(has(folded, "add.rn.f32") || has(folded, "add.f32")) << folded;
  const std::string plain = ptx_of(source, "");
  EXPECT_TRUE(has(plain, "add.rn.f32")) << plain;
}

// vstore_half of a float converts with the hardware's cvt in each rounding mode; a double keeps
// the library's exact software rounding.
TEST(NvptxHalfStores, FloatSourcesConvertInHardware) {
  const std::string ptx = ptx_of(R"CLC(
kernel void store(global half* out, global const float* x) {
  size_t i = get_global_id(0);
  vstore_half(x[i], 4 * i, out);
  vstore_half_rtz(x[i], 4 * i + 1, out);
  vstore_half_rtp(x[i], 4 * i + 2, out);
  vstore_half_rtn(x[i], 4 * i + 3, out);
}
)CLC",
                                 "");
  for (const char* cvt : {"cvt.rn.f16.f32", "cvt.rz.f16.f32", "cvt.rp.f16.f32", "cvt.rm.f16.f32"})
    EXPECT_TRUE(has(ptx, cvt)) << cvt << "\n" << ptx;
  EXPECT_FALSE(has(ptx, ".f64")) << ptx;
  EXPECT_FALSE(has(ptx, ".ftz")) << ptx;
}

TEST(NvptxHalfStores, DoubleSourcesRoundInSoftware) {
  const std::string ptx = ptx_of(R"CLC(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void store(global half* out, global const double* x) {
  size_t i = get_global_id(0);
  vstore_half_rtp(x[i], i, out);
}
)CLC",
                                 "");
  EXPECT_FALSE(has(ptx, "cvt.rp.f16")) << ptx;
  EXPECT_TRUE(has(ptx, ".f64")) << ptx;
}

}  // namespace
