// Builtins over many inputs against host references: math at the full-profile ULP bounds of the
// OpenCL SPIR-V environment spec (table 8.1) including NaN, infinities, signed zeros, denormals
// and overflow; conversions with saturation and every rounding mode; vstore_half rounding;
// integer functions at their edges; atomics (32 and 64 bit); work-group collectives.
//
// Inputs: special values, every power of two, values near the function's interesting points and
// random bit patterns (fixed seed). Kernels run with local size 16 so that the work-item loop
// vectorizes: the SLEEF vector forms are checked, not only the scalar ones.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
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

// Runs kernel(args...) over `items` work-items (any count: the last group may be partial).
void run(CpuExecutable& exe, const char* kernel, std::vector<void*> pointers, size_t items,
         size_t local = 16) {
  std::vector<const void*> args;
  for (void*& pointer : pointers) args.push_back(&pointer);
  exe.run(kernel, range_1d(items, local), args.data(), nullptr);
}

float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint32_t float_to_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

std::vector<float> float_inputs(size_t random_count, uint32_t seed) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,
                          -0.0f,
                          inf,
                          -inf,
                          std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::denorm_min(),
                          -std::numeric_limits<float>::denorm_min(),
                          bits_to_float(0x007fffff),  // largest denormal
                          bits_to_float(0x807fffff),
                          std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(),
                          1.0f,
                          -1.0f,
                          0.5f,
                          -0.5f,
                          2.0f,
                          3.14159265f,
                          -3.14159265f,
                          1.57079633f,
                          88.7f,
                          -87.3f,
                          -103.9f,
                          89.5f,
                          1e-30f,
                          1e30f,
                          0.99999994f,
                          1.00000012f};
  for (int e = -149; e <= 127; ++e) {
    v.push_back(std::ldexp(1.0f, e));
    v.push_back(-std::ldexp(1.5f, std::min(e, 126)));
  }
  std::mt19937 engine(seed);
  for (size_t i = 0; i < random_count; ++i) {
    v.push_back(bits_to_float(engine()));                                       // any bits
    v.push_back(std::uniform_real_distribution<float>(-10.0f, 10.0f)(engine));  // the usual
  }
  for (float& x : v)
    if (std::isnan(x)) x = std::numeric_limits<float>::quiet_NaN();  // one NaN pattern
  return v;
}

// ULP error of a float result against an exact (long double) value, as the spec defines it.
// Returns 0 for matching NaN/inf/zero cases and a huge value for mismatches in kind.
double ulp_error(float got, long double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0 : 1e30;
  if (std::isnan(got)) return 1e30;
  if (std::isinf(exact)) return got == float(exact) ? 0 : 1e30;
  // A finite exact value beyond the largest float: infinity is within 1 ulp of it.
  const long double largest = std::numeric_limits<float>::max();
  if (std::fabs(exact) > largest) {
    if (std::isinf(got) && std::signbit(got) == std::signbit(exact)) return 0;
  }
  if (std::isinf(got)) return 1e30;
  int exponent;
  std::frexp(double(exact), &exponent);
  // ulp of the float binade holding exact; denormals have the fixed ulp 2^-149.
  const long double ulp = std::ldexp(1.0L, std::max(exponent - 24, -149));
  return double(std::fabs((long double)got - exact) / ulp);
}

double ulp_error_double(double got, long double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0 : 1e30;
  if (std::isnan(got)) return 1e30;
  if (std::isinf(exact)) return got == double(exact) ? 0 : 1e30;
  if (std::fabs(exact) > std::numeric_limits<double>::max())
    if (std::isinf(got) && std::signbit(got) == std::signbit(exact)) return 0;
  if (std::isinf(got)) return 1e30;
  int exponent;
  std::frexp(exact, &exponent);
  const long double ulp = std::ldexp(1.0L, std::max(exponent - 53, -1074));
  return double(std::fabs((long double)got - exact) / ulp);
}

constexpr long double kPi = 3.141592653589793238462643383279502884L;

struct Unary {
  const char* name;
  double bound;
  std::function<long double(long double)> reference;
};

std::string describe_failures(const std::vector<std::string>& failures) {
  std::ostringstream out;
  for (size_t i = 0; i < failures.size() && i < 12; ++i) out << "  " << failures[i] << "\n";
  if (failures.size() > 12) out << "  ... " << failures.size() - 12 << " more\n";
  return out.str();
}

