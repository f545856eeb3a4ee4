// Builtin library checks: each test runs a kernel over host-chosen inputs and compares with a
// host reference (math within the OpenCL full-profile ULP bounds).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/compiler.h"
#include "jit_test_util.h"

namespace manifold::compiler {
namespace {

using cpu::CpuExecutable;

using jit_test::build_and_load;
using jit_test::host;
using jit_test::range_1d;

// Runs kernel(in, out) over n items.
template <typename In, typename Out>
void run_in_out(CpuExecutable& exe, const char* kernel, std::vector<In>& in, std::vector<Out>& out,
                size_t items, size_t local = 1) {
  void* pin = in.data();
  void* pout = out.data();
  const void* args[] = {&pin, &pout};
  exe.run(kernel, range_1d(items, local), args, nullptr);
}

// Distance in units in the last place of a float result from the exact (double) value.
double ulp_error(float got, double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0 : 1e9;
  if (std::isinf(exact)) return got == float(exact) ? 0 : 1e9;
  float rounded = float(exact);
  if (std::isinf(rounded)) return std::isinf(got) ? 0 : 1e9;
  int exponent;
  std::frexp(rounded == 0 ? std::numeric_limits<float>::min() : rounded, &exponent);
  double ulp = std::ldexp(1.0, std::max(exponent - 24, -149));
  return std::fabs(double(got) - exact) / ulp;
}

TEST(Math, SingleAndVectorAgainstHostWithinUlpBounds) {
  auto exe = build_and_load(R"(
    __kernel void math(__global const float* in, __global float* out) {
      size_t i = get_global_id(0);
      float x = in[i];
      __global float* o = out + i * 16;
      o[0] = sin(x); o[1] = cos(x); o[2] = tan(x); o[3] = exp(x);
      o[4] = log(fabs(x)); o[5] = pow(fabs(x), 1.7f); o[6] = sqrt(fabs(x)); o[7] = atan2(x, 0.75f);
      o[8] = cbrt(x); o[9] = erf(x); o[10] = hypot(x, 3.0f); o[11] = fmod(x, 0.7f);
      float4 v = sin((float4)(x, x + 1, x + 2, x + 3));  // vector form
      o[12] = v.x; o[13] = v.w; o[14] = exp2(x); o[15] = log10(fabs(x));
    })");
  ASSERT_NE(exe, nullptr);
  const size_t n = 512;
  std::vector<float> in(n), out(n * 16);
  for (size_t i = 0; i < n; ++i) in[i] = float(-20.0 + 40.0 * double(i) / n + 0.001);
  run_in_out(*exe, "math", in, out, n, 64);
  struct Check {
    int slot;
    double bound;
    double (*reference)(double);
  };
  const Check checks[] = {
      {0, 4, [](double x) { return std::sin(x); }},
      {1, 4, [](double x) { return std::cos(x); }},
      {2, 5, [](double x) { return std::tan(x); }},
      {3, 3, [](double x) { return std::exp(x); }},
      {4, 3, [](double x) { return std::log(std::fabs(x)); }},
      {5, 16, [](double x) { return std::pow(std::fabs(x), double(1.7f)); }},
      {6, 3, [](double x) { return std::sqrt(std::fabs(x)); }},
      {7, 6, [](double x) { return std::atan2(x, 0.75); }},
      {8, 2, [](double x) { return std::cbrt(x); }},
      {9, 16, [](double x) { return std::erf(x); }},
      {10, 4, [](double x) { return std::hypot(x, 3.0); }},
      {11, 0, [](double x) { return std::fmod(x, double(0.7f)); }},
      {12, 4, [](double x) { return std::sin(x); }},
      {14, 3, [](double x) { return std::exp2(x); }},
      {15, 3, [](double x) { return std::log10(std::fabs(x)); }},
  };
  for (size_t i = 0; i < n; ++i) {
    for (const Check& check : checks) {
      double exact = check.reference(double(in[i]));
      ASSERT_LE(ulp_error(out[i * 16 + check.slot], exact), check.bound)
          << "slot " << check.slot << " x=" << in[i] << " got " << out[i * 16 + check.slot]
          << " exact " << exact;
    }
    ASSERT_LE(ulp_error(out[i * 16 + 13], std::sin(double(float(in[i] + 3)))), 4);
  }
}

TEST(Math, DoublePrecision) {
  auto exe = build_and_load(R"(
    __kernel void math(__global const double* in, __global double* out) {
      size_t i = get_global_id(0);
      double x = in[i];
      out[i * 4 + 0] = sin(x);
      out[i * 4 + 1] = exp(x);
      out[i * 4 + 2] = sqrt(fabs(x));
      out[i * 4 + 3] = fma(x, x, 1.0);
    })");
  ASSERT_NE(exe, nullptr);
  std::vector<double> in = {0.5, -1.25, 3.0, 10.0}, out(16);
  run_in_out(*exe, "math", in, out, 4);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_NEAR(out[i * 4 + 0], std::sin(in[i]), 4e-16 * 4);
    EXPECT_NEAR(out[i * 4 + 1], std::exp(in[i]), std::exp(in[i]) * 1e-15);
    EXPECT_EQ(out[i * 4 + 2], std::sqrt(std::fabs(in[i])));
    EXPECT_EQ(out[i * 4 + 3], std::fma(in[i], in[i], 1.0));
  }
}

TEST(Math, PointerResultsAndSpecialFunctions) {
  auto exe = build_and_load(R"(
    __kernel void k(__global const float* in, __global float* out) {
      float x = in[0];
      float whole;
      int e, q;
      __local float lw;
      out[0] = fract(x, &whole);
      out[1] = whole;
      out[2] = frexp(x, &e);
      out[3] = e;
      out[4] = remquo(x, 0.75f, &q);
      out[5] = q;
      out[6] = modf(x, &lw);
      out[7] = lw;
      float c;
      out[8] = sincos(x, &c);
      out[9] = c;
      out[10] = rsqrt(4.0f);
      out[11] = pown(x, 3);
      out[12] = rootn(-27.0f, 3);
      out[13] = ldexp(x, 4);
      out[14] = ilogb(x);
      out[15] = nan(0u) != nan(0u);
    })");
  ASSERT_NE(exe, nullptr);
  std::vector<float> in = {-5.375f}, out(16);
  run_in_out(*exe, "k", in, out, 1);
  EXPECT_FLOAT_EQ(out[0], 0.625f);
  EXPECT_EQ(out[1], -6.0f);
  EXPECT_EQ(out[2], -0.671875f);
  EXPECT_EQ(out[3], 3.0f);
  int q;
  float r = std::remquo(-5.375f, 0.75f, &q);
  EXPECT_EQ(out[4], r);
  EXPECT_EQ(int(out[5]) & 127, (q < 0 ? -((-q) & 127) : q & 127) & 127);
  EXPECT_EQ(out[6], -0.375f);
  EXPECT_EQ(out[7], -5.0f);
  EXPECT_NEAR(out[8], std::sin(-5.375), 1e-6);
  EXPECT_NEAR(out[9], std::cos(-5.375), 1e-6);
  EXPECT_EQ(out[10], 0.5f);
  EXPECT_FLOAT_EQ(out[11], -5.375f * -5.375f * -5.375f);
  EXPECT_FLOAT_EQ(out[12], -3.0f);
  EXPECT_EQ(out[13], -86.0f);
  EXPECT_EQ(out[14], 2.0f);
  EXPECT_EQ(out[15], 1.0f);
}

TEST(Integer, Functions) {
  auto exe = build_and_load(R"(
    __kernel void k(__global const int* in, __global long* out) {
      int a = in[0], b = in[1];
      out[0] = mul_hi(a, b);
      out[1] = clz((uint)b);
      out[2] = popcount(a);
      out[3] = rotate((uint)a, 8u);
      out[4] = add_sat(a, 0x7fffffff);
      out[5] = abs_diff(a, b);
      out[6] = upsample((short)-2, (ushort)5);
      out[7] = mad_sat(a, b, 0);
      out[8] = hadd(a, b);
      out[9] = rhadd(a, b);
      out[10] = mul_hi(-3L, 5L);
      out[11] = ctz(b);
      int4 v = clamp((int4)(a, b, -100, 100), -50, 50);
      out[12] = v.x + v.y * 1000 + v.z * 1000000 + (long)v.w * 1000000000;
      out[13] = sub_sat((uchar)3, (uchar)10);
      out[14] = abs(-7);
      out[15] = max((ulong)a, 3ul);
    })",
                            "-cl-std=CL2.0");
  ASSERT_NE(exe, nullptr);
  std::vector<int> in = {123456789, -40};
  std::vector<int64_t> out(16);
  run_in_out(*exe, "k", in, out, 1);
  int a = in[0], b = in[1];
  EXPECT_EQ(out[0], int((int64_t(a) * b) >> 32));
  EXPECT_EQ(out[1], __builtin_clz(uint32_t(b)));
  EXPECT_EQ(out[2], __builtin_popcount(a));
  EXPECT_EQ(uint32_t(out[3]), (uint32_t(a) << 8) | (uint32_t(a) >> 24));
  EXPECT_EQ(out[4], 0x7fffffff);
  EXPECT_EQ(out[5], int64_t(a) - b);
  EXPECT_EQ(out[6], int16_t(-2) * 65536 + 5);
  EXPECT_EQ(out[7], std::numeric_limits<int>::min());
  EXPECT_EQ(out[8], (int64_t(a) + b) >> 1);
  EXPECT_EQ(out[9], (int64_t(a) + b + 1) >> 1);
  EXPECT_EQ(out[10], -1);
  EXPECT_EQ(out[11], __builtin_ctz(uint32_t(b)));
  EXPECT_EQ(out[12], 50 + (-40) * 1000 + (-50) * 1000000 + 50LL * 1000000000);
  EXPECT_EQ(out[13], 0);
  EXPECT_EQ(out[14], 7);
  EXPECT_EQ(out[15], a);
}

