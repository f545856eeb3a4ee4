// Half-precision builtins (cl_khr_fp16): the half forms of the math, common, geometric and
// relational builtins, conversions to and from half with every rounding mode and saturation,
// vloadn/vstoren, shuffles and async copies of half. Portable OpenCL C: the CPU library and the
// NVPTX one (compiler/nvptx/nvptx.cmake; libclc has no half functions) both link it.
//
// Accuracy: a half function evaluates its float function on the exact float value of its
// arguments and rounds the result once to half. The float functions are within a few float ulps,
// each 2^-13 of a half ulp, so the half result is within 0.5 ulp and a hair: inside every bound of
// the spec's half table that is at least 1 ulp. The exact ones (0 ulp) have float results that
// are exact (ceil, fmod, ldexp, frexp...), or round once from a result whose float rounding is
// innocuous (sqrt, fdim: float has more than 2 * 11 + 2 bits), or are computed here with half's
// own rounding (fract, nextafter, fma).
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

// M(N, ...) for N = scalar (empty), 2, 3, 4, 8, 16: half##N is then the half type of that width.
#define EACH_WIDTH(M, ...) \
  M(, __VA_ARGS__) M(2, __VA_ARGS__) M(3, __VA_ARGS__) M(4, __VA_ARGS__) M(8, __VA_ARGS__) \
  M(16, __VA_ARGS__)
#define EACH_VECTOR_WIDTH(M, ...) \
  M(2, __VA_ARGS__) M(3, __VA_ARGS__) M(4, __VA_ARGS__) M(8, __VA_ARGS__) M(16, __VA_ARGS__)

// CVT(x, T, N): x converted to T##N, rounding to nearest even (a cast or one vector conversion).
#define CVT(x, T, N) CVT_##N(x, T##N)
#define CVT_(x, T) ((T)(x))
#define CVT_2(x, T) __builtin_convertvector(x, T)
#define CVT_3(x, T) __builtin_convertvector(x, T)
#define CVT_4(x, T) __builtin_convertvector(x, T)
#define CVT_8(x, T) __builtin_convertvector(x, T)
#define CVT_16(x, T) __builtin_convertvector(x, T)
#define TO_FLOAT(x, N) CVT(x, float, N)
#define TO_HALF(x, N) CVT(x, half, N)

// A definition here hides clang's declarations of the builtin of the same name from the rest of
// this file (-fdeclare-opencl-builtins adds them only where lookup finds nothing): the float
// forms the half ones call are declared next to each.

// ---- Conversions (OpenCL C 3.0 section 6.4.3) ----

// From half: exact to float, double and half, whatever the rounding mode.
#define FROM_HALF_EXACT(N, D)                                                             \
  OVLC D##N convert_##D##N(half##N x) { return CVT(x, D, N); }                            \
  OVLC D##N convert_##D##N##_rte(half##N x) { return CVT(x, D, N); }                      \
  OVLC D##N convert_##D##N##_rtz(half##N x) { return CVT(x, D, N); }                      \
  OVLC D##N convert_##D##N##_rtp(half##N x) { return CVT(x, D, N); }                      \
  OVLC D##N convert_##D##N##_rtn(half##N x) { return CVT(x, D, N); }
// From half to an integer type: the float conversion of the same value (half to float is exact).
#define FROM_HALF_TO_INTEGER_MODE(N, D, SUFFIX)                                                   \
  OVLC D##N convert_##D##N##SUFFIX(float##N);                                                    \
  OVLC D##N convert_##D##N##SUFFIX(half##N x) { return convert_##D##N##SUFFIX(TO_FLOAT(x, N)); }
#define FROM_HALF_TO_INTEGER(N, D)                                                         \
  FROM_HALF_TO_INTEGER_MODE(N, D, ) FROM_HALF_TO_INTEGER_MODE(N, D, _rte)                  \
  FROM_HALF_TO_INTEGER_MODE(N, D, _rtz) FROM_HALF_TO_INTEGER_MODE(N, D, _rtp)              \
  FROM_HALF_TO_INTEGER_MODE(N, D, _rtn) FROM_HALF_TO_INTEGER_MODE(N, D, _sat)              \
  FROM_HALF_TO_INTEGER_MODE(N, D, _sat_rte) FROM_HALF_TO_INTEGER_MODE(N, D, _sat_rtz)      \
  FROM_HALF_TO_INTEGER_MODE(N, D, _sat_rtp) FROM_HALF_TO_INTEGER_MODE(N, D, _sat_rtn)