TEST(MathPrecision, UnaryFloatFunctionsWithinUlpBounds) {
  const std::vector<Unary> functions = {
      {"acos", 4, [](long double x) { return std::acos(x); }},
      {"acosh", 4, [](long double x) { return std::acosh(x); }},
      {"acospi", 5, [](long double x) { return std::acos(x) / kPi; }},
      {"asin", 4, [](long double x) { return std::asin(x); }},
      {"asinh", 4, [](long double x) { return std::asinh(x); }},
      {"asinpi", 5, [](long double x) { return std::asin(x) / kPi; }},
      {"atan", 5, [](long double x) { return std::atan(x); }},
      {"atanh", 5, [](long double x) { return std::atanh(x); }},
      {"atanpi", 5, [](long double x) { return std::atan(x) / kPi; }},
      {"cbrt", 2, [](long double x) { return std::cbrt(x); }},
      {"ceil", 0, [](long double x) { return std::ceil(x); }},
      {"cos", 4, [](long double x) { return std::cos(x); }},
      {"cosh", 4, [](long double x) { return std::cosh(x); }},
      {"cospi", 4,
       [](long double x) {
         if (std::isinf(x)) return (long double)NAN;
         const long double r = std::fmod(std::fabs(x), 2.0L);
         if (r == 0.5L || r == 1.5L) return 0.0L;  // cospi(n + 0.5) = +0
         return std::cos(kPi * r);
       }},
      {"erfc", 16, [](long double x) { return std::erfc(x); }},
      {"erf", 16, [](long double x) { return std::erf(x); }},
      {"exp", 3, [](long double x) { return std::exp(x); }},
      {"exp2", 3, [](long double x) { return std::exp2(x); }},
      {"exp10", 3, [](long double x) { return std::pow(10.0L, x); }},
      {"expm1", 3, [](long double x) { return std::expm1(x); }},
      {"fabs", 0, [](long double x) { return std::fabs(x); }},
      {"floor", 0, [](long double x) { return std::floor(x); }},
      {"log", 3, [](long double x) { return std::log(x); }},
      {"log2", 3, [](long double x) { return std::log2(x); }},
      {"log10", 3, [](long double x) { return std::log10(x); }},
      {"log1p", 2, [](long double x) { return std::log1p(x); }},
      {"logb", 0, [](long double x) { return std::logb(float(x)); }},
      {"rint", 0, [](long double x) { return std::nearbyint(x); }},
      {"round", 0, [](long double x) { return std::round(x); }},
      {"rsqrt", 2, [](long double x) { return 1.0L / std::sqrt(x); }},
      {"sin", 4, [](long double x) { return std::sin(x); }},
      {"sinh", 4, [](long double x) { return std::sinh(x); }},
      {"sinpi", 4,
       [](long double x) {
         if (std::isinf(x)) return (long double)NAN;
         const long double reduced = std::fmod(x, 2.0L);
         if (reduced == std::trunc(reduced)) return std::copysign(0.0L, x);  // integers: +/-0
         return std::sin(kPi * reduced);
       }},
      {"sqrt", 3, [](long double x) { return std::sqrt(x); }},
      {"tan", 5, [](long double x) { return std::tan(x); }},
      {"tanh", 5, [](long double x) { return std::tanh(x); }},
      {"tanpi", 6,
       [](long double x) {
         if (std::isinf(x)) return (long double)NAN;
         const long double r = std::fmod(x, 1.0L);  // tan has period pi
         if (std::fabs(r) == 0.5L) {
           // tanpi(n + 0.5): +inf for even n, -inf for odd n.
           const long double n = std::floor(x);
           return std::fmod(std::fabs(n), 2.0L) == 0 ? (long double)INFINITY
                                                     : -(long double)INFINITY;
         }
         if (r == 0) return std::copysign(0.0L, x);
         return std::tan(kPi * r);
       }},
      {"tgamma", 16, [](long double x) { return std::tgamma(x); }},
      {"trunc", 0, [](long double x) { return std::trunc(x); }},
  };
  std::string source;
  for (const Unary& f : functions)
    source += std::string("__kernel void k_") + f.name +
              "(__global const float* in, __global float* out) {\n"
              "  size_t i = get_global_id(0); out[i] = " +
              f.name + "(in[i]); }\n";
  auto exe = build_and_load(source);
  ASSERT_NE(exe, nullptr);
  std::vector<float> in = float_inputs(1500, 1);
  std::vector<float> out(in.size());
  for (const Unary& f : functions) {
    std::fill(out.begin(), out.end(), 12345.0f);
    run(*exe, (std::string("k_") + f.name).c_str(), {in.data(), out.data()}, in.size());
    std::vector<std::string> failures;
    for (size_t i = 0; i < in.size(); ++i) {
      const long double exact = f.reference((long double)in[i]);
      double error = ulp_error(out[i], exact);
      // Zero results: the sign must match too (e.g. sin(-0) = -0).
      if (error == 0 && exact == 0 && out[i] == 0 && std::signbit(out[i]) != std::signbit(exact) &&
          f.bound == 0)
        error = 1e30;
      if (error > f.bound) {
        std::ostringstream line;
        line.precision(9);
        line << f.name << "(" << in[i] << " = 0x" << std::hex << float_to_bits(in[i]) << std::dec
             << ") = " << out[i] << ", exact " << double(exact) << ", " << error << " ulp";
        failures.push_back(line.str());
      }
    }
    EXPECT_TRUE(failures.empty()) << f.name << " (bound " << f.bound << " ulp), " << failures.size()
                                  << " of " << in.size() << " inputs:\n"
                                  << describe_failures(failures);
  }
}

struct Binary {
  const char* name;
  const char* expression;  // in terms of x and y
  double bound;
  std::function<long double(long double, long double)> reference;
};