TEST(Conversions, SaturationAndRoundingModes) {
  auto exe = build_and_load(R"(
    __kernel void k(__global const float* in, __global int* out) {
      size_t i = get_global_id(0);
      float x = in[i];
      __global int* o = out + i * 8;
      o[0] = convert_uchar_sat(x);
      o[1] = convert_char_sat_rte(x);
      o[2] = convert_int_rtn(x);
      o[3] = convert_int_rtp(x);
      o[4] = convert_int(x);
      o[5] = convert_short_sat_rtz(x * 1000.0f);
      int4 v = convert_int4_sat_rte((float4)(x));
      o[6] = v.z;
      o[7] = as_int(convert_float_rtz(16777217 + (int)i));
    })");
  ASSERT_NE(exe, nullptr);
  std::vector<float> in = {-2.5f, 0.5f, 1.5f, 300.7f, -1e10f, std::nanf(""), 2.5f, 127.5f};
  std::vector<int> out(in.size() * 8);
  run_in_out(*exe, "k", in, out, in.size());
  auto sat = [](double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; };
  for (size_t i = 0; i < in.size(); ++i) {
    float x = in[i];
    const int* o = &out[i * 8];
    if (std::isnan(x)) {
      EXPECT_EQ(o[0], 0);
      EXPECT_EQ(o[1], 0);
      EXPECT_EQ(o[6], 0);
      continue;
    }
    EXPECT_EQ(o[0], int(sat(std::trunc(x), 0, 255))) << x;
    EXPECT_EQ(o[1], int(sat(std::nearbyint(x), -128, 127))) << x;
    if (std::fabs(x) < 2e9) {
      EXPECT_EQ(o[2], int(std::floor(x))) << x;
      EXPECT_EQ(o[3], int(std::ceil(x))) << x;
      EXPECT_EQ(o[4], int(x)) << x;
    }
    EXPECT_EQ(o[5], int(sat(std::trunc(x * 1000.0f), -32768, 32767))) << x;
    EXPECT_EQ(o[6], int(sat(std::nearbyint(x), -2147483648.0, 2147483647.0))) << x;
    // 16777217 + i is odd for even i: not representable, so rtz rounds down.
    float expected = float(int64_t(16777217 + i) & ~int64_t(1));
    int expected_bits;
    std::memcpy(&expected_bits, &expected, 4);
    EXPECT_EQ(o[7], expected_bits) << i;
  }
}