EACH_WIDTH(FROM_HALF_EXACT, half)
EACH_WIDTH(FROM_HALF_EXACT, float)
EACH_WIDTH(FROM_HALF_EXACT, double)
EACH_WIDTH(FROM_HALF_TO_INTEGER, char)
EACH_WIDTH(FROM_HALF_TO_INTEGER, uchar)
EACH_WIDTH(FROM_HALF_TO_INTEGER, short)
EACH_WIDTH(FROM_HALF_TO_INTEGER, ushort)
EACH_WIDTH(FROM_HALF_TO_INTEGER, int)
EACH_WIDTH(FROM_HALF_TO_INTEGER, uint)
EACH_WIDTH(FROM_HALF_TO_INTEGER, long)
EACH_WIDTH(FROM_HALF_TO_INTEGER, ulong)

// To half from a type every value of which half holds exactly (char, uchar).
#define TO_HALF_EXACT(N, S)                                                               \
  OVLC half##N convert_half##N(S##N x) { return TO_HALF(x, N); }                          \
  OVLC half##N convert_half##N##_rte(S##N x) { return TO_HALF(x, N); }                    \
  OVLC half##N convert_half##N##_rtz(S##N x) { return TO_HALF(x, N); }                    \
  OVLC half##N convert_half##N##_rtp(S##N x) { return TO_HALF(x, N); }                    \
  OVLC half##N convert_half##N##_rtn(S##N x) { return TO_HALF(x, N); }
// To half from the others: to nearest even by the hardware's conversion (a float step first is
// harmless for integers, whose values past float's exact range overflow half in every mode). The
// directed modes step that result one half toward the exact value where it lies on the wrong
// side, compared in W, where both are exact (or, for huge longs, on the same side). Without
// branches: a lane that holds no value (an unset lane of a 3-vector, as the conversions test
// makes) must not make the other lanes undefined.
#define TO_HALF_DIRECTED_SCALAR(S, W, SUFFIX, ABOVE, BELOW)                             \
  OVLC half convert_half##SUFFIX(S x) {                                                 \
    const half r = (half)x;                                                             \
    const W rounded = (W)r, exact = (W)x;                                               \
    const ushort bits = __builtin_astype(r, ushort);                                    \
    const bool negative = (bits & 0x8000) != 0, zero = (bits & 0x7fff) == 0;            \
    /* The neighbours above and below (from a zero, the smallest denormals). */         \
    const ushort up = zero ? (ushort)0x0001 : negative ? bits - 1 : bits + 1;           \
    const ushort down = zero ? (ushort)0x8001 : negative ? bits + 1 : bits - 1;         \
    const bool above = rounded > exact, below = rounded < exact;                        \
    return __builtin_astype((ushort)(ABOVE ? down : BELOW ? up : bits), half);          \
  }
#define TO_HALF_DIRECTED_VECTOR(N, S, SUFFIX)                                     \
  OVLC half##N convert_half##N##SUFFIX(S##N x) {                                  \
    half##N r;                                                                    \
    for (int i = 0; i < N; ++i) r[i] = convert_half##SUFFIX(x[i]);                \
    return r;                                                                     \
  }
#define TO_HALF_NEAREST(N, S)                                                     \
  OVLC half##N convert_half##N(S##N x) { return TO_HALF(x, N); }                  \
  OVLC half##N convert_half##N##_rte(S##N x) { return TO_HALF(x, N); }
// rtz steps toward zero: down from a positive result above x, up from a negative one below it.
#define TO_HALF_ROUNDED(S, W)                                                       \
  EACH_WIDTH(TO_HALF_NEAREST, S)                                                    \
  TO_HALF_DIRECTED_SCALAR(S, W, _rtz, (above && !negative), (below && negative))    \
  TO_HALF_DIRECTED_SCALAR(S, W, _rtp, false, below)                                 \
  TO_HALF_DIRECTED_SCALAR(S, W, _rtn, above, false)                                 \
  EACH_VECTOR_WIDTH(TO_HALF_DIRECTED_VECTOR, S, _rtz)                               \
  EACH_VECTOR_WIDTH(TO_HALF_DIRECTED_VECTOR, S, _rtp)                               \
  EACH_VECTOR_WIDTH(TO_HALF_DIRECTED_VECTOR, S, _rtn)