TEST(MathPrecision, BinaryFloatFunctionsWithinUlpBounds) {
  const std::vector<Binary> functions = {
      {"atan2", "atan2(x, y)", 6, [](long double x, long double y) { return std::atan2(x, y); }},
      {"atan2pi", "atan2pi(x, y)", 6,
       [](long double x, long double y) { return std::atan2(x, y) / kPi; }},
      {"pow", "pow(x, y)", 16, [](long double x, long double y) { return std::pow(x, y); }},
      {"hypot", "hypot(x, y)", 4, [](long double x, long double y) { return std::hypot(x, y); }},
      {"fmod", "fmod(x, y)", 0, [](long double x, long double y) { return std::fmod(x, y); }},
      {"remainder", "remainder(x, y)", 0,
       [](long double x, long double y) { return std::remainder(x, y); }},
      {"fdim", "fdim(x, y)", 0.5,
       [](long double x, long double y) { return (long double)std::fdim(float(x), float(y)); }},
      {"fmax", "fmax(x, y)", 0, [](long double x, long double y) { return std::fmax(x, y); }},
      {"fmin", "fmin(x, y)", 0, [](long double x, long double y) { return std::fmin(x, y); }},
      {"copysign", "copysign(x, y)", 0,
       [](long double x, long double y) { return std::copysign(x, y); }},
      {"nextafter", "nextafter(x, y)", 0,
       [](long double x, long double y) {
         return (long double)std::nextafter(float(x), float(y));
       }},
      {"divide", "x / y", 2.5, [](long double x, long double y) { return x / y; }},
      {"maxmag", "maxmag(x, y)", 0,
       [](long double x, long double y) {
         if (std::fabs(x) > std::fabs(y)) return x;
         if (std::fabs(y) > std::fabs(x)) return y;
         return std::fmax(x, y);
       }},
      {"minmag", "minmag(x, y)", 0,
       [](long double x, long double y) {
         if (std::fabs(x) < std::fabs(y)) return x;
         if (std::fabs(y) < std::fabs(x)) return y;
         return std::fmin(x, y);
       }},
  };
  std::string source;
  for (const Binary& f : functions)
    source += std::string("__kernel void k_") + f.name +
              "(__global const float* a, __global const float* b, __global float* out) {\n"
              "  size_t i = get_global_id(0); float x = a[i], y = b[i]; out[i] = " +
              f.expression + "; }\n";
  auto exe = build_and_load(source);
  ASSERT_NE(exe, nullptr);
  // Pairs: every special value against every special value, plus random pairs.
  std::vector<float> specials = float_inputs(0, 2);
  specials.resize(28);
  std::vector<float> a, b;
  for (float x : specials)
    for (float y : specials) a.push_back(x), b.push_back(y);
  std::vector<float> random_a = float_inputs(1200, 3), random_b = float_inputs(1200, 4);
  std::mt19937 engine(5);
  std::shuffle(random_b.begin(), random_b.end(), engine);
  a.insert(a.end(), random_a.begin(), random_a.end());
  b.insert(b.end(), random_b.begin(), random_b.begin() + random_a.size());
  // Bases near 1 with large exponents: pow's hard cases.
  for (int i = 0; i < 200; ++i) {
    a.push_back(1.0f + float(i - 100) * 1e-6f);
    b.push_back(float(i) * 97.0f - 5000.0f);
  }
  std::vector<float> out(a.size());
  for (const Binary& f : functions) {
    run(*exe, (std::string("k_") + f.name).c_str(), {a.data(), b.data(), out.data()}, a.size());
    std::vector<std::string> failures;
    for (size_t i = 0; i < a.size(); ++i) {
      const long double exact = f.reference((long double)a[i], (long double)b[i]);
      double error = ulp_error(out[i], exact);
      const std::string name = f.name;
      const bool zero_sign_free = name == "fmax" || name == "fmin" || name == "maxmag" ||
                                  name == "minmag";  // C99 leaves the sign of a zero open
      if (error == 0 && exact == 0 && f.bound == 0 && !zero_sign_free &&
          std::signbit(out[i]) != std::signbit(exact))
        error = 1e30;
      if (error > f.bound) {
        std::ostringstream line;
        line.precision(9);
        line << f.name << "(" << a[i] << ", " << b[i] << ") = " << out[i] << ", exact "
             << double(exact) << ", " << error << " ulp";
        failures.push_back(line.str());
      }
    }
    EXPECT_TRUE(failures.empty()) << f.name << " (bound " << f.bound << " ulp), " << failures.size()
                                  << " of " << a.size() << " inputs:\n"
                                  << describe_failures(failures);
  }
}

TEST(MathPrecision, DoubleFunctionsWithinUlpBounds) {
  struct DoubleUnary {
    const char* name;
    double bound;
    long double (*reference)(long double);
  };
  const DoubleUnary functions[] = {
      {"sin", 4, [](long double x) { return std::sin(x); }},
      {"cos", 4, [](long double x) { return std::cos(x); }},
      {"tan", 5, [](long double x) { return std::tan(x); }},
      {"exp", 3, [](long double x) { return std::exp(x); }},
      {"log", 3, [](long double x) { return std::log(x); }},
      {"log2", 3, [](long double x) { return std::log2(x); }},
      {"sqrt", 0.5, [](long double x) { return std::sqrt(x); }},  // correctly rounded
      {"cbrt", 2, [](long double x) { return std::cbrt(x); }},
      {"atan", 5, [](long double x) { return std::atan(x); }},
      {"asinh", 4, [](long double x) { return std::asinh(x); }},
      {"expm1", 3, [](long double x) { return std::expm1(x); }},
      {"log1p", 2, [](long double x) { return std::log1p(x); }},
      {"floor", 0, [](long double x) { return std::floor(x); }},
  };
  std::string source;
  for (const DoubleUnary& f : functions)
    source += std::string("__kernel void k_") + f.name +
              "(__global const double* in, __global double* out) {\n"
              "  size_t i = get_global_id(0); out[i] = " +
              f.name + "(in[i]); }\n";
  auto exe = build_and_load(source);
  ASSERT_NE(exe, nullptr);
  std::vector<double> in = {0.0,       -0.0,     INFINITY, -INFINITY, NAN, 4.9e-324,
                            -4.9e-324, 2.2e-308, 1.7e308,  -1.7e308,  1.0, -1.0,
                            0.5,       700.0,    -745.0,   1e-300};
  std::mt19937_64 engine(6);
  for (int i = 0; i < 1000; ++i) {
    uint64_t bits = engine();
    double x;
    std::memcpy(&x, &bits, 8);
    if (std::isnan(x)) x = NAN;
    in.push_back(x);
    in.push_back(std::uniform_real_distribution<double>(-20, 20)(engine));
  }
  std::vector<double> out(in.size());
  for (const DoubleUnary& f : functions) {
    run(*exe, (std::string("k_") + f.name).c_str(), {in.data(), out.data()}, in.size());
    std::vector<std::string> failures;
    for (size_t i = 0; i < in.size(); ++i) {
      const double error = ulp_error_double(out[i], f.reference((long double)in[i]));
      if (error > f.bound) {
        std::ostringstream line;
        line.precision(17);
        line << f.name << "(" << in[i] << ") = " << out[i] << ", " << error << " ulp";
        failures.push_back(line.str());
      }
    }
    EXPECT_TRUE(failures.empty()) << f.name << " (double, bound " << f.bound << " ulp), "
                                  << failures.size() << " of " << in.size() << " inputs:\n"
                                  << describe_failures(failures);
  }
}