TEST(VloadVstore, VectorsAndHalf) {
  auto exe = build_and_load(R"(
    __kernel void k(__global float* data, __global half* h) {
      float4 v = vload4(1, data);        // data[4..7]
      vstore4(v * 2.0f, 2, data);        // data[8..11]
      float3 t = vload3(0, data + 1);    // data[1..3]
      vstore3(t, 4, data);               // data[12..14]
      vstore_half(1.0f / 3.0f, 0, h);
      vstore_half_rtz(1.0f / 3.0f, 1, h);
      vstore_half_rtp(1.0f / 3.0f, 2, h);
      vstore_half4_rtn((float4)(-1.0f / 3.0f, 65504.0f, 1e6f, 1e-8f), 1, h);  // h[4..7]
      data[15] = vload_half(2, h);
    })");
  ASSERT_NE(exe, nullptr);
  std::vector<float> data(16);
  for (int i = 0; i < 16; ++i) data[i] = float(i);
  std::vector<uint16_t> h(8, 0);
  void* pd = data.data();
  void* ph = h.data();
  const void* args[] = {&pd, &ph};
  exe->run("k", range_1d(1, 1), args, nullptr);
  EXPECT_EQ(data[8], 8.0f);
  EXPECT_EQ(data[11], 14.0f);
  EXPECT_EQ(data[12], 1.0f);
  EXPECT_EQ(data[14], 3.0f);
  EXPECT_EQ(h[0], 0x3555);  // 1/3 to nearest
  EXPECT_EQ(h[1], 0x3555);  // toward zero
  EXPECT_EQ(h[2], 0x3556);  // toward +inf
  EXPECT_EQ(h[4], 0xb556);  // -1/3 toward -inf
  EXPECT_EQ(h[5], 0x7bff);  // 65504 exactly
  EXPECT_EQ(h[6], 0x7bff);  // overflow toward -inf for a positive value: largest finite
  EXPECT_EQ(h[7], 0x0000);  // tiny positive toward -inf: +0
  EXPECT_FLOAT_EQ(data[15], 0.333496094f);
}