EACH_WIDTH(TO_HALF_EXACT, char)
EACH_WIDTH(TO_HALF_EXACT, uchar)
TO_HALF_ROUNDED(short, float)
TO_HALF_ROUNDED(ushort, float)
TO_HALF_ROUNDED(int, double)
TO_HALF_ROUNDED(uint, double)
TO_HALF_ROUNDED(long, double)
TO_HALF_ROUNDED(ulong, double)
TO_HALF_ROUNDED(float, float)
TO_HALF_ROUNDED(double, double)

// ---- Math (section 6.15.2) ----

#define UNARY_VIA_FLOAT(N, NAME)                                                  \
  OVLC float##N NAME(float##N);                                                   \
  OVLC half##N NAME(half##N x) { return TO_HALF(NAME(TO_FLOAT(x, N)), N); }
#define BINARY_VIA_FLOAT(N, NAME)                                                 \
  OVLC float##N NAME(float##N, float##N);                                         \
  OVLC half##N NAME(half##N x, half##N y) {                                       \
    return TO_HALF(NAME(TO_FLOAT(x, N), TO_FLOAT(y, N)), N);                      \
  }
#define WITH_INT_VIA_FLOAT(N, NAME)                                               \
  OVLC float##N NAME(float##N, int##N);                                           \
  OVLC half##N NAME(half##N x, int##N n) { return TO_HALF(NAME(TO_FLOAT(x, N), n), N); }
#define UNARY(NAME) EACH_WIDTH(UNARY_VIA_FLOAT, NAME)
#define BINARY(NAME) EACH_WIDTH(BINARY_VIA_FLOAT, NAME)
#define WITH_INT(NAME) EACH_WIDTH(WITH_INT_VIA_FLOAT, NAME)

UNARY(acos) UNARY(acosh) UNARY(acospi) UNARY(asin) UNARY(asinh) UNARY(asinpi) UNARY(atan)
UNARY(atanh) UNARY(atanpi) UNARY(cbrt) UNARY(ceil) UNARY(cos) UNARY(cosh) UNARY(cospi)
UNARY(erfc) UNARY(erf) UNARY(exp) UNARY(exp2) UNARY(exp10) UNARY(expm1) UNARY(floor)
UNARY(lgamma) UNARY(log) UNARY(log2) UNARY(log10) UNARY(log1p) UNARY(logb) UNARY(rint)
UNARY(round) UNARY(rsqrt) UNARY(sin) UNARY(sinh) UNARY(sinpi) UNARY(sqrt) UNARY(tan)
UNARY(tanh) UNARY(tanpi) UNARY(tgamma) UNARY(trunc)
BINARY(atan2) BINARY(atan2pi) BINARY(fdim) BINARY(fmax) BINARY(fmin) BINARY(fmod) BINARY(hypot)
BINARY(maxmag) BINARY(minmag) BINARY(pow) BINARY(powr) BINARY(remainder)
WITH_INT(pown) WITH_INT(rootn) WITH_INT(ldexp)
VEC_SPLAT_SECOND(half, fmax, half, half)
VEC_SPLAT_SECOND(half, fmin, half, half)
VEC_SPLAT_SECOND(half, ldexp, half, int)

#define BIT_EXACT(N, unused)                                                         \
  OVLC half##N fabs(half##N x) { return __builtin_elementwise_abs(x); }              \
  OVLC half##N copysign(half##N x, half##N y) {                                      \
    return __builtin_elementwise_copysign(x, y);                                     \
  }                                                                                  \
  OVLC int##N ilogb(float##N);                                                       \
  OVLC int##N ilogb(half##N x) { return ilogb(TO_FLOAT(x, N)); }                     \
  OVLC half##N nan(ushort##N code) {                                                 \
    return __builtin_astype((ushort##N)((ushort##N)0x7e00 | (code & (ushort##N)0x01ff)),       \
                            half##N);                                                \
  }                                                                                  \
  OVLC half##N mad(half##N a, half##N b, half##N c) {                                \
    return TO_HALF(TO_FLOAT(a, N) * TO_FLOAT(b, N) + TO_FLOAT(c, N), N);             \
  }
EACH_WIDTH(BIT_EXACT, 0)

