// Math builtins (OpenCL C 3.0 section 6.15.2) for float and double.
//
// Accuracy: transcendental functions come from SLEEF, choosing for each the variant within the
// full-profile ULP bound (u10 = 1.0 ulp, u35 = 3.5 ulp, u05 = 0.5 ulp). Functions SLEEF lacks
// are computed from SLEEF functions in double precision for float (then rounded once), which
// keeps them well inside their bounds. Rounding, min/max, fma, sqrt and friends map to LLVM
// intrinsics so vector code stays vector code. Vector forms of SLEEF-backed functions are
// element-wise here; the CPU pipeline gives the scalar SLEEF calls their SLEEF vector variants
// so loops over work-items and SLP groups vectorize them.
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// ---- SLEEF scalar entry points (plain C names) ----
#define SLEEF_F1(name) float Sleef_##name(float);
#define SLEEF_D1(name) double Sleef_##name(double);
#define SLEEF_F2(name) float Sleef_##name(float, float);
#define SLEEF_D2(name) double Sleef_##name(double, double);
SLEEF_F1(sinf_u10) SLEEF_F1(cosf_u10) SLEEF_F1(tanf_u10) SLEEF_F1(asinf_u10) SLEEF_F1(acosf_u10)
SLEEF_F1(atanf_u10) SLEEF_F1(sinhf_u10) SLEEF_F1(coshf_u10) SLEEF_F1(tanhf_u10)
SLEEF_F1(asinhf_u10) SLEEF_F1(acoshf_u10) SLEEF_F1(atanhf_u10) SLEEF_F1(expf_u10)
SLEEF_F1(exp2f_u10) SLEEF_F1(exp10f_u10) SLEEF_F1(expm1f_u10) SLEEF_F1(logf_u10)
SLEEF_F1(log2f_u10) SLEEF_F1(log10f_u10) SLEEF_F1(log1pf_u10) SLEEF_F1(cbrtf_u10)
SLEEF_F1(erff_u10) SLEEF_F1(erfcf_u15) SLEEF_F1(tgammaf_u10) SLEEF_F1(lgammaf_u10)
SLEEF_F1(sinpif_u05) SLEEF_F1(cospif_u05)
SLEEF_F2(atan2f_u10) SLEEF_F2(powf_u10) SLEEF_F2(hypotf_u05) SLEEF_F2(fmodf)
SLEEF_F2(remainderf) SLEEF_F2(nextafterf)
SLEEF_D1(sin_u10) SLEEF_D1(cos_u10) SLEEF_D1(tan_u10) SLEEF_D1(asin_u10) SLEEF_D1(acos_u10)
SLEEF_D1(atan_u10) SLEEF_D1(sinh_u10) SLEEF_D1(cosh_u10) SLEEF_D1(tanh_u10) SLEEF_D1(asinh_u10)
SLEEF_D1(acosh_u10) SLEEF_D1(atanh_u10) SLEEF_D1(exp_u10) SLEEF_D1(exp2_u10) SLEEF_D1(exp10_u10)
SLEEF_D1(expm1_u10) SLEEF_D1(log_u10) SLEEF_D1(log2_u10) SLEEF_D1(log10_u10) SLEEF_D1(log1p_u10)
SLEEF_D1(cbrt_u10) SLEEF_D1(erf_u10) SLEEF_D1(erfc_u15) SLEEF_D1(tgamma_u10)
SLEEF_D1(lgamma_u10) SLEEF_D1(sinpi_u05) SLEEF_D1(cospi_u05)
SLEEF_D2(atan2_u10) SLEEF_D2(pow_u10) SLEEF_D2(hypot_u05) SLEEF_D2(fmod) SLEEF_D2(remainder)
SLEEF_D2(nextafter)
int Sleef_ilogbf(float);
int Sleef_ilogb(double);