TEST(Relational, VectorMasksSelectAndGeometric) {
  auto exe = build_and_load(R"(
    __kernel void k(__global float* out, __global int* iout) {
      float4 v = (float4)(1.0f, NAN, -INFINITY, -0.0f);
      int4 m = isnan(v);
      iout[0] = m.x; iout[1] = m.y;
      iout[2] = any(isinf(v));
      iout[3] = all(isfinite(v));
      iout[4] = signbit(-0.0f);
      int4 s = select((int4)(1, 2, 3, 4), (int4)(10, 20, 30, 40), (int4)(0, -1, 0, -1));
      iout[5] = s.x + s.y + s.z + s.w;
      iout[6] = bitselect(0x0f0f, 0x7070, 0x00ff);
      out[0] = dot((float4)(1, 2, 3, 4), (float4)(5, 6, 7, 8));
      float3 c = cross((float3)(1, 0, 0), (float3)(0, 1, 0));
      out[1] = c.z;
      out[2] = length((float2)(3e30f, 4e30f));
      out[3] = normalize((float2)(0.0f, 5.0f)).y;
      out[4] = distance((float4)(1, 1, 1, 1), (float4)(2, 2, 2, 2));
      out[5] = mix(2.0f, 4.0f, 0.25f);
      out[6] = smoothstep(0.0f, 1.0f, 0.5f);
      out[7] = clamp(5.0f, 0.0f, 1.0f) + step(0.5f, 0.7f) + sign(-3.0f) + degrees(M_PI_F);
    })");
  ASSERT_NE(exe, nullptr);
  std::vector<float> out(8);
  std::vector<int> iout(8);
  void* po = out.data();
  void* pi = iout.data();
  const void* args[] = {&po, &pi};
  exe->run("k", range_1d(1, 1), args, nullptr);
  EXPECT_EQ(iout[0], 0);
  EXPECT_EQ(iout[1], -1);
  EXPECT_EQ(iout[2], 1);
  EXPECT_EQ(iout[3], 0);
  EXPECT_EQ(iout[4], 1);
  EXPECT_EQ(iout[5], 1 + 20 + 3 + 40);
  EXPECT_EQ(iout[6], 0x0f70);
  EXPECT_EQ(out[0], 70.0f);
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_FLOAT_EQ(out[2], 5e30f);
  EXPECT_EQ(out[3], 1.0f);
  EXPECT_FLOAT_EQ(out[4], 2.0f);
  EXPECT_EQ(out[5], 2.5f);
  EXPECT_EQ(out[6], 0.5f);
  EXPECT_FLOAT_EQ(out[7], 1.0f + 1.0f - 1.0f + 180.0f);
}