// nextafter on the bits: the neighbour of x toward y (the smallest denormal of y's sign from 0).
OVLC half nextafter(half x, half y) {
  if (x != x || y != y) return x + y;
  if (x == y) return y;
  if (x == (half)0) return __builtin_astype((ushort)((__builtin_astype(y, ushort) & 0x8000) | 1), half);
  const short bits = __builtin_astype(x, short);
  return __builtin_astype((short)(((x < y) == (x > (half)0)) ? bits + 1 : bits - 1), half);
}
VEC_BINARY(half, nextafter, half, half)

// fma, correctly rounded: a * b is exact in float (22 significant bits), the exact sum with c
// rounded to float by round-to-odd (to nearest, then to the odd neighbour when inexact, the
// error found exactly by TwoSum) rounds correctly to half, as float has more than 11 + 1 bits.
OVLC half fma(half a, half b, half c) {
  const float product = (float)a * (float)b;
  const float addend = (float)c;
  float sum = product + addend;
  if (__builtin_isfinite(sum)) {
    const float addend_part = sum - product;
    const float error = (product - (sum - addend_part)) + (addend - addend_part);
    const uint bits = __builtin_astype(sum, uint);
    if (error != 0.0f && (bits & 1u) == 0u)
      sum = __builtin_astype((error > 0.0f) == (sum > 0.0f) ? bits + 1u : bits - 1u, float);
  }
  return (half)sum;
}
VEC_TERNARY(half, fma, half, half, half)

// ---- Math with a pointer result, in every address space ----
// Scalar cores with a private pointer; the builtins in each address space and width go through
// a private temporary (the optimizer removes it).
OVL float frexp(float, __private int*);
OVL float sincos(float, __private float*);
OVL float lgamma_r(float, __private int*);
OVL float remquo(float, float, __private int*);
static half fract_core(half x, __private half* whole) {
  const float f = __builtin_floorf((float)x);
  *whole = (half)f;  // exact
  if (x != x || x == (half)0) return x;  // a zero keeps its sign, as modf's fraction does
  if (__builtin_isinf((float)x)) return __builtin_elementwise_copysign((half)0.0f, x);
  // The half subtraction (the exact float difference rounded once), below 1 as the spec says.
  return (half)__builtin_fminf((float)(half)((float)x - f), 0x1.ffcp-1f);
}
static half modf_core(half x, __private half* whole) {
  const half t = (half)__builtin_truncf((float)x);
  *whole = t;
  return __builtin_elementwise_copysign(__builtin_isinf((float)x) ? (half)0.0f : x - t, x);
}
static half frexp_core(half x, __private int* exponent) {
  int e;
  const half r = (half)frexp((float)x, &e);
  *exponent = e;
  return r;
}
static half sincos_core(half x, __private half* cosine) {
  float c;
  const half r = (half)sincos((float)x, &c);
  *cosine = (half)c;
  return r;
}
static half lgamma_r_core(half x, __private int* sign) {
  int s;
  const half r = (half)lgamma_r((float)x, &s);
  *sign = s;
  return r;
}
static half remquo_core(half x, half y, __private int* quotient) {
  int q;
  const half r = (half)remquo((float)x, (float)y, &q);
  *quotient = q;
  return r;
}

#define POINTER_RESULT_SCALAR(AS, NAME, P) \
  OVL half NAME(half x, AS P* p) {         \
    P t;                                   \
    const half r = NAME##_core(x, &t);     \
    *p = t;                                \
    return r;                              \
  }
#define POINTER_RESULT_VECTOR(N, AS, NAME, P)     \
  OVL half##N NAME(half##N x, AS P##N* p) {       \
    half##N r;                                    \
    P##N o;                                       \
    for (int i = 0; i < N; ++i) {                 \
      P t;                                        \
      r[i] = NAME##_core(x[i], &t);               \
      o[i] = t;                                   \
    }                                             \
    *p = o;                                       \
    return r;                                     \
  }
#define REMQUO_SCALAR(AS)                      \
  OVL half remquo(half x, half y, AS int* q) { \
    int t;                                     \
    const half r = remquo_core(x, y, &t);      \
    *q = t;                                    \
    return r;                                  \
  }
#define REMQUO_VECTOR(N, AS)                                 \
  OVL half##N remquo(half##N x, half##N y, AS int##N* q) {   \
    half##N r;                                               \
    int##N o;                                                \
    for (int i = 0; i < N; ++i) {                            \
      int t;                                                 \
      r[i] = remquo_core(x[i], y[i], &t);                    \
      o[i] = t;                                              \
    }                                                        \
    *q = o;                                                  \
    return r;                                                \
  }