TEST(MathPrecision, HalfFunctionsWithinTheirBound) {
  auto exe = build_and_load(R"(
    __kernel void k(__global const float* in, __global float* out) {
      size_t i = get_global_id(0);
      float x = in[i];
      out[i * 4 + 0] = half_exp(x);
      out[i * 4 + 1] = half_log(x);
      out[i * 4 + 2] = half_sqrt(x);
      out[i * 4 + 3] = half_recip(x);
    })");
  ASSERT_NE(exe, nullptr);
  // half_ functions need only cover the range of half precision inputs.
  std::vector<float> in;
  for (int i = 1; i < 400; ++i) in.push_back(float(i) * 0.037f);
  std::vector<float> out(in.size() * 4);
  run(*exe, "k", {in.data(), out.data()}, in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const long double x = in[i];
    EXPECT_LE(ulp_error(out[i * 4 + 0], std::exp(x)), 8192) << x;
    EXPECT_LE(ulp_error(out[i * 4 + 1], std::log(x)), 8192) << x;
    EXPECT_LE(ulp_error(out[i * 4 + 2], std::sqrt(x)), 8192) << x;
    EXPECT_LE(ulp_error(out[i * 4 + 3], 1.0L / x), 8192) << x;
  }
}

// ---- conversions ----

// Host reference for convert_<int type>[_sat]_<mode>(float).
int64_t convert_reference(float x, int mode, bool saturate, int64_t lo, int64_t hi) {
  if (std::isnan(x)) return 0;  // _sat: NaN -> 0; without _sat undefined (not checked)
  long double r;
  switch (mode) {
    case 0:
      r = std::nearbyint((long double)x);
      break;  // rte (default rounding of the host)
    case 1:
      r = std::trunc((long double)x);
      break;  // rtz
    case 2:
      r = std::ceil((long double)x);
      break;  // rtp
    default:
      r = std::floor((long double)x);
      break;  // rtn
  }
  (void)saturate;
  if (r < lo) return lo;
  if (r > hi) return hi;
  return int64_t(r);
}

