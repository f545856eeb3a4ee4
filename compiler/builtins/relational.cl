// Relational builtins (OpenCL C 3.0 section 6.15.6). Scalars return int 1/0, vectors return
// -1/0 per element in the signed integer type of the element's width: exactly what OpenCL C's
// own comparison operators give, so the bodies are the operators.
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define REL_T(T, R, I)                                                                 \
  OVLC R isequal(T x, T y) { return x == y; }                                          \
  OVLC R isnotequal(T x, T y) { return x != y; }                                       \
  OVLC R isgreater(T x, T y) { return x > y; }                                         \
  OVLC R isgreaterequal(T x, T y) { return x >= y; }                                   \
  OVLC R isless(T x, T y) { return x < y; }                                            \
  OVLC R islessequal(T x, T y) { return x <= y; }                                      \
  OVLC R islessgreater(T x, T y) { return (x < y) || (x > y); }                        \
  OVLC R isordered(T x, T y) { return (x == x) && (y == y); }                          \
  OVLC R isunordered(T x, T y) { return (x != x) || (y != y); }                        \
  OVLC R isnan(T x) { return x != x; }                                                 \
  OVLC R isinf(T x) { return __builtin_elementwise_abs(x) == (T)(INFINITY); }          \
  OVLC R isfinite(T x) { return __builtin_elementwise_abs(x) < (T)(INFINITY); }        \
  OVLC R signbit(T x) { return __builtin_astype(x, I) < (I)(0); }

// Scalar and vector: R is the comparison result type, I the same-size integer for signbit.
REL_T(float, int, int)
REL_T(float2, int2, int2)
REL_T(float3, int3, int3)
REL_T(float4, int4, int4)
REL_T(float8, int8, int8)
REL_T(float16, int16, int16)
REL_T(double, int, long)
REL_T(double2, long2, long2)
REL_T(double3, long3, long3)
REL_T(double4, long4, long4)
REL_T(double8, long8, long8)
REL_T(double16, long16, long16)

#define ISNORMAL(T, R, MIN)                                                     \
  OVLC R isnormal(T x) {                                                        \
    T a = __builtin_elementwise_abs(x);                                         \
    return (a >= (T)(MIN)) && (a < (T)(INFINITY));                              \
  }
ISNORMAL(float, int, FLT_MIN)
ISNORMAL(float2, int2, FLT_MIN)
ISNORMAL(float3, int3, FLT_MIN)
ISNORMAL(float4, int4, FLT_MIN)
ISNORMAL(float8, int8, FLT_MIN)
ISNORMAL(float16, int16, FLT_MIN)
ISNORMAL(double, int, DBL_MIN)
ISNORMAL(double2, long2, DBL_MIN)
ISNORMAL(double3, long3, DBL_MIN)
ISNORMAL(double4, long4, DBL_MIN)
ISNORMAL(double8, long8, DBL_MIN)
ISNORMAL(double16, long16, DBL_MIN)

// any/all look at the most significant bit of each element.
#define ANY_ALL_SCALAR(T) \
  OVLC int any(T x) { return x < 0; } \
  OVLC int all(T x) { return x < 0; }
#define ANY_ALL_VECTOR(T) \
  OVLC int any(T x) { return __builtin_reduce_or(x) < 0; } \
  OVLC int all(T x) { return __builtin_reduce_and(x) < 0; }
#define ANY_ALL(S) ANY_ALL_SCALAR(S) ANY_ALL_VECTOR(S##2) ANY_ALL_VECTOR(S##3) \
  ANY_ALL_VECTOR(S##4) ANY_ALL_VECTOR(S##8) ANY_ALL_VECTOR(S##16)
ANY_ALL(char) ANY_ALL(short) ANY_ALL(int) ANY_ALL(long)

// bitselect: each bit from b where c has a 1, else from a.
#define BITSELECT_INT(T) OVLC T bitselect(T a, T b, T c) { return (a & ~c) | (b & c); }
#define BITSELECT_FP(T, I)                                                                  \
  OVLC T bitselect(T a, T b, T c) {                                                         \
    I ia = __builtin_astype(a, I), ib = __builtin_astype(b, I), ic = __builtin_astype(c, I); \
    return __builtin_astype((ia & ~ic) | (ib & ic), T);                                     \
  }
ALL_WIDTHS(BITSELECT_INT, char) ALL_WIDTHS(BITSELECT_INT, uchar)
ALL_WIDTHS(BITSELECT_INT, short) ALL_WIDTHS(BITSELECT_INT, ushort)
ALL_WIDTHS(BITSELECT_INT, int) ALL_WIDTHS(BITSELECT_INT, uint)
ALL_WIDTHS(BITSELECT_INT, long) ALL_WIDTHS(BITSELECT_INT, ulong)
BITSELECT_FP(float, int) BITSELECT_FP(float2, int2) BITSELECT_FP(float3, int3)
BITSELECT_FP(float4, int4) BITSELECT_FP(float8, int8) BITSELECT_FP(float16, int16)
BITSELECT_FP(double, long) BITSELECT_FP(double2, long2) BITSELECT_FP(double3, long3)
BITSELECT_FP(double4, long4) BITSELECT_FP(double8, long8) BITSELECT_FP(double16, long16)

// select(a, b, c): scalars pick b when c != 0; vectors pick b where c's element MSB is set.
// C is the signed mask type, UC the unsigned one (both accepted).
#define SELECT_SCALAR(T, C, UC)                                 \
  OVLC T select(T a, T b, C c) { return c ? b : a; }            \
  OVLC T select(T a, T b, UC c) { return c ? b : a; }
#define SELECT_VECTOR(T, C, UC)                                                 \
  OVLC T select(T a, T b, C c) { return (c < (C)(0)) ? b : a; }                 \
  OVLC T select(T a, T b, UC c) { return (__builtin_astype(c, C) < (C)(0)) ? b : a; }
#define SELECT_ALL(T, C, UC)                                                    \
  SELECT_SCALAR(T, C, UC) SELECT_VECTOR(T##2, C##2, UC##2)                      \
  SELECT_VECTOR(T##3, C##3, UC##3) SELECT_VECTOR(T##4, C##4, UC##4)             \
  SELECT_VECTOR(T##8, C##8, UC##8) SELECT_VECTOR(T##16, C##16, UC##16)
SELECT_ALL(char, char, uchar) SELECT_ALL(uchar, char, uchar)
SELECT_ALL(short, short, ushort) SELECT_ALL(ushort, short, ushort)
SELECT_ALL(int, int, uint) SELECT_ALL(uint, int, uint)
SELECT_ALL(long, long, ulong) SELECT_ALL(ulong, long, ulong)
SELECT_ALL(float, int, uint) SELECT_ALL(double, long, ulong)