// frexp over float2/double2 elements read with vload2 (piglit's generated frexp test): the
// work-item loop is vectorized with stride-2 accesses, where LLVM 22 miscompiled llvm.frexp into
// invalid IR and crashed. Also the special and subnormal inputs.
TEST(Math, FrexpVectorizedWithSubnormalsAndSpecials) {
  auto exe = build_and_load(R"(
    __kernel void f(__global float* out, __global int* exponent, __global const float* in) {
      int2 e;
      vstore2(frexp(vload2(get_global_id(0), in), &e), get_global_id(0), out);
      vstore2(e, get_global_id(0), exponent);
    }
    __kernel void d(__global double* out, __global int* exponent, __global const double* in) {
      int2 e;
      vstore2(frexp(vload2(get_global_id(0), in), &e), get_global_id(0), out);
      vstore2(e, get_global_id(0), exponent);
    })");
  ASSERT_NE(exe, nullptr);
  auto check = [&]<typename T>(const char* kernel, std::vector<T> in) {
    const T inf = std::numeric_limits<T>::infinity();
    for (T v : {T(0), T(-0.0), T(1), T(-3.5), T(0.75), T(1e30), std::numeric_limits<T>::min(),
                std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min() * 5,
                std::numeric_limits<T>::min() / 3, std::numeric_limits<T>::max(), inf, -inf,
                std::numeric_limits<T>::quiet_NaN()})
      in.push_back(v);
    while (in.size() % 32) in.push_back(T(in.size()) * T(-1.25));
    std::vector<T> out(in.size(), T(-7));
    std::vector<int> exponent(in.size(), -7);
    void* po = out.data();
    void* pe = exponent.data();
    void* pi = in.data();
    const void* args[] = {&po, &pe, &pi};
    exe->run(kernel, range_1d(in.size() / 2, 16), args, nullptr);
    for (size_t i = 0; i < in.size(); ++i) {
      int expected_exponent = 0;
      const T expected = std::frexp(in[i], &expected_exponent);
      if (std::isnan(in[i])) {
        EXPECT_TRUE(std::isnan(out[i])) << kernel << " " << i;
        continue;
      }
      EXPECT_EQ(out[i], expected) << kernel << " frexp(" << in[i] << ")";
      EXPECT_EQ(std::signbit(out[i]), std::signbit(expected)) << kernel << " " << in[i];
      if (!std::isinf(in[i]))
        EXPECT_EQ(exponent[i], expected_exponent) << kernel << " frexp(" << in[i] << ")";
      else
        EXPECT_EQ(exponent[i], 0) << kernel;
    }
  };
  check("f", std::vector<float>{});
  check("d", std::vector<double>{});
}

// shuffle/shuffle2 with run-time masks (no constant folding): every result element picks the
// input element the mask names modulo n (2n for shuffle2, the second input above n).
TEST(Misc, ShuffleAndShuffle2) {
  auto exe = build_and_load(R"(
    __kernel void k(__global const uint* masks, __global int* out, __global char* cout,
                    __global double* dout, __global ulong* lout) {
      const uint16 m = vload16(0, masks);
      const int4 x4 = (int4)(10, 11, 12, 13);
      vstore8(shuffle(x4, m.lo), 0, out);                                            // 0..7
      vstore2(shuffle2((int8)(0, 1, 2, 3, 4, 5, 6, 7),
                       (int8)(100, 101, 102, 103, 104, 105, 106, 107), m.s01), 0, out + 8);
      vstore16(shuffle2(x4, x4 + 20, m), 0, out + 10);                               // 10..25
      vstore4(shuffle((int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), m.hi.lo),
              0, out + 26);                                                          // 26..29
      const char16 c = (char16)(-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14,
                                -15, -16);
      vstore16(shuffle(c, convert_uchar16(m)), 0, cout);
      vstore2(shuffle(c.s01, convert_uchar2(m.s67)), 0, cout + 16);
      const double2 d = (double2)(0.5, 1.5);
      vstore4(shuffle2(d, d * 10.0, convert_ulong4(m.s4567)), 0, dout);
      vstore8(shuffle2((ulong2)(1, 2), (ulong2)(3, 4), convert_ulong8(m.hi)), 0, lout);
    })");
  ASSERT_NE(exe, nullptr);
  std::vector<uint32_t> masks = {0, 5, 17, 3, 255, 8,  1000003, 2,
                                 7, 6, 31, 4, 9,   12, 15,      0xffffffffu};
  std::vector<int> out(30, -99);
  std::vector<int8_t> cout(18, 0);
  std::vector<double> dout(4, 0);
  std::vector<uint64_t> lout(8, 0);
  void* pm = masks.data();
  void* po = out.data();
  void* pc = cout.data();
  void* pd = dout.data();
  void* pl = lout.data();
  const void* args[] = {&pm, &po, &pc, &pd, &pl};
  exe->run("k", range_1d(1, 1), args, nullptr);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], 10 + int(masks[i] % 4)) << i;
  for (int i = 0; i < 2; ++i) {
    const uint32_t index = masks[i] % 16;
    EXPECT_EQ(out[8 + i], index < 8 ? int(index) : int(100 + index - 8)) << i;
  }
  for (int i = 0; i < 16; ++i) {
    const uint32_t index = masks[i] % 8;
    EXPECT_EQ(out[10 + i], index < 4 ? 10 + int(index) : 30 + int(index - 4)) << i;
  }
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[26 + i], int(masks[8 + i] % 16)) << i;
  for (int i = 0; i < 16; ++i) EXPECT_EQ(cout[i], -1 - int(uint8_t(masks[i]) % 16)) << i;
  for (int i = 0; i < 2; ++i) EXPECT_EQ(cout[16 + i], -1 - int(uint8_t(masks[6 + i]) % 2)) << i;
  const double d[] = {0.5, 1.5, 5.0, 15.0};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(dout[i], d[masks[4 + i] % 4]) << i;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(lout[i], 1 + masks[8 + i] % 4) << i;
}