TEST(ConversionsPrecision, FloatToIntegerSaturatedInEveryRoundingMode) {
  const char* types[] = {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong"};
  const int64_t lows[] = {-128, 0, -32768, 0, INT32_MIN, 0, INT64_MIN, 0};
  const int64_t highs[] = {127, 255, 32767, 65535, INT32_MAX, UINT32_MAX, INT64_MAX, INT64_MAX};
  const char* modes[] = {"rte", "rtz", "rtp", "rtn"};
  std::string source;
  for (const char* type : types)
    for (const char* mode : modes)
      source += std::string("__kernel void k_") + type + "_" + mode +
                "(__global const float* in, __global long* out) {\n"
                "  size_t i = get_global_id(0); out[i] = (long)convert_" +
                type + "_sat_" + mode + "(in[i]); }\n";
  auto exe = build_and_load(source);
  ASSERT_NE(exe, nullptr);
  std::vector<float> in = float_inputs(300, 7);
  for (float v : {-128.5f, 127.5f, 255.5f, -0.5f, 0.5f, 1.5f, 2.5f, -2.5f, 32767.5f, 65535.5f,
                  2147483520.0f, 2147483648.0f, 4294967040.0f, 4294967296.0f, -2147483904.0f,
                  9.2233715e18f, 9.223372e18f, -9.223372e18f, 1.8446743e19f})
    in.push_back(v);
  std::vector<int64_t> out(in.size());
  for (int t = 0; t < 8; ++t) {
    for (int m = 0; m < 4; ++m) {
      const std::string kernel = std::string("k_") + types[t] + "_" + modes[m];
      run(*exe, kernel.c_str(), {in.data(), out.data()}, in.size());
      int failures = 0;
      for (size_t i = 0; i < in.size() && failures < 5; ++i) {
        int64_t expected = convert_reference(in[i], m, true, lows[t], highs[t]);
        int64_t got = out[i];
        if (t == 7) {  // ulong through long: compare the bit patterns
          long double r = m == 0   ? std::nearbyint((long double)in[i])
                          : m == 1 ? std::trunc((long double)in[i])
                          : m == 2 ? std::ceil((long double)in[i])
                                   : std::floor((long double)in[i]);
          uint64_t u = std::isnan(in[i]) || r <= 0    ? 0
                       : r >= 18446744073709551615.0L ? UINT64_MAX
                                                      : uint64_t(r);
          expected = int64_t(u);
        }
        if (got != expected) {
          ++failures;
          ADD_FAILURE() << "convert_" << types[t] << "_sat_" << modes[m] << "(" << in[i]
                        << ") = " << got << ", expected " << expected;
        }
      }
    }
  }
}

TEST(ConversionsPrecision, IntegerToFloatInEveryRoundingMode) {
  auto exe = build_and_load(R"(
    __kernel void k(__global const long* in, __global float* out) {
      size_t i = get_global_id(0);
      long v = in[i];
      out[i * 8 + 0] = convert_float_rte((int)v);
      out[i * 8 + 1] = convert_float_rtz((int)v);
      out[i * 8 + 2] = convert_float_rtp((int)v);
      out[i * 8 + 3] = convert_float_rtn((int)v);
      out[i * 8 + 4] = convert_float_rte(v);
      out[i * 8 + 5] = convert_float_rtz(v);
      out[i * 8 + 6] = convert_float_rtp(v);
      out[i * 8 + 7] = convert_float_rtn(v);
    })");
  ASSERT_NE(exe, nullptr);
  std::vector<int64_t> in = {0,
                             1,
                             -1,
                             16777217,
                             -16777217,
                             16777219,
                             INT32_MAX,
                             INT32_MIN,
                             INT64_MAX,
                             INT64_MIN,
                             (int64_t(1) << 53) + 1,
                             -(int64_t(1) << 40) - 3};
  std::mt19937_64 engine(8);
  for (int i = 0; i < 500; ++i) in.push_back(int64_t(engine()) >> (engine() % 40));
  std::vector<float> out(in.size() * 8);
  run(*exe, "k", {in.data(), out.data()}, in.size());
  const int modes[] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
  for (size_t i = 0; i < in.size(); ++i) {
    for (int m = 0; m < 4; ++m) {
      std::fesetround(modes[m]);
      volatile int32_t narrow = int32_t(in[i]);
      volatile int64_t wide = in[i];
      const float expected_int = float(narrow);
      const float expected_long = float(wide);
      std::fesetround(FE_TONEAREST);
      EXPECT_EQ(out[i * 8 + m], expected_int) << "int " << int32_t(in[i]) << " mode " << m;
      EXPECT_EQ(out[i * 8 + 4 + m], expected_long) << "long " << in[i] << " mode " << m;
    }
  }
}

// Host reference: float -> half bits with a rounding mode (0 rte, 1 rtz, 2 rtp, 3 rtn).
uint16_t float_to_half(float value, int mode) {
  const uint32_t bits = float_to_bits(value);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  const bool negative = sign != 0;
  if (std::isnan(value)) return uint16_t(sign | 0x7e00);
  const long double magnitude = std::fabs((long double)value);
  if (std::isinf(value)) return uint16_t(sign | 0x7c00);
  // Scale so that the half's last place is 1: exponent of the half ulp.
  int exponent;
  std::frexp(double(magnitude), &exponent);  // magnitude in [2^(e-1), 2^e)
  const int ulp_exponent = std::max(exponent - 11, -24);
  long double scaled = std::ldexp(magnitude, -ulp_exponent);
  long double integral = std::floor(scaled);
  const long double fraction = scaled - integral;
  bool round_up = false;
  switch (mode) {
    case 0:
      round_up = fraction > 0.5L || (fraction == 0.5L && std::fmod(integral, 2.0L) == 1);
      break;
    case 1:
      round_up = false;
      break;
    case 2:
      round_up = fraction > 0 && !negative;
      break;
    default:
      round_up = fraction > 0 && negative;
      break;
  }
  if (round_up) integral += 1;
  const long double result = std::ldexp(integral, ulp_exponent);
  if (result > 65504.0L) {
    // Overflow: infinity unless the mode rounds toward zero for this sign.
    const bool to_infinity = mode == 0 ? result >= 65520.0L || magnitude >= 65520.0L
                                       : (mode == 2 && !negative) || (mode == 3 && negative);
    if (mode == 0) return uint16_t(sign | 0x7c00);
    return uint16_t(sign | (to_infinity ? 0x7c00 : 0x7bff));
  }
  // Encode result (a multiple of 2^ulp_exponent, at most 65504).
  if (result == 0) return sign;
  int e;
  std::frexp(double(result), &e);
  if (e - 1 < -14) {  // denormal: value = m * 2^-24
    return uint16_t(sign | uint16_t(std::ldexp(result, 24)));
  }
  const uint16_t mantissa = uint16_t(std::ldexp(result, 11 - e)) & 0x3ff;
  return uint16_t(sign | uint16_t((e - 1 + 15) << 10) | mantissa);
}

float half_to_float(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(float(mantissa), -24);
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude = std::ldexp(float(mantissa | 0x400), exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

TEST(VloadVstorePrecision, HalfConversionsInEveryRoundingMode) {
  auto exe = build_and_load(R"(
    __kernel void k(__global const float* in, __global half* h, __global float* back) {
      size_t i = get_global_id(0);
      float x = in[i];
      vstore_half_rte(x, i * 5 + 0, h);
      vstore_half_rtz(x, i * 5 + 1, h);
      vstore_half_rtp(x, i * 5 + 2, h);
      vstore_half_rtn(x, i * 5 + 3, h);
      vstore_half(x, i * 5 + 4, h);
      back[i] = vload_half(i * 5 + 0, h);
    }
    __kernel void v(__global const float* in, __global half* h) {
      size_t i = get_global_id(0);
      vstore_half4_rtz(vload4(i, in), i, h);
      vstorea_half4_rtp(vload4(i, in), i + get_global_size(0), h);
    })");
  ASSERT_NE(exe, nullptr);
  std::vector<float> in = float_inputs(1000, 9);
  for (float v : {65504.0f, 65519.0f, 65520.0f, 65536.0f, 6.1e-5f, 5.96e-8f, 2.98e-8f, 2.99e-8f,
                  1.0f / 3.0f, -1.0f / 3.0f, 1e-8f, -1e-8f})
    in.push_back(v);
  while (in.size() % 4) in.push_back(0.25f);
  std::vector<uint16_t> h(in.size() * 5);
  std::vector<float> back(in.size());
  run(*exe, "k", {in.data(), h.data(), back.data()}, in.size());
  int failures = 0;
  for (size_t i = 0; i < in.size() && failures < 10; ++i) {
    for (int m = 0; m < 5; ++m) {
      const uint16_t expected = float_to_half(in[i], m == 4 ? 0 : m);
      const uint16_t got = h[i * 5 + m];
      const bool both_nan = (expected & 0x7c00) == 0x7c00 && (expected & 0x3ff) &&
                            (got & 0x7c00) == 0x7c00 && (got & 0x3ff);
      if (got != expected && !both_nan) {
        ++failures;
        ADD_FAILURE() << "vstore_half mode " << m << " of " << in[i] << " (0x" << std::hex
                      << float_to_bits(in[i]) << ") = 0x" << got << ", expected 0x" << expected;
      }
    }
    const float expected_back = half_to_float(h[i * 5]);
    if (!(std::isnan(expected_back) && std::isnan(back[i])) &&
        float_to_bits(back[i]) != float_to_bits(expected_back)) {
      ++failures;
      ADD_FAILURE() << "vload_half(0x" << std::hex << h[i * 5] << ") = " << back[i];
    }
  }
  std::vector<uint16_t> hv(in.size() * 2);
  run(*exe, "v", {in.data(), hv.data()}, in.size() / 4, 4);
  for (size_t i = 0; i < in.size() && failures < 20; ++i) {
    const uint16_t rtz = float_to_half(in[i], 1), rtp = float_to_half(in[i], 2);
    if (std::isnan(in[i])) continue;
    if (hv[i] != rtz || hv[in.size() + i] != rtp) {
      ++failures;
      ADD_FAILURE() << "vstore_half4 of " << in[i] << ": rtz 0x" << std::hex << hv[i]
                    << " (expected 0x" << rtz << "), rtp 0x" << hv[in.size() + i] << " (expected 0x"
                    << rtp << ")";
    }
  }
}

// ---- integer functions at their edges ----

TEST(IntegerPrecision, EdgesOfIntegerFunctions) {
  auto exe = build_and_load(R"(
    __kernel void k(__global const int* a, __global const int* b, __global int* out) {
      size_t i = get_global_id(0);
      int x = a[i], y = b[i];
      __global int* o = out + i * 12;
      o[0] = add_sat(x, y);
      o[1] = sub_sat(x, y);
      o[2] = mul_hi(x, y);
      o[3] = (int)mul_hi((uint)x, (uint)y);
      o[4] = hadd(x, y);
      o[5] = rhadd(x, y);
      o[6] = abs_diff(x, y);
      o[7] = clz(x);
      o[8] = popcount(x);
      o[9] = rotate(x, y);
      o[10] = mad_sat(x, y, x);
      o[11] = (int)upsample((short)x, (ushort)y);
    })");
  ASSERT_NE(exe, nullptr);
  std::vector<int32_t> a = {0, 1, -1, INT32_MAX, INT32_MIN, 12345, -54321, 0x55555555, 7};
  std::vector<int32_t> b = {INT32_MIN, INT32_MAX, -1, 1, -1, 77, 99999, 31, 33};
  std::mt19937 engine(10);
  for (int i = 0; i < 500; ++i) a.push_back(int32_t(engine())), b.push_back(int32_t(engine()));
  std::vector<int32_t> out(a.size() * 12);
  run(*exe, "k", {a.data(), b.data(), out.data()}, a.size());
  auto sat = [](int64_t v) {
    return int32_t(std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, v)));
  };
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t x = a[i], y = b[i];
    const int32_t* o = &out[i * 12];
    SCOPED_TRACE(std::to_string(x) + ", " + std::to_string(y));
    ASSERT_EQ(o[0], sat(x + y));
    ASSERT_EQ(o[1], sat(x - y));
    ASSERT_EQ(o[2], int32_t((x * y) >> 32));
    ASSERT_EQ(uint32_t(o[3]), uint32_t((uint64_t(uint32_t(x)) * uint32_t(y)) >> 32));
    ASSERT_EQ(o[4], int32_t((x + y) >> 1));
    ASSERT_EQ(o[5], int32_t((x + y + 1) >> 1));
    ASSERT_EQ(uint32_t(o[6]), uint32_t(std::llabs(x - y)));
    ASSERT_EQ(o[7], x == 0 ? 32 : __builtin_clz(uint32_t(x)));
    ASSERT_EQ(o[8], __builtin_popcount(uint32_t(x)));
    const uint32_t shift = uint32_t(y) & 31;
    ASSERT_EQ(uint32_t(o[9]),
              shift ? (uint32_t(x) << shift) | (uint32_t(x) >> (32 - shift)) : uint32_t(x));
    ASSERT_EQ(o[10], sat(x * y + x));
    ASSERT_EQ(o[11], int32_t((uint32_t(uint16_t(int16_t(x))) << 16) | uint16_t(y)));
  }
}