#define POINTER_RESULTS(AS, unused)                                          \
  POINTER_RESULT_SCALAR(AS, fract, half)                                     \
  POINTER_RESULT_SCALAR(AS, modf, half)                                      \
  POINTER_RESULT_SCALAR(AS, frexp, int)                                      \
  POINTER_RESULT_SCALAR(AS, sincos, half)                                    \
  POINTER_RESULT_SCALAR(AS, lgamma_r, int)                                   \
  REMQUO_SCALAR(AS)                                                          \
  EACH_VECTOR_WIDTH(POINTER_RESULT_VECTOR, AS, fract, half)                  \
  EACH_VECTOR_WIDTH(POINTER_RESULT_VECTOR, AS, modf, half)                   \
  EACH_VECTOR_WIDTH(POINTER_RESULT_VECTOR, AS, frexp, int)                   \
  EACH_VECTOR_WIDTH(POINTER_RESULT_VECTOR, AS, sincos, half)                 \
  EACH_VECTOR_WIDTH(POINTER_RESULT_VECTOR, AS, lgamma_r, int)                \
  EACH_VECTOR_WIDTH(REMQUO_VECTOR, AS)
FOR_EACH_DISTINCT_WRITABLE_AS(POINTER_RESULTS, 0)

// ---- Common functions (section 6.15.4): in float, rounded once ----
#define COMMON(N, unused)                                                                     \
  OVLC float##N degrees(float##N);                                                            \
  OVLC float##N radians(float##N);                                                            \
  OVLC float##N mix(float##N, float##N, float##N);                                            \
  OVLC float##N smoothstep(float##N, float##N, float##N);                                     \
  OVLC float##N sign(float##N);                                                               \
  OVLC half##N clamp(half##N x, half##N lo, half##N hi) { return fmin(fmax(x, lo), hi); }     \
  OVLC half##N max(half##N x, half##N y) { return fmax(x, y); }                               \
  OVLC half##N min(half##N x, half##N y) { return fmin(x, y); }                               \
  OVLC half##N degrees(half##N r) { return TO_HALF(degrees(TO_FLOAT(r, N)), N); }             \
  OVLC half##N radians(half##N d) { return TO_HALF(radians(TO_FLOAT(d, N)), N); }             \
  OVLC half##N mix(half##N x, half##N y, half##N a) {                                         \
    return TO_HALF(mix(TO_FLOAT(x, N), TO_FLOAT(y, N), TO_FLOAT(a, N)), N);                   \
  }                                                                                           \
  OVLC half##N step(half##N edge, half##N x) { return x < edge ? (half##N)(0) : (half##N)(1); } \
  OVLC half##N smoothstep(half##N e0, half##N e1, half##N x) {                                \
    return TO_HALF(smoothstep(TO_FLOAT(e0, N), TO_FLOAT(e1, N), TO_FLOAT(x, N)), N);          \
  }                                                                                           \
  OVLC half##N sign(half##N x) { return TO_HALF(sign(TO_FLOAT(x, N)), N); }
