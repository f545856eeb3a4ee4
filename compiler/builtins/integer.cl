// Integer builtins (OpenCL C 3.0 section 6.15.3) for all integer types and widths, and the
// "common" builtins (6.15.4) for float and double.
//
// Most bodies are written once for a type T that may be scalar or vector: OpenCL C vector
// operators, comparisons (-1/0 masks) and ?: selects work element-wise, and the
// __builtin_elementwise_* builtins map to LLVM intrinsics that stay vectorized.
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// M(T, U): T a signed or unsigned integer type, U its unsigned counterpart, at every width.
#define INT_PAIRS_W(M, T, U) M(T, U) M(T##2, U##2) M(T##3, U##3) M(T##4, U##4) M(T##8, U##8) \
  M(T##16, U##16)
#define ALL_INT_PAIRS(M)                                                             \
  INT_PAIRS_W(M, char, uchar) INT_PAIRS_W(M, uchar, uchar) INT_PAIRS_W(M, short, ushort) \
  INT_PAIRS_W(M, ushort, ushort) INT_PAIRS_W(M, int, uint) INT_PAIRS_W(M, uint, uint)    \
  INT_PAIRS_W(M, long, ulong) INT_PAIRS_W(M, ulong, ulong)

#define INT_GENERIC(T, U)                                                                   \
  OVLC U abs_diff(T x, T y) {                                                               \
    T hi = __builtin_elementwise_max(x, y), lo = __builtin_elementwise_min(x, y);           \
    return __builtin_astype(hi, U) - __builtin_astype(lo, U);                               \
  }                                                                                         \
  OVLC T add_sat(T x, T y) { return __builtin_elementwise_add_sat(x, y); }                  \
  OVLC T sub_sat(T x, T y) { return __builtin_elementwise_sub_sat(x, y); }                  \
  OVLC T hadd(T x, T y) { return (x >> 1) + (y >> 1) + (x & y & (T)1); }                    \
  OVLC T rhadd(T x, T y) { return (x >> 1) + (y >> 1) + ((x | y) & (T)1); }                 \
  OVLC T max(T x, T y) { return __builtin_elementwise_max(x, y); }                          \
  OVLC T min(T x, T y) { return __builtin_elementwise_min(x, y); }                          \
  OVLC T clamp(T x, T lo, T hi) {                                                           \
    return __builtin_elementwise_min(__builtin_elementwise_max(x, lo), hi);                 \
  }                                                                                         \
  OVLC T popcount(T x) { return __builtin_elementwise_popcount(x); }                        \
  OVLC T clz(T x) {                                                                         \
    return __builtin_elementwise_clzg(x, (T)(sizeof(x) / vec_step(x) * 8));                \
  }                                                                                         \
  OVLC T ctz(T x) {                                                                         \
    return __builtin_elementwise_ctzg(x, (T)(sizeof(x) / vec_step(x) * 8));                \
  }                                                                                         \
  OVLC T rotate(T x, T n) {                                                                 \
    U bits = (U)(sizeof(x) / vec_step(x) * 8);                                              \
    U ux = __builtin_astype(x, U), un = __builtin_astype(n, U) & (bits - (U)1);            \
    return __builtin_astype((U)((ux << un) | (ux >> ((bits - un) & (bits - (U)1)))), T);   \
  }                                                                                         \
  OVLC T mul24(T x, T y) { return x * y; }                                                  \
  OVLC T mad24(T x, T y, T z) { return x * y + z; }
ALL_INT_PAIRS(INT_GENERIC)

#define ABS_SIGNED(T, U) OVLC U abs(T x) { return __builtin_astype(__builtin_elementwise_abs(x), U); }
#define ABS_UNSIGNED(T, U) OVLC U abs(T x) { return x; }
INT_PAIRS_W(ABS_SIGNED, char, uchar) INT_PAIRS_W(ABS_SIGNED, short, ushort)
INT_PAIRS_W(ABS_SIGNED, int, uint) INT_PAIRS_W(ABS_SIGNED, long, ulong)
INT_PAIRS_W(ABS_UNSIGNED, uchar, uchar) INT_PAIRS_W(ABS_UNSIGNED, ushort, ushort)
INT_PAIRS_W(ABS_UNSIGNED, uint, uint) INT_PAIRS_W(ABS_UNSIGNED, ulong, ulong)

// vec_step of a 3-component vector is 4 while its size is that of 4 elements: the element
// width expression above (sizeof / vec_step) is correct for every width.

// max/min/clamp with a scalar second argument.
#define INT_SPLAT(T, S)                                                           \
  OVLC T max(T x, S y) { return max(x, (T)(y)); }                                 \
  OVLC T min(T x, S y) { return min(x, (T)(y)); }                                 \
  OVLC T clamp(T x, S lo, S hi) { return clamp(x, (T)(lo), (T)(hi)); }
#define INT_SPLAT_ALL(S) INT_SPLAT(S##2, S) INT_SPLAT(S##3, S) INT_SPLAT(S##4, S) \
  INT_SPLAT(S##8, S) INT_SPLAT(S##16, S)
INT_SPLAT_ALL(char) INT_SPLAT_ALL(uchar) INT_SPLAT_ALL(short) INT_SPLAT_ALL(ushort)
INT_SPLAT_ALL(int) INT_SPLAT_ALL(uint) INT_SPLAT_ALL(long) INT_SPLAT_ALL(ulong)

// mul_hi / mad_hi / mad_sat through the next wider type (T, W: scalar or vector of equal width).
#define MUL_HI_SCALAR(T, W, BITS)                                        \
  OVLC T mul_hi(T x, T y) { return (T)(((W)x * (W)y) >> BITS); }         \
  OVLC T mad_hi(T x, T y, T z) { return mul_hi(x, y) + z; }
MUL_HI_SCALAR(char, short, 8)
MUL_HI_SCALAR(uchar, ushort, 8)
MUL_HI_SCALAR(short, int, 16)
MUL_HI_SCALAR(ushort, uint, 16)
MUL_HI_SCALAR(int, long, 32)
MUL_HI_SCALAR(uint, ulong, 32)
// 64-bit: schoolbook on 32-bit halves.
OVLC ulong mul_hi(ulong x, ulong y) {
  ulong x_lo = x & 0xffffffffUL, x_hi = x >> 32, y_lo = y & 0xffffffffUL, y_hi = y >> 32;
  ulong lo_lo = x_lo * y_lo, hi_lo = x_hi * y_lo, lo_hi = x_lo * y_hi, hi_hi = x_hi * y_hi;
  ulong cross = (lo_lo >> 32) + (hi_lo & 0xffffffffUL) + lo_hi;
  return hi_hi + (hi_lo >> 32) + (cross >> 32);
}
OVLC long mul_hi(long x, long y) {
  ulong high = mul_hi((ulong)x, (ulong)y);
  // Signed correction: subtract the other operand for each negative one.
  if (x < 0) high -= (ulong)y;
  if (y < 0) high -= (ulong)x;
  return (long)high;
}
OVLC long mad_hi(long x, long y, long z) { return mul_hi(x, y) + z; }
OVLC ulong mad_hi(ulong x, ulong y, ulong z) { return mul_hi(x, y) + z; }

#define MAD_SAT_SCALAR(T, W, LO, HI)                                   \
  OVLC T mad_sat(T x, T y, T z) {                                      \
    W r = (W)x * (W)y + (W)z;                                          \
    return (T)(r < (W)(LO) ? (W)(LO) : r > (W)(HI) ? (W)(HI) : r);     \
  }
MAD_SAT_SCALAR(char, int, CHAR_MIN, CHAR_MAX)
MAD_SAT_SCALAR(uchar, uint, 0, UCHAR_MAX)
MAD_SAT_SCALAR(short, int, SHRT_MIN, SHRT_MAX)
MAD_SAT_SCALAR(ushort, uint, 0, USHRT_MAX)
MAD_SAT_SCALAR(int, long, INT_MIN, INT_MAX)
MAD_SAT_SCALAR(uint, ulong, 0, UINT_MAX)
OVLC ulong mad_sat(ulong x, ulong y, ulong z) {
  ulong hi = mul_hi(x, y), lo = x * y;
  if (hi) return ULONG_MAX;
  return add_sat(lo, z);
}
OVLC long mad_sat(long x, long y, long z) {
  // Full 128-bit product as (hi, lo), then add z with carry, then saturate.
  long hi = mul_hi(x, y);
  ulong lo = (ulong)x * (ulong)y;
  ulong sum = lo + (ulong)z;
  hi += (z < 0 ? -1L : 0L) + (sum < lo ? 1L : 0L);
  if (hi > 0 || (hi == 0 && (long)sum < 0)) return LONG_MAX;
  if (hi < -1 || (hi == -1 && (long)sum >= 0)) return LONG_MIN;
  return (long)sum;
}
#define VEC_INT3(NAME, T) VEC_TERNARY(T, NAME, T, T, T)
#define VEC_INT2(NAME, T) VEC_BINARY(T, NAME, T, T)
#define INT_VEC_FROM_SCALAR(T) VEC_INT2(mul_hi, T) VEC_INT3(mad_hi, T) VEC_INT3(mad_sat, T)
INT_VEC_FROM_SCALAR(char) INT_VEC_FROM_SCALAR(uchar) INT_VEC_FROM_SCALAR(short)
INT_VEC_FROM_SCALAR(ushort) INT_VEC_FROM_SCALAR(int) INT_VEC_FROM_SCALAR(uint)
INT_VEC_FROM_SCALAR(long) INT_VEC_FROM_SCALAR(ulong)

// upsample(hi, lo): hi in the upper half of the wider result, lo (unsigned) in the lower.
#define UPSAMPLE(T, U, W, UW, BITS)                                                           \
  OVLC W upsample(T hi, U lo) { return ((W)hi << BITS) | (W)lo; }                             \
  OVLC W##2 upsample(T##2 hi, U##2 lo) {                                                      \
    return (__builtin_convertvector(hi, W##2) << BITS) | __builtin_convertvector(lo, W##2);   \
  }                                                                                           \
  OVLC W##3 upsample(T##3 hi, U##3 lo) {                                                      \
    return (__builtin_convertvector(hi, W##3) << BITS) | __builtin_convertvector(lo, W##3);   \
  }                                                                                           \
  OVLC W##4 upsample(T##4 hi, U##4 lo) {                                                      \
    return (__builtin_convertvector(hi, W##4) << BITS) | __builtin_convertvector(lo, W##4);   \
  }                                                                                           \
  OVLC W##8 upsample(T##8 hi, U##8 lo) {                                                      \
    return (__builtin_convertvector(hi, W##8) << BITS) | __builtin_convertvector(lo, W##8);   \
  }                                                                                           \
  OVLC W##16 upsample(T##16 hi, U##16 lo) {                                                   \
    return (__builtin_convertvector(hi, W##16) << BITS) | __builtin_convertvector(lo, W##16); \
  }
UPSAMPLE(char, uchar, short, ushort, 8)
UPSAMPLE(uchar, uchar, ushort, ushort, 8)
UPSAMPLE(short, ushort, int, uint, 16)
UPSAMPLE(ushort, ushort, uint, uint, 16)
UPSAMPLE(int, uint, long, ulong, 32)
UPSAMPLE(uint, uint, ulong, ulong, 32)

// ---- Common functions (float, double) ----
#define COMMON_T(T, S)                                                                  \
  OVLC T clamp(T x, T lo, T hi) { return fmin(fmax(x, lo), hi); }                       \
  OVLC T degrees(T r) { return r * (T)(57.295779513082320876798154814105); }           \
  OVLC T radians(T d) { return d * (T)(0.017453292519943295769236907684886); }         \
  OVLC T max(T x, T y) { return fmax(x, y); }                                           \
  OVLC T min(T x, T y) { return fmin(x, y); }                                           \
  OVLC T mix(T x, T y, T a) { return x + (y - x) * a; }                                 \
  OVLC T step(T edge, T x) { return x < edge ? (T)(0) : (T)(1); }                       \
  OVLC T smoothstep(T e0, T e1, T x) {                                                  \
    T t = clamp((x - e0) / (e1 - e0), (T)(0), (T)(1));                                  \
    return t * t * ((T)(3) - (T)(2) * t);                                               \
  }                                                                                     \
  OVLC T sign(T x) {                                                                    \
    T r = x > (T)(0) ? (T)(1) : x < (T)(0) ? (T)(-1) : copysign((T)(0), x);             \
    return isnan(x) ? (T)(0) : r;                                                       \
  }
#define COMMON_SPLAT(T, S)                                                               \
  OVLC T clamp(T x, S lo, S hi) { return clamp(x, (T)(lo), (T)(hi)); }                   \
  OVLC T max(T x, S y) { return max(x, (T)(y)); }                                        \
  OVLC T min(T x, S y) { return min(x, (T)(y)); }                                        \
  OVLC T mix(T x, T y, S a) { return mix(x, y, (T)(a)); }                                \
  OVLC T step(S edge, T x) { return step((T)(edge), x); }                                \
  OVLC T smoothstep(S e0, S e1, T x) { return smoothstep((T)(e0), (T)(e1), x); }
#define COMMON_ALL(S)                                                                   \
  COMMON_T(S, S) COMMON_T(S##2, S) COMMON_T(S##3, S) COMMON_T(S##4, S) COMMON_T(S##8, S) \
  COMMON_T(S##16, S) COMMON_SPLAT(S##2, S) COMMON_SPLAT(S##3, S) COMMON_SPLAT(S##4, S)   \
  COMMON_SPLAT(S##8, S) COMMON_SPLAT(S##16, S)
COMMON_ALL(float)
COMMON_ALL(double)