// ---- atomics ----

TEST(AtomicsPrecision, EveryOperation32And64BitGlobalAndLocal) {
  auto exe = build_and_load(R"(
    #pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
    #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
    __kernel void k(__global int* g, __global long* g64, __global uint* out) {
      __local int l[4];
      int i = get_global_id(0);
      if (get_local_id(0) == 0) { l[0] = 0; l[1] = 0; l[2] = -1; l[3] = 0; }
      barrier(CLK_LOCAL_MEM_FENCE);
      atomic_add(&g[0], i);
      atomic_sub(&g[1], i);
      atomic_min(&g[2], i - 100);
      atomic_max(&g[3], i * 3);
      atomic_or(&g[4], 1 << (i % 31));
      atomic_and(&g[5], ~(1 << (i % 31)));
      atomic_xor(&g[6], i);
      atomic_inc(&g[7]);
      atomic_dec(&g[8]);
      // cmpxchg loop: a multiply that must not lose updates
      int old = g[9], seen;
      while ((seen = atomic_cmpxchg(&g[9], old, old + 2)) != old) old = seen;
      out[i] = (uint)atomic_xchg(&g[10], i);
      atom_add(&g64[0], (long)i << 33);
      atom_max(&g64[1], (long)i << 40);
      atom_min(&g64[2], -((long)i << 40));
      atom_xor(&g64[3], (long)1 << (i % 63));
      atomic_fetch_add_explicit((volatile __global atomic_long*)&g64[4], 3,
                                memory_order_relaxed, memory_scope_device);
      atomic_add(&l[0], 1);
      atomic_max(&l[1], i);
      atomic_and(&l[2], ~(1 << (get_local_id(0) % 32)));
      atomic_fetch_add_explicit((volatile __local atomic_int*)&l[3], 2, memory_order_acq_rel,
                                memory_scope_work_group);
      barrier(CLK_LOCAL_MEM_FENCE);
      if (get_local_id(0) == 0) {
        atomic_add(&g[11], l[0]);
        atomic_max(&g[12], l[1]);
        atomic_add(&g[13], l[2] == 0 ? 1 : 0);
        atomic_add(&g[14], l[3]);
      }
    })",
                            "-cl-std=CL3.0");
  ASSERT_NE(exe, nullptr);
  const int n = 4096, local = 64;
  std::vector<int32_t> g = {0, 0, 0, INT32_MIN, 0, -1, 0, 0, 0, 0, -7, 0, 0, 0, 0};
  std::vector<int64_t> g64 = {0, INT64_MIN, INT64_MAX, 0, 0};
  std::vector<uint32_t> out(n);
  run(*exe, "k", {g.data(), g64.data(), out.data()}, n, local);
  int64_t sum = 0, xor_all = 0, xor64 = 0;
  uint32_t or_bits = 0;
  for (int i = 0; i < n; ++i) sum += i, xor_all ^= i, or_bits |= 1u << (i % 31);
  for (int i = 0; i < n; ++i) xor64 ^= int64_t(1) << (i % 63);
  EXPECT_EQ(g[0], int32_t(sum));
  EXPECT_EQ(g[1], int32_t(-sum));
  EXPECT_EQ(g[2], -100);
  EXPECT_EQ(g[3], (n - 1) * 3);
  EXPECT_EQ(uint32_t(g[4]), or_bits);
  EXPECT_EQ(uint32_t(g[5]), ~or_bits);
  EXPECT_EQ(g[6], int32_t(xor_all));
  EXPECT_EQ(g[7], n);
  EXPECT_EQ(g[8], -n);
  EXPECT_EQ(g[9], 2 * n);
  // xchg: every value handed out once, the last one left in g[10].
  std::vector<int> seen(n + 1, 0);
  for (uint32_t v : out) ++seen[v == uint32_t(-7) ? n : v];
  ++seen[g[10]];
  for (int i = 0; i <= n; ++i) ASSERT_EQ(seen[i], 1) << i;
  int64_t sum64 = 0;
  for (int i = 0; i < n; ++i) sum64 += int64_t(i) << 33;
  EXPECT_EQ(g64[0], sum64);
  EXPECT_EQ(g64[1], int64_t(n - 1) << 40);
  EXPECT_EQ(g64[2], -(int64_t(n - 1) << 40));
  EXPECT_EQ(g64[3], xor64);
  EXPECT_EQ(g64[4], 3 * n);
  EXPECT_EQ(g[11], n);
  EXPECT_EQ(g[12], n - 1);
  EXPECT_EQ(g[13], n / local);
  EXPECT_EQ(g[14], 2 * n);
}