#define COMMON_SPLAT(N, unused)                                                                 \
  OVLC half##N clamp(half##N x, half lo, half hi) { return clamp(x, (half##N)(lo), (half##N)(hi)); } \
  OVLC half##N max(half##N x, half y) { return max(x, (half##N)(y)); }                          \
  OVLC half##N min(half##N x, half y) { return min(x, (half##N)(y)); }                          \
  OVLC half##N mix(half##N x, half##N y, half a) { return mix(x, y, (half##N)(a)); }            \
  OVLC half##N step(half edge, half##N x) { return step((half##N)(edge), x); }                  \
  OVLC half##N smoothstep(half e0, half e1, half##N x) {                                        \
    return smoothstep((half##N)(e0), (half##N)(e1), x);                                         \
  }
EACH_WIDTH(COMMON, 0)
EACH_VECTOR_WIDTH(COMMON_SPLAT, 0)

// ---- Geometric functions (section 6.15.5): in float (no overflow for half inputs), rounded
// once ----
#define GEOMETRIC(N, unused)                                                                    \
  OVLC float dot(float##N, float##N);                                                           \
  OVLC float distance(float##N, float##N);                                                      \
  OVLC float length(float##N);                                                                  \
  OVLC float##N normalize(float##N);                                                            \
  OVLC half dot(half##N a, half##N b) { return (half)dot(TO_FLOAT(a, N), TO_FLOAT(b, N)); }     \
  OVLC half distance(half##N a, half##N b) {                                                    \
    return (half)distance(TO_FLOAT(a, N), TO_FLOAT(b, N));                                      \
  }                                                                                             \
  OVLC half length(half##N p) { return (half)length(TO_FLOAT(p, N)); }                          \
  OVLC half##N normalize(half##N p) { return TO_HALF(normalize(TO_FLOAT(p, N)), N); }
GEOMETRIC(, 0) GEOMETRIC(2, 0) GEOMETRIC(3, 0) GEOMETRIC(4, 0)
OVLC float3 cross(float3, float3);
OVLC float4 cross(float4, float4);
OVLC half3 cross(half3 a, half3 b) { return TO_HALF(cross(TO_FLOAT(a, 3), TO_FLOAT(b, 3)), 3); }
OVLC half4 cross(half4 a, half4 b) { return TO_HALF(cross(TO_FLOAT(a, 4), TO_FLOAT(b, 4)), 4); }

// ---- Relational functions (section 6.15.6): the comparison operators' results, int for
// scalars and -1/0 shorts for vectors ----
#define RELATIONAL(H, R, I)                                                            \
  OVLC R isequal(H x, H y) { return x == y; }                                          \
  OVLC R isnotequal(H x, H y) { return x != y; }                                       \
  OVLC R isgreater(H x, H y) { return x > y; }                                         \
  OVLC R isgreaterequal(H x, H y) { return x >= y; }                                   \
  OVLC R isless(H x, H y) { return x < y; }                                            \
  OVLC R islessequal(H x, H y) { return x <= y; }                                      \
  OVLC R islessgreater(H x, H y) { return (x < y) || (x > y); }                        \
  OVLC R isordered(H x, H y) { return (x == x) && (y == y); }                          \
  OVLC R isunordered(H x, H y) { return (x != x) || (y != y); }                        \
  OVLC R isnan(H x) { return x != x; }                                                 \
  OVLC R isinf(H x) { return __builtin_elementwise_abs(x) == (H)(INFINITY); }          \
  OVLC R isfinite(H x) { return __builtin_elementwise_abs(x) < (H)(INFINITY); }        \
  OVLC R isnormal(H x) {                                                               \
    const H a = __builtin_elementwise_abs(x);                                          \
    return (a >= (H)(0x1p-14f)) && (a < (H)(INFINITY));                                \
  }                                                                                    \
  OVLC R signbit(H x) { return __builtin_astype(x, I) < (I)(0); }                      \
  OVLC H bitselect(H a, H b, H c) {                                                    \
    const I ia = __builtin_astype(a, I), ib = __builtin_astype(b, I);                  \
    const I ic = __builtin_astype(c, I);                                               \
    return __builtin_astype((I)((ia & ~ic) | (ib & ic)), H);                           \
  }
RELATIONAL(half, int, short)
RELATIONAL(half2, short2, short2)
RELATIONAL(half3, short3, short3)
RELATIONAL(half4, short4, short4)
RELATIONAL(half8, short8, short8)
RELATIONAL(half16, short16, short16)

// select: scalars pick b when c is not 0; vectors where the element's most significant bit is set.
OVLC half select(half a, half b, short c) { return c ? b : a; }
OVLC half select(half a, half b, ushort c) { return c ? b : a; }
#define SELECT_VECTOR(N, unused)                                                            \
  OVLC half##N select(half##N a, half##N b, short##N c) { return c < (short##N)(0) ? b : a; } \
  OVLC half##N select(half##N a, half##N b, ushort##N c) {                                  \
    return __builtin_astype(c, short##N) < (short##N)(0) ? b : a;                           \
  }
EACH_VECTOR_WIDTH(SELECT_VECTOR, 0)

// ---- vloadn/vstoren, shuffles, async copies (common.h's macros) ----
UNALIGNED_TYPES(half)
#define VLOAD_HALF_TYPE(AS, unused) VLOAD_ALL(AS, half)
#define VSTORE_HALF_TYPE(AS, unused) VSTORE_ALL(AS, half)
FOR_EACH_DISTINCT_READABLE_AS(VLOAD_HALF_TYPE, 0)
FOR_EACH_DISTINCT_WRITABLE_AS(VSTORE_HALF_TYPE, 0)
SHUFFLE(half, ushort)
ALL_WIDTHS(ASYNC_COPY, half)