TEST(WorkGroup, CollectivesAndAsyncCopy) {
  auto exe = build_and_load(R"(
    __kernel void k(__global const int* in, __global int* out, __global float* fout) {
      size_t g = get_global_id(0);
      int x = in[g];
      __global int* o = out + g * 6;
      o[0] = work_group_reduce_add(x);
      o[1] = work_group_scan_inclusive_add(x);
      o[2] = work_group_scan_exclusive_max(x);
      o[3] = work_group_broadcast(x, 5);
      o[4] = work_group_all(x > 0);
      o[5] = work_group_any(x == 7);
      fout[g] = work_group_reduce_min((float)x * 0.5f);
    }
    __kernel void copy(__global const float* src, __global float* dst) {
      __local float tile[64];
      event_t e = async_work_group_copy(tile, src + get_group_id(0) * 64, 64, 0);
      wait_group_events(1, &e);
      dst[get_global_id(0)] = tile[63 - get_local_id(0)];
    })",
                            "-cl-std=CL2.0");
  ASSERT_NE(exe, nullptr);
  const size_t n = 128, local = 32;
  std::vector<int> in(n), out(n * 6);
  std::vector<float> fout(n);
  for (size_t i = 0; i < n; ++i) in[i] = int((i * 37) % 23) - (i < 64 ? 0 : 5);
  void* pin = in.data();
  void* pout = out.data();
  void* pf = fout.data();
  const void* args[] = {&pin, &pout, &pf};
  exe->run("k", range_1d(n, local), args, nullptr);
  for (size_t g = 0; g < n / local; ++g) {
    int sum = 0, prefix = 0, running_max = std::numeric_limits<int>::min(), min_value = 1 << 30;
    bool all_positive = true, any_seven = false;
    for (size_t l = 0; l < local; ++l) {
      int x = in[g * local + l];
      sum += x;
      all_positive &= x > 0;
      any_seven |= x == 7;
      min_value = std::min(min_value, x);
    }
    for (size_t l = 0; l < local; ++l) {
      size_t i = g * local + l;
      int x = in[i];
      prefix += x;
      ASSERT_EQ(out[i * 6 + 0], sum);
      ASSERT_EQ(out[i * 6 + 1], prefix);
      ASSERT_EQ(out[i * 6 + 2], running_max) << l;
      running_max = std::max(running_max, x);
      ASSERT_EQ(out[i * 6 + 3], in[g * local + 5]);
      ASSERT_EQ(out[i * 6 + 4], all_positive ? 1 : 0);
      ASSERT_EQ(out[i * 6 + 5], any_seven ? 1 : 0);
      ASSERT_EQ(fout[i], float(min_value) * 0.5f);
    }
  }

  std::vector<float> src(256), dst(256);
  for (size_t i = 0; i < 256; ++i) src[i] = float(i);
  void* ps = src.data();
  void* pd = dst.data();
  const void* copy_args[] = {&ps, &pd};
  exe->run("copy", range_1d(256, 64), copy_args, nullptr);
  for (size_t i = 0; i < 256; ++i) ASSERT_EQ(dst[i], float((i / 64) * 64 + 63 - i % 64)) << i;
}

}  // namespace
}  // namespace manifold::compiler