// ---- work-group collectives: every operation and type, several group shapes ----

TEST(WorkGroupPrecision, CollectivesForEveryOperationAndType) {
  auto exe = build_and_load(R"(
    #define CHECKS(T, NAME) \
    __kernel void NAME(__global const T* in, __global T* out) { \
      size_t g = get_global_id(0); T x = in[g]; __global T* o = out + g * 9; \
      o[0] = work_group_reduce_add(x); o[1] = work_group_reduce_min(x); \
      o[2] = work_group_reduce_max(x); o[3] = work_group_scan_inclusive_add(x); \
      o[4] = work_group_scan_exclusive_add(x); o[5] = work_group_scan_inclusive_min(x); \
      o[6] = work_group_scan_exclusive_max(x); \
      o[7] = work_group_broadcast(x, get_local_size(0) - 1); \
      o[8] = (T)work_group_any(x > (T)90) + (T)2 * (T)work_group_all(x > (T)0); }
    CHECKS(int, k_int)
    CHECKS(uint, k_uint)
    CHECKS(long, k_long)
    CHECKS(ulong, k_ulong)
    CHECKS(float, k_float)
    CHECKS(double, k_double)
    __kernel void k2d(__global const int* in, __global int* out) {
      size_t g = get_global_id(1) * get_global_size(0) + get_global_id(0);
      out[g] = work_group_scan_inclusive_add(in[g]) * 1000 +
               work_group_broadcast(in[g], 1, 2);
    })",
                            "-cl-std=CL3.0");
  ASSERT_NE(exe, nullptr);
  auto check_type = [&](auto zero, const char* kernel) {
    using T = decltype(zero);
    const size_t n = 200, local = 48;  // the last group is partial (non-uniform)
    std::vector<T> in(n), out(n * 9);
    for (size_t i = 0; i < n; ++i) in[i] = T((i * 37) % 97);
    run(*exe, kernel, {in.data(), out.data()}, n, local);
    for (size_t start = 0; start < n; start += local) {
      const size_t end = std::min(n, start + local);
      T sum = 0, lo = std::numeric_limits<T>::max(), hi = std::numeric_limits<T>::lowest();
      bool any = false, all = true;
      for (size_t i = start; i < end; ++i)
        sum += in[i], lo = std::min(lo, in[i]), hi = std::max(hi, in[i]), any |= in[i] > T(90),
                      all &= in[i] > T(0);
      // The identities the spec gives: min/max of nothing is +/-INFINITY for floating types.
      T running = 0,
        running_min = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                           : std::numeric_limits<T>::max(),
        running_max = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                           : std::numeric_limits<T>::lowest();
      for (size_t i = start; i < end; ++i) {
        const T* o = &out[i * 9];
        SCOPED_TRACE(std::string(kernel) + " item " + std::to_string(i));
        ASSERT_EQ(o[0], sum);
        ASSERT_EQ(o[1], lo);
        ASSERT_EQ(o[2], hi);
        ASSERT_EQ(o[4], running);
        ASSERT_EQ(o[6], running_max);
        running += in[i];
        running_min = std::min(running_min, in[i]);
        running_max = std::max(running_max, in[i]);
        ASSERT_EQ(o[3], running);
        ASSERT_EQ(o[5], running_min);
        ASSERT_EQ(o[7], in[end - 1]);
        ASSERT_EQ(o[8], T(any ? 1 : 0) + T(2) * T(all ? 1 : 0));
      }
    }
  };
  check_type(int32_t(0), "k_int");
  check_type(uint32_t(0), "k_uint");
  check_type(int64_t(0), "k_long");
  check_type(uint64_t(0), "k_ulong");
  check_type(0.0f, "k_float");
  check_type(0.0, "k_double");

  // 2-D groups: the scan runs in local linear order; broadcast takes (x=1, y=2).
  const size_t gx = 8, gy = 6, lx = 4, ly = 3;
  std::vector<int32_t> in(gx * gy), out(gx * gy);
  for (size_t i = 0; i < in.size(); ++i) in[i] = int32_t(i % 7);
  NDRange range;
  range.work_dim = 2;
  range.global_size[0] = gx;
  range.global_size[1] = gy;
  range.local_size[0] = lx;
  range.local_size[1] = ly;
  void* pin = in.data();
  void* pout = out.data();
  const void* args[] = {&pin, &pout};
  exe->run("k2d", range, args, nullptr);
  for (size_t y = 0; y < gy; ++y)
    for (size_t x = 0; x < gx; ++x) {
      const size_t group_x = x / lx * lx, group_y = y / ly * ly;
      int32_t prefix = 0;
      for (size_t yy = group_y; yy <= y; ++yy)
        for (size_t xx = group_x; xx < group_x + lx; ++xx) {
          if (yy == y && xx > x) break;
          prefix += in[yy * gx + xx];
        }
      const int32_t broadcast = in[(group_y + 2) * gx + group_x + 1];
      ASSERT_EQ(out[y * gx + x], prefix * 1000 + broadcast) << x << "," << y;
    }
}