// ---- Functions mapped directly onto SLEEF ----
#define SLEEF_UNARY(name, fsleef, dsleef)              \
  OVLC float name(float x) { return Sleef_##fsleef(x); } \
  OVLC double name(double x) { return Sleef_##dsleef(x); } \
  VEC_UNARY(float, name, float)                        \
  VEC_UNARY(double, name, double)
#define SLEEF_BINARY(name, fsleef, dsleef)                            \
  OVLC float name(float x, float y) { return Sleef_##fsleef(x, y); }    \
  OVLC double name(double x, double y) { return Sleef_##dsleef(x, y); } \
  VEC_BINARY(float, name, float, float)                               \
  VEC_BINARY(double, name, double, double)

// The trigonometric functions and their inverses use SLEEF's 1-ulp forms: the 3.5-ulp ones reach
// 2.2-3.3 ulp (sin, cos, tan; atan near -1.02), where other platforms stay within about 1.5, and
// applications compare platforms. They cost about twice as much, still far below other CPU
// platforms' per-call cost.
SLEEF_UNARY(sin, sinf_u10, sin_u10)
SLEEF_UNARY(cos, cosf_u10, cos_u10)
SLEEF_UNARY(tan, tanf_u10, tan_u10)
SLEEF_UNARY(asin, asinf_u10, asin_u10)
SLEEF_UNARY(acos, acosf_u10, acos_u10)
SLEEF_UNARY(atan, atanf_u10, atan_u10)
SLEEF_UNARY(tanh, tanhf_u10, tanh_u10)
SLEEF_UNARY(atanh, atanhf_u10, atanh_u10)
SLEEF_UNARY(exp, expf_u10, exp_u10)
SLEEF_UNARY(exp2, exp2f_u10, exp2_u10)
SLEEF_UNARY(exp10, exp10f_u10, exp10_u10)
SLEEF_UNARY(expm1, expm1f_u10, expm1_u10)
SLEEF_UNARY(log, logf_u10, log_u10)
SLEEF_UNARY(log2, log2f_u10, log2_u10)
SLEEF_UNARY(log10, log10f_u10, log10_u10)
SLEEF_UNARY(cbrt, cbrtf_u10, cbrt_u10)
SLEEF_UNARY(erf, erff_u10, erf_u10)
SLEEF_UNARY(erfc, erfcf_u15, erfc_u15)
SLEEF_UNARY(lgamma, lgammaf_u10, lgamma_u10)
SLEEF_BINARY(atan2, atan2f_u10, atan2_u10)
SLEEF_BINARY(hypot, hypotf_u05, hypot_u05)
SLEEF_BINARY(nextafter, nextafterf, nextafter)

// ---- Functions that are LLVM intrinsics (exact, and vectorizable as they are) ----
#define ELEMENTWISE_UNARY_T(name, builtin, T) \
  OVLC T name(T x) { return builtin(x); }
#define ELEMENTWISE_UNARY(name, builtin)                 \
  ALL_WIDTHS_ARG(ELEMENTWISE_UNARY_T, name, builtin, float) \
  ALL_WIDTHS_ARG(ELEMENTWISE_UNARY_T, name, builtin, double)
#define ALL_WIDTHS_ARG(M, a, b, T) M(a, b, T) M(a, b, T##2) M(a, b, T##3) M(a, b, T##4) \
  M(a, b, T##8) M(a, b, T##16)
ELEMENTWISE_UNARY(fabs, __builtin_elementwise_abs)
ELEMENTWISE_UNARY(floor, __builtin_elementwise_floor)
ELEMENTWISE_UNARY(ceil, __builtin_elementwise_ceil)
ELEMENTWISE_UNARY(trunc, __builtin_elementwise_trunc)
ELEMENTWISE_UNARY(round, __builtin_elementwise_round)
ELEMENTWISE_UNARY(rint, __builtin_elementwise_rint)
ELEMENTWISE_UNARY(sqrt, __builtin_elementwise_sqrt)

#define ELEMENTWISE_BINARY_T(name, builtin, T) \
  OVLC T name(T x, T y) { return builtin(x, y); }
#define ELEMENTWISE_BINARY(name, builtin)                      \
  ALL_WIDTHS_ARG(ELEMENTWISE_BINARY_T, name, builtin, float)   \
  ALL_WIDTHS_ARG(ELEMENTWISE_BINARY_T, name, builtin, double)
ELEMENTWISE_BINARY(fmin, __builtin_elementwise_minnum)
ELEMENTWISE_BINARY(fmax, __builtin_elementwise_maxnum)
ELEMENTWISE_BINARY(copysign, __builtin_elementwise_copysign)
VEC_SPLAT_SECOND(float, fmin, float, float)
VEC_SPLAT_SECOND(float, fmax, float, float)
VEC_SPLAT_SECOND(double, fmin, double, double)
VEC_SPLAT_SECOND(double, fmax, double, double)

#define FMA_T(T)                                                                   \
  OVLC T fma(T a, T b, T c) { return __builtin_elementwise_fma(a, b, c); }         \
  OVLC T mad(T a, T b, T c) { return __builtin_elementwise_fma(a, b, c); }
ALL_WIDTHS(FMA_T, float)
ALL_WIDTHS(FMA_T, double)

// ---- Generic formulas valid for every width (T: float or double type, S: its scalar) ----
#define GENERIC_MATH(T, ITYPE, PI_INV, PI_INV_LO)                                                \
  OVLC T fdim(T x, T y) { return (x > y) ? x - y : (isnan(x) | isnan(y)) ? (x + y) : (T)(0); } \
  OVLC T maxmag(T x, T y) {                                                                \
    T ax = fabs(x), ay = fabs(y);                                                          \
    return ax > ay ? x : ay > ax ? y : fmax(x, y);                                         \
  }                                                                                        \
  OVLC T minmag(T x, T y) {                                                                \
    T ax = fabs(x), ay = fabs(y);                                                          \
    return ax < ay ? x : ay < ax ? y : fmin(x, y);                                         \
  }                                                                                        \
  /* 1/pi in two parts: the product is rounded once, 1/pi's own rounding does not add */      \
  OVLC T acospi(T x) { return fma(acos(x), (T)(PI_INV), acos(x) * (T)(PI_INV_LO)); }        \
  OVLC T asinpi(T x) { return fma(asin(x), (T)(PI_INV), asin(x) * (T)(PI_INV_LO)); }        \
  OVLC T atanpi(T x) { return fma(atan(x), (T)(PI_INV), atan(x) * (T)(PI_INV_LO)); }        \
  OVLC T atan2pi(T y, T x) {                                                               \
    T r = atan2(y, x);                                                                     \
    return fma(r, (T)(PI_INV), r * (T)(PI_INV_LO));                                        \
  }                                                                                        \
  OVLC T logb(T x) {                                                                       \
    T r = convert_##T(ilogb(x));                                                           \
    r = isinf(x) ? fabs(x) : r;                                                            \
    r = (x == (T)(0)) ? (T)(-INFINITY) : r;                                                \
    return isnan(x) ? x : r;                                                               \
  }

int OVLC ilogb(float x) { return Sleef_ilogbf(x); }
int OVLC ilogb(double x) { return Sleef_ilogb(x); }
VEC_UNARY(int, ilogb, float)
VEC_UNARY(int, ilogb, double)

#define GENERIC_MATH_ALL(T, I, HI, LO)                                                    \
  GENERIC_MATH(T, I, HI, LO) GENERIC_MATH(T##2, I##2, HI, LO) GENERIC_MATH(T##3, I##3, HI, LO) \
  GENERIC_MATH(T##4, I##4, HI, LO) GENERIC_MATH(T##8, I##8, HI, LO)                           \
  GENERIC_MATH(T##16, I##16, HI, LO)
GENERIC_MATH_ALL(float, int, 0x1.45f306p-2f, 0x1.b93910p-27f)
GENERIC_MATH_ALL(double, int, 0x1.45f306dc9c883p-2, -0x1.6b01ec5417056p-56)

// ---- Where SLEEF's domain ends before the spec's (checked by builtins_precision_test) ----
// asinh/acosh of huge arguments: SLEEF's float forms overflow past ~1.8e19 (they square x);
// there ln(2|x|) is the value to within far less than an ulp.
#define LN2 0x1.62e42fefa39efp-1
OVLC float asinh(float x) {
  return __builtin_fabsf(x) > 0x1p60f
             ? __builtin_copysignf((float)(Sleef_log_u10(__builtin_fabs((double)x)) + LN2), x)
             : Sleef_asinhf_u10(x);
}
OVLC double asinh(double x) {
  return __builtin_fabs(x) > 0x1p500
             ? __builtin_copysign(Sleef_log_u10(__builtin_fabs(x)) + LN2, x)
             : Sleef_asinh_u10(x);
}
OVLC float acosh(float x) {
  return x > 0x1p60f ? (float)(Sleef_log_u10((double)x) + LN2) : Sleef_acoshf_u10(x);
}
OVLC double acosh(double x) {
  return x > 0x1p500 ? Sleef_log_u10(x) + LN2 : Sleef_acosh_u10(x);
}
// log1p past 2^60: 1 is below half an ulp of x, so log1p(x) = log(x) to the last bit.
OVLC float log1p(float x) { return x > 0x1p60f ? Sleef_logf_u10(x) : Sleef_log1pf_u10(x); }
OVLC double log1p(double x) { return x > 0x1p500 ? Sleef_log_u10(x) : Sleef_log1p_u10(x); }
VEC_UNARY(float, asinh, float)
VEC_UNARY(double, asinh, double)
VEC_UNARY(float, acosh, float)
VEC_UNARY(double, acosh, double)
VEC_UNARY(float, log1p, float)
VEC_UNARY(double, log1p, double)

// fmod and remainder are exact; SLEEF's give NaN when x/y is huge. The float forms go
// through double, where the exact result of float inputs is computed and is a float again.
OVLC float fmod(float x, float y) { return (float)__builtin_fmod((double)x, (double)y); }
OVLC double fmod(double x, double y) { return __builtin_fmod(x, y); }
OVLC float remainder(float x, float y) {
  return (float)__builtin_remainder((double)x, (double)y);
}
OVLC double remainder(double x, double y) { return __builtin_remainder(x, y); }
VEC_BINARY(float, fmod, float, float)
VEC_BINARY(double, fmod, double, double)
VEC_BINARY(float, remainder, float, float)
VEC_BINARY(double, remainder, double, double)

// sinpi/cospi/tanpi: reduce exactly first (fmod by 2 is exact), since SLEEF's reduction fails
// for large odd integers; then the spec's exact values at integers and half-integers.
OVLC float sinpi(float x) {
  float r = (float)__builtin_fmod((double)x, 2.0);
  return r == __builtin_truncf(r) ? __builtin_copysignf(0.0f, x) : Sleef_sinpif_u05(r);
}
OVLC double sinpi(double x) {
  double r = __builtin_fmod(x, 2.0);
  return r == __builtin_trunc(r) ? __builtin_copysign(0.0, x) : Sleef_sinpi_u05(r);
}
OVLC float cospi(float x) {
  float r = (float)__builtin_fmod((double)__builtin_fabsf(x), 2.0);
  return (r == 0.5f || r == 1.5f) ? 0.0f : Sleef_cospif_u05(r);
}
OVLC double cospi(double x) {
  double r = __builtin_fmod(__builtin_fabs(x), 2.0);
  return (r == 0.5 || r == 1.5) ? 0.0 : Sleef_cospi_u05(r);
}
VEC_UNARY(float, sinpi, float)
VEC_UNARY(double, sinpi, double)
VEC_UNARY(float, cospi, float)
VEC_UNARY(double, cospi, double)

// tanpi from the reduced argument: the quotient of the exact sinpi/cospi (0.5 ulp each) stays
// within 6 ulp. tanpi(n) is copysign(0, x) for even n and copysign(0, -x) for odd n;
// tanpi(n + 0.5) is +inf for even n and -inf for odd n.
OVLC double tanpi(double x) {
  double r = __builtin_fmod(x, 2.0);  // exact, sign of x
  double n = __builtin_floor(x);
  bool odd = __builtin_fmod(__builtin_fabs(n), 2.0) == 1.0;
  if (r == __builtin_trunc(r)) return __builtin_copysign(0.0, odd ? -x : x);
  if (x - n == 0.5) return odd ? -__builtin_inf() : __builtin_inf();
  return Sleef_sinpi_u05(r) / Sleef_cospi_u05(r);
}
OVLC float tanpi(float x) { return (float)tanpi((double)x); }
VEC_UNARY(float, tanpi, float)
VEC_UNARY(double, tanpi, double)

// rsqrt: two correctly rounded float operations stay within 1.5 ulp (the bound is 2) and
// vectorize at full float width; double within 2 ulp.
OVLC float rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }
OVLC double rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
VEC_UNARY(float, rsqrt, float)
VEC_UNARY(double, rsqrt, double)

// sinh and cosh near the top of the range (CTS math_brute_force): SLEEF's overflow where exp(x)
// does, before the result does. Floats take the double forms there; doubles square exp(|x|/2).
OVLC float sinh(float x) {
  return __builtin_fabsf(x) < 88.0f ? Sleef_sinhf_u10(x) : (float)Sleef_sinh_u10((double)x);
}
OVLC float cosh(float x) {
  return __builtin_fabsf(x) < 88.0f ? Sleef_coshf_u10(x) : (float)Sleef_cosh_u10((double)x);
}
OVLC double cosh(double x) {
  const double a = __builtin_fabs(x);
  if (a < 709.0) return Sleef_cosh_u10(x);
  const double half_root = Sleef_exp_u10(0.5 * a);  // cosh = e^a / 2 here, as (e^(a/2) / 2) e^(a/2)
  return (0.5 * half_root) * half_root;
}
OVLC double sinh(double x) {
  if (__builtin_fabs(x) < 709.0) return Sleef_sinh_u10(x);
  return __builtin_copysign(cosh(x), x);
}
VEC_UNARY(float, sinh, float)
VEC_UNARY(double, sinh, double)
VEC_UNARY(float, cosh, float)
VEC_UNARY(double, cosh, double)

// tgamma of negative arguments whose result is tiny: SLEEF's lose precision there (28 ulp for
// float, 1600 for double at -172). Floats take the double form; doubles below -170 use the
// reflection tgamma(x) = pi / (sinpi(x) tgamma(1 - x)), dividing out the factors of
// tgamma(1 - x) one at a time so that nothing overflows (each step adds half an ulp).
OVLC float tgamma(float x) { return (float)Sleef_tgamma_u10((double)x); }
OVLC double tgamma(double x) {
  if (!(x < -170.0) || x == __builtin_floor(x)) return Sleef_tgamma_u10(x);
  // Below -190 the result is under the smallest denormal: a zero of the reflection's sign.
  if (x < -190.0) return __builtin_copysign(0.0, Sleef_sinpi_u05(x));
  const double y = 1.0 - x;  // > 171: tgamma(y) overflows
  double r = M_PI / Sleef_sinpi_u05(x);
  double base = y;
  while (base > 171.0) {
    base -= 1.0;  // tgamma(y) = (y - 1) ... (base) * tgamma(base)
    r /= base;
  }
  return r / Sleef_tgamma_u10(base);
}
VEC_UNARY(float, tgamma, float)
VEC_UNARY(double, tgamma, double)

// Double pow is libm's (glibc: under 1 ulp everywhere, C99's special values, which OpenCL's are):
// SLEEF's loses its accuracy where x^y nears the top of the range (CTS math_brute_force: inf for
// DBL_MAX^0.99999). Float pow stays SLEEF's (double-precision inside), pow(x, 1) is x.
double libm_pow(double x, double y) __asm__("pow");
OVLC float pow(float x, float y) { return y == 1.0f ? x : Sleef_powf_u10(x, y); }
OVLC double pow(double x, double y) { return libm_pow(x, y); }
VEC_BINARY(float, pow, float, float)
VEC_BINARY(double, pow, double, double)

OVLC float pown(float x, int n) { return n == 1 ? x : (float)Sleef_pow_u10((double)x, (double)n); }
OVLC double pown(double x, int n) { return libm_pow(x, (double)n); }
VEC_BINARY(float, pown, float, int)
VEC_BINARY(double, pown, double, int)

OVLC float powr(float x, float y) {
  if (x < 0.0f || isnan(x) || isnan(y)) return NAN;
  if (x == 0.0f && y == 0.0f) return NAN;
  if (isinf(x) && y == 0.0f) return NAN;
  if (x == 1.0f && isinf(y)) return NAN;
  if (x == 0.0f) return y < 0.0f ? INFINITY : 0.0f;  // +inf or +0, whatever the sign of x
  return Sleef_powf_u10(x, y);
}
OVLC double powr(double x, double y) {
  if (x < 0.0 || isnan(x) || isnan(y)) return NAN;
  if (x == 0.0 && y == 0.0) return NAN;
  if (isinf(x) && y == 0.0) return NAN;
  if (x == 1.0 && isinf(y)) return NAN;
  if (x == 0.0) return y < 0.0 ? (double)INFINITY : 0.0;
  return libm_pow(x, y);
}
VEC_BINARY(float, powr, float, float)
VEC_BINARY(double, powr, double, double)

OVLC float rootn(float x, int n) {
  if (n == 0) return NAN;
  if (x < 0.0f && (n & 1) == 0) return NAN;
  if (n == 1) return x;
  double r = Sleef_pow_u10(__builtin_fabs((double)x), 1.0 / (double)n);
  // Even roots are +0 or +inf for either zero; odd ones keep the sign.
  return (n & 1) ? (float)__builtin_copysign(r, (double)x) : (float)r;
}
OVLC double rootn(double x, int n) {
  if (n == 0) return NAN;
  if (x < 0.0 && (n & 1) == 0) return NAN;
  if (n == 1) return x;
  double a = __builtin_fabs(x), r;
  if (a == 0.0 || isinf(a)) {
    r = n > 0 ? a : 1.0 / a;
  } else if (n > 64 || n < -64) {
    r = libm_pow(a, 1.0 / (double)n);  // log2(a) / n is small: the error of 1/n stays small
  } else {
    // pow(a, 1/n) with a scaled to [1, 2^|n|): 1/n is inexact, and its error grows with log(a)
    // (74 ulp at -DBL_MAX for n = 3). a = m 2^(|n| k) exactly, so the root is root(m) 2^k.
    const int m_bits = n > 0 ? n : -n;
    int scale_in = 0;
    if (a < 0x1p-1000) {  // denormals (and near): normal first
      a *= 0x1p600;
      scale_in = 600;
    }
    const int exponent = (int)((as_ulong(a) >> 52) & 0x7ff) - 1023 - scale_in;
    const int k = exponent >= 0 ? exponent / m_bits : -((-exponent + m_bits - 1) / m_bits);
    const double m = __builtin_ldexp(a, -k * m_bits - scale_in);
    r = __builtin_ldexp(libm_pow(m, 1.0 / (double)m_bits), k);
    if (n < 0) r = 1.0 / r;
  }
  return (n & 1) ? __builtin_copysign(r, x) : r;
}
VEC_BINARY(float, rootn, float, int)
VEC_BINARY(double, rootn, double, int)

OVLC float ldexp(float x, int n) { return __builtin_ldexpf(x, n); }
OVLC double ldexp(double x, int n) { return __builtin_ldexp(x, n); }
VEC_BINARY(float, ldexp, float, int)
VEC_BINARY(double, ldexp, double, int)
VEC_SPLAT_SECOND(float, ldexp, float, int)
VEC_SPLAT_SECOND(double, ldexp, double, int)

OVLC float nan(uint code) { return as_float(0x7fc00000u | (code & 0x003fffffu)); }
OVLC double nan(ulong code) { return as_double(0x7ff8000000000000ul | (code & 0x0007fffffffffffful)); }
VEC_UNARY(float, nan, uint)
VEC_UNARY(double, nan, ulong)

// ---- Functions with a pointer result, for every address space ----
// Scalar cores take a __private pointer; wrappers for the other address spaces and the vector
// widths go through a private temporary (the optimizer removes it).
OVL float fract(float x, __private float* whole) {
  float f = __builtin_floorf(x);
  *whole = f;
  if (isnan(x)) return x;
  if (isinf(x)) return __builtin_copysignf(0.0f, x);
  return __builtin_fminf(x - f, 0x1.fffffep-1f);
}
OVL double fract(double x, __private double* whole) {
  double f = __builtin_floor(x);
  *whole = f;
  if (isnan(x)) return x;
  if (isinf(x)) return __builtin_copysign(0.0, x);
  return __builtin_fmin(x - f, 0x1.fffffffffffffp-1);
}
OVL float modf(float x, __private float* whole) {
  float t = __builtin_truncf(x);
  *whole = t;
  return __builtin_copysignf(isinf(x) ? 0.0f : x - t, x);
}
OVL double modf(double x, __private double* whole) {
  double t = __builtin_trunc(x);
  *whole = t;
  return __builtin_copysign(isinf(x) ? 0.0 : x - t, x);
}
// frexp in integer arithmetic, not llvm.frexp: LLVM 22's loop vectorizer widens that
// struct-returning intrinsic into invalid IR (a vector of structs) when it vectorizes the
// work-item loop of a kernel reading float2 elements, and the next pass crashes. Subnormals
// are normalized by shifting their mantissa (no floating-point scaling, which a flush-to-zero
// mode would defeat); zero, infinity and NaN come back unchanged with exponent 0.
#define FREXP(T, U, BITS, MANTISSA_BITS, BIAS)                                                     \
  OVL T frexp(T x, __private int* exponent) {                                                      \
    const U bits = __builtin_astype(x, U);                                                         \
    const U magnitude = bits & ~((U)1 << (BITS - 1));                                              \
    const U implicit_one = (U)1 << MANTISSA_BITS;                                                  \
    const U max_field = ((U)1 << (BITS - 1 - MANTISSA_BITS)) - 1;                                  \
    const bool special = magnitude == 0 || (magnitude >> MANTISSA_BITS) == max_field;              \
    /* A subnormal's leading one moves up to the implicit bit: exponent field 1. */                \
    const int shift =                                                                              \
        magnitude < implicit_one                                                                   \
            ? (int)__builtin_elementwise_clzg(magnitude, (U)BITS) - (BITS - 1 - MANTISSA_BITS)     \
            : 0;                                                                                   \
    const U normal = magnitude << shift;                                                           \
    *exponent = special ? 0 : (int)(normal >> MANTISSA_BITS) - (BIAS - 1) - shift;                 \
    const U half_field = (U)(BIAS - 1) << MANTISSA_BITS; /* [0.5, 1) */                            \
    const U result = (bits & ~magnitude) | half_field | (normal & (implicit_one - 1));             \
    return special ? x : __builtin_astype(result, T);                                              \
  }
FREXP(float, uint, 32, 23, 127)
FREXP(double, ulong, 64, 52, 1023)
OVL float sincos(float x, __private float* cosine) {
  *cosine = Sleef_cosf_u10(x);
  return Sleef_sinf_u10(x);
}
OVL double sincos(double x, __private double* cosine) {
  *cosine = Sleef_cos_u10(x);
  return Sleef_sin_u10(x);
}
OVL float lgamma_r(float x, __private int* sign) {
  float r = Sleef_lgammaf_u10(x);
  // The sign of gamma(x): negative between -2k-1 and -2k for x < 0 not an integer.
  int s = 1;
  if (x < 0.0f && x != __builtin_floorf(x) && ((int)__builtin_floorf(x) & 1)) s = -1;
  if (x == 0.0f) s = __builtin_signbit(x) ? -1 : 1;
  if (x < 0.0f && x == __builtin_floorf(x)) s = 0;
  *sign = isnan(x) ? 0 : s;
  return r;
}
OVL double lgamma_r(double x, __private int* sign) {
  double r = Sleef_lgamma_u10(x);
  int s = 1;
  if (x < 0.0 && x != __builtin_floor(x) && ((long)__builtin_floor(x) & 1)) s = -1;
  if (x == 0.0) s = __builtin_signbit(x) ? -1 : 1;
  if (x < 0.0 && x == __builtin_floor(x)) s = 0;
  *sign = isnan(x) ? 0 : s;
  return r;
}
// remquo: the remainder is exact (IEEE remainder). The quotient's low 7 bits come from the exact
// fmod by 128*|y|, then by taking out 64|y|, 32|y| ... |y| in turn: each subtraction is exact
// (Sterbenz), so the count is exact even for denormal y, where a division was off by one. The
// last step rounds half to even, as remainder does.
#define REMQUO_CORE(T, ABS, FMOD, REM)                                          \
  OVL T remquo(T x, T y, __private int* quotient) {                             \
    if (isnan(x) || isnan(y) || isinf(x) || y == (T)0) {                        \
      *quotient = 0;                                                            \
      return (isnan(x) || isnan(y)) ? x + y : (T)NAN;                           \
    }                                                                           \
    T ay = ABS(y);                                                              \
    T big = ay * (T)128;                                                        \
    T reduced = isinf(big) ? ABS(x) : FMOD(ABS(x), big);                        \
    int q = 0;                                                                  \
    for (int bit = 64; bit >= 1; bit >>= 1) {                                   \
      T step = ay * (T)bit;                                                     \
      if (reduced >= step) {                                                    \
        reduced -= step;                                                        \
        q += bit;                                                               \
      }                                                                         \
    }                                                                           \
    T twice = reduced * (T)2;                                                   \
    if (twice > ay || (twice == ay && (q & 1))) ++q;                            \
    q &= 127;                                                                   \
    *quotient = ((x < (T)0) != (y < (T)0)) ? -q : q;                            \
    return REM(x, y);                                                           \
  }
REMQUO_CORE(float, __builtin_fabsf, fmod, remainder)
REMQUO_CORE(double, __builtin_fabs, fmod, remainder)

// AS wrapper of a scalar core: f(T x, AS P* p).
#define PTR1_SCALAR(AS, NAME, T, P) \
  OVL T NAME(T x, AS P* p) {        \
    P t;                            \
    T r = NAME(x, &t);              \
    *p = t;                         \
    return r;                       \
  }
#define PTR1_ALL(NAME, T, P)                                  \
  PTR1_SCALAR(__global, NAME, T, P)                           \
  PTR1_SCALAR(__local, NAME, T, P)                            \
  PTR1_SCALAR(__generic, NAME, T, P)                          \
  PTR1_VECTORS(__global, NAME, T, P)                          \
  PTR1_VECTORS(__local, NAME, T, P)                           \
  PTR1_VECTORS(__private, NAME, T, P)                         \
  PTR1_VECTORS(__generic, NAME, T, P)
PTR1_ALL(fract, float, float)
PTR1_ALL(fract, double, double)
PTR1_ALL(modf, float, float)
PTR1_ALL(modf, double, double)
PTR1_ALL(frexp, float, int)
PTR1_ALL(frexp, double, int)
PTR1_ALL(sincos, float, float)
PTR1_ALL(sincos, double, double)
PTR1_ALL(lgamma_r, float, int)
PTR1_ALL(lgamma_r, double, int)

#define REMQUO_SCALAR(AS, T)            \
  OVL T remquo(T x, T y, AS int* q) {   \
    int t;                              \
    T r = remquo(x, y, &t);             \
    *q = t;                             \
    return r;                           \
  }
#define REMQUO_VECTOR(AS, T, N)                           \
  OVL T##N remquo(T##N x, T##N y, AS int##N* q) {         \
    T##N r;                                               \
    int##N o;                                             \
    for (int i = 0; i < N; ++i) {                         \
      int t;                                              \
      r[i] = remquo(x[i], y[i], &t);                      \
      o[i] = t;                                           \
    }                                                     \
    *q = o;                                               \
    return r;                                             \
  }
#define REMQUO_ALL_AS(AS, T) REMQUO_VECTOR(AS, T, 2) REMQUO_VECTOR(AS, T, 3) \
  REMQUO_VECTOR(AS, T, 4) REMQUO_VECTOR(AS, T, 8) REMQUO_VECTOR(AS, T, 16)
REMQUO_SCALAR(__global, float) REMQUO_SCALAR(__local, float) REMQUO_SCALAR(__generic, float)
REMQUO_SCALAR(__global, double) REMQUO_SCALAR(__local, double) REMQUO_SCALAR(__generic, double)
REMQUO_ALL_AS(__global, float) REMQUO_ALL_AS(__local, float) REMQUO_ALL_AS(__private, float)
REMQUO_ALL_AS(__generic, float)
REMQUO_ALL_AS(__global, double) REMQUO_ALL_AS(__local, double) REMQUO_ALL_AS(__private, double)
REMQUO_ALL_AS(__generic, double)

// ---- half_* and native_* (float only): implementation-defined accuracy, so the fast paths ----
#define HALF_NATIVE_UNARY(name, impl)                        \
  OVLC float half_##name(float x) { return impl(x); }        \
  OVLC float native_##name(float x) { return impl(x); }      \
  VEC_UNARY(float, half_##name, float)                       \
  VEC_UNARY(float, native_##name, float)
HALF_NATIVE_UNARY(cos, cos)
HALF_NATIVE_UNARY(sin, sin)
HALF_NATIVE_UNARY(tan, tan)
HALF_NATIVE_UNARY(exp, exp)
HALF_NATIVE_UNARY(exp2, exp2)
HALF_NATIVE_UNARY(exp10, exp10)
HALF_NATIVE_UNARY(log, log)
HALF_NATIVE_UNARY(log2, log2)
HALF_NATIVE_UNARY(log10, log10)
HALF_NATIVE_UNARY(sqrt, sqrt)
HALF_NATIVE_UNARY(rsqrt, rsqrt)

#define HALF_NATIVE_T(T)                                              \
  OVLC T half_recip(T x) { return (T)1.0f / x; }                       \
  OVLC T native_recip(T x) { return (T)1.0f / x; }                     \
  OVLC T half_divide(T x, T y) { return x / y; }                       \
  OVLC T native_divide(T x, T y) { return x / y; }                     \
  OVLC T half_powr(T x, T y) { return powr(x, y); }                    \
  OVLC T native_powr(T x, T y) { return powr(x, y); }
ALL_WIDTHS(HALF_NATIVE_T, float)