TEST(WorkGroupPrecision, AsyncCopiesStridedAndPrefetch) {
  auto exe = build_and_load(R"(
    __kernel void k(__global const float4* src, __global float4* dst, __global int* strided) {
      __local float4 tile[32];
      __local int column[16];
      size_t group = get_group_id(0);
      event_t e = async_work_group_copy(tile, src + group * 32, 32, 0);
      event_t f = async_work_group_strided_copy(column, strided + group, 16, 4, 0);
      prefetch(src + group * 32, 32);
      wait_group_events(1, &e);
      wait_group_events(1, &f);
      size_t l = get_local_id(0);
      tile[l] = tile[l] * 2.0f + (float4)(column[l % 16]);
      barrier(CLK_LOCAL_MEM_FENCE);
      event_t back = async_work_group_copy(dst + group * 32, tile, 32, 0);
      wait_group_events(1, &back);
    })");
  ASSERT_NE(exe, nullptr);
  const size_t groups = 4;
  std::vector<float> src(groups * 32 * 4), dst(src.size(), -1);
  for (size_t i = 0; i < src.size(); ++i) src[i] = float(i);
  std::vector<int32_t> strided(groups + 16 * 4);
  for (size_t i = 0; i < strided.size(); ++i) strided[i] = int32_t(i * 10);
  run(*exe, "k", {src.data(), dst.data(), strided.data()}, groups * 32, 32);
  for (size_t group = 0; group < groups; ++group)
    for (size_t l = 0; l < 32; ++l)
      for (size_t c = 0; c < 4; ++c) {
        const size_t i = (group * 32 + l) * 4 + c;
        const float column = float(strided[group + (l % 16) * 4]);
        ASSERT_EQ(dst[i], src[i] * 2.0f + column) << group << " " << l;
      }
}

}  // namespace
}  // namespace manifold::compiler
