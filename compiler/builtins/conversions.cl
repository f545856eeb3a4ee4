// Conversions convert_<dst>[_sat][_rte|_rtz|_rtp|_rtn](src) (OpenCL C 3.0 section 6.4.3)
// for every pair of the ten arithmetic types at every width.
//
// Rules: integer destinations wrap by default and clamp with _sat (NaN -> 0); a floating-point
// source is rounded toward zero by default, else by the named mode, before conversion.
// Floating-point destinations round to nearest even by default; directed modes convert to
// nearest and then step one ulp when the result landed on the wrong side of the exact value
// (compared in a type where both are exact). Vector forms without a mode that changes the
// result use __builtin_convertvector (one vector instruction); the others are element-wise.
//
// The pair list at the end of this file was generated once (by a short script that enumerates
// the 100 type pairs); the macros above it hold all the logic.
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// ---- Helpers ----
static float next_up_f(float r) {
  if (r != r || r == (float)INFINITY) return r;
  if (r == 0.0f) return 0x1p-149f;
  int bits = as_int(r);
  return as_float(r > 0.0f ? bits + 1 : bits - 1);
}
static float next_down_f(float r) { return -next_up_f(-r); }
static double next_up_d(double r) {
  if (r != r || r == (double)INFINITY) return r;
  if (r == 0.0) return 0x1p-1074;
  long bits = as_long(r);
  return as_double(r > 0.0 ? bits + 1 : bits - 1);
}
static double next_down_d(double r) { return -next_up_d(-r); }

// Adjust a round-to-nearest result r for directed rounding, given the sign of (r - exact).
#define DIRECTED(T, SUFFIX)                                                      \
  static T directed_##T(T r, int cmp, int mode) {                                \
    if (cmp == 0) return r;                                                      \
    if (mode == 1) { /* toward zero */                                           \
      if (cmp > 0 && r > (T)0) return next_down_##SUFFIX(r);                     \
      if (cmp < 0 && r < (T)0) return next_up_##SUFFIX(r);                       \
      return r;                                                                  \
    }                                                                            \
    if (mode == 2) return cmp < 0 ? next_up_##SUFFIX(r) : r;  /* toward +inf */  \
    return cmp > 0 ? next_down_##SUFFIX(r) : r;               /* toward -inf */  \
  }
DIRECTED(float, f)
DIRECTED(double, d)

// Sign of (r - x) for a rounded result r of integer x; r is integral whenever inexact.
static int cmp_fp_long(double r, long x) {
  if (r >= 0x1p63) return 1;
  if (r < -0x1p63) return -1;
  long rl = (long)r;
  return rl > x ? 1 : rl < x ? -1 : 0;
}
static int cmp_fp_ulong(double r, ulong x) {
  if (r >= 0x1p64) return 1;
  ulong ru = (ulong)r;
  return ru > x ? 1 : ru < x ? -1 : 0;
}
static int cmp_double(double r, double x) { return r > x ? 1 : r < x ? -1 : 0; }

// mode: 0 nearest even, 1 toward zero, 2 toward +inf, 3 toward -inf.
#define MODE_rte 0
#define MODE_rtz 1
#define MODE_rtp 2
#define MODE_rtn 3

// ---- Scalar bodies by category ----
// Integer -> integer, plain: wraps; rounding modes change nothing.
#define II_PLAIN(D, S, SFX) OVLC D convert_##D##SFX(S x) { return (D)x; }
// Integer -> integer, saturating. Categories by whether the source or destination is ulong
// (whose range does not fit in long).
#define II_SAT_LL(D, S, SFX, DMIN, DMAX) \
  OVLC D convert_##D##_sat##SFX(S x) { long v = (long)x; return v < (long)(DMIN) ? (D)(DMIN) : v > (long)(DMAX) ? (D)(DMAX) : (D)v; }
#define II_SAT_TO_ULONG(D, S, SFX, DMIN, DMAX) \
  OVLC D convert_##D##_sat##SFX(S x) { return x < (S)0 ? (D)0 : (D)x; }
#define II_SAT_FROM_ULONG(D, S, SFX, DMIN, DMAX) \
  OVLC D convert_##D##_sat##SFX(S x) { return x > (ulong)(DMAX) ? (D)(DMAX) : (D)x; }
#define II_SAT_SAME(D, S, SFX, DMIN, DMAX) OVLC D convert_##D##_sat##SFX(S x) { return x; }

// Floating -> integer: round by mode, then convert (saturating or not).
#define ROUND_rte(x) __builtin_elementwise_rint(x)
#define ROUND_rtz(x) __builtin_elementwise_trunc(x)
#define ROUND_rtp(x) __builtin_elementwise_ceil(x)
#define ROUND_rtn(x) __builtin_elementwise_floor(x)
#define FI_PLAIN(D, S, SFX, ROUND) OVLC D convert_##D##SFX(S x) { return (D)ROUND(x); }
#define FI_SAT(D, S, SFX, ROUND, DMIN, DMAX)                      \
  OVLC D convert_##D##_sat##SFX(S x) {                            \
    if (x != x) return (D)0;                                      \
    S r = ROUND(x);                                               \
    if (r <= (S)(DMIN)) return (D)(DMIN);                         \
    if (r >= (S)(DMAX)) return (D)(DMAX);                         \
    return (D)r;                                                  \
  }
#define FI_ALL(D, S, DMIN, DMAX)                                             \
  FI_PLAIN(D, S, , ROUND_rtz) FI_PLAIN(D, S, _rte, ROUND_rte)                \
  FI_PLAIN(D, S, _rtz, ROUND_rtz) FI_PLAIN(D, S, _rtp, ROUND_rtp)            \
  FI_PLAIN(D, S, _rtn, ROUND_rtn)                                            \
  FI_SAT(D, S, , ROUND_rtz, DMIN, DMAX) FI_SAT(D, S, _rte, ROUND_rte, DMIN, DMAX) \
  FI_SAT(D, S, _rtz, ROUND_rtz, DMIN, DMAX) FI_SAT(D, S, _rtp, ROUND_rtp, DMIN, DMAX) \
  FI_SAT(D, S, _rtn, ROUND_rtn, DMIN, DMAX)
#define II_ALL(D, S, SATKIND, DMIN, DMAX)                                               \
  II_PLAIN(D, S, ) II_PLAIN(D, S, _rte) II_PLAIN(D, S, _rtz) II_PLAIN(D, S, _rtp)       \
  II_PLAIN(D, S, _rtn)                                                                  \
  SATKIND(D, S, , DMIN, DMAX) SATKIND(D, S, _rte, DMIN, DMAX)                           \
  SATKIND(D, S, _rtz, DMIN, DMAX) SATKIND(D, S, _rtp, DMIN, DMAX)                       \
  SATKIND(D, S, _rtn, DMIN, DMAX)

// Any -> floating, exact (every source value is representable).
#define XF_EXACT(D, S)                                                                   \
  OVLC D convert_##D(S x) { return (D)x; }                                               \
  OVLC D convert_##D##_rte(S x) { return (D)x; }                                         \
  OVLC D convert_##D##_rtz(S x) { return (D)x; }                                         \
  OVLC D convert_##D##_rtp(S x) { return (D)x; }                                         \
  OVLC D convert_##D##_rtn(S x) { return (D)x; }
// Any -> floating, inexact: CMP(r, x) gives the sign of (r - x).
#define XF_DIRECTED(D, S, CMP)                                                           \
  OVLC D convert_##D(S x) { return (D)x; }                                               \
  OVLC D convert_##D##_rte(S x) { return (D)x; }                                         \
  OVLC D convert_##D##_rtz(S x) { D r = (D)x; return directed_##D(r, CMP(r, x), 1); }    \
  OVLC D convert_##D##_rtp(S x) { D r = (D)x; return directed_##D(r, CMP(r, x), 2); }    \
  OVLC D convert_##D##_rtn(S x) { D r = (D)x; return directed_##D(r, CMP(r, x), 3); }
#define CMP_VIA_DOUBLE(r, x) cmp_double((double)(r), (double)(x))
#define CMP_VIA_LONG(r, x) cmp_fp_long((double)(r), (long)(x))
#define CMP_VIA_ULONG(r, x) cmp_fp_ulong((double)(r), (ulong)(x))
// double -> float: NaN compares as equal (no adjustment).
#define CMP_DOUBLE_NAN(r, x) ((x) != (x) ? 0 : cmp_double((double)(r), (double)(x)))

// ---- Vector forms ----
#define VEC_CONVERT_FAST(D, S, SFX, N) \
  OVLC D##N convert_##D##N##SFX(S##N x) { return __builtin_convertvector(x, D##N); }
#define VEC_CONVERT_EACH(D, S, SFX, N)                                          \
  OVLC D##N convert_##D##N##SFX(S##N x) {                                       \
    D##N r;                                                                     \
    for (int i = 0; i < N; ++i) r[i] = convert_##D##SFX(x[i]);                  \
    return r;                                                                   \
  }
#define VEC_WIDTHS(M, D, S, SFX) M(D, S, SFX, 2) M(D, S, SFX, 3) M(D, S, SFX, 4) \
  M(D, S, SFX, 8) M(D, S, SFX, 16)
// fast: which suffixes equal the default conversion (so __builtin_convertvector is exact).
#define VEC_II(D, S)                                                                        \
  VEC_WIDTHS(VEC_CONVERT_FAST, D, S, ) VEC_WIDTHS(VEC_CONVERT_FAST, D, S, _rte)              \
  VEC_WIDTHS(VEC_CONVERT_FAST, D, S, _rtz) VEC_WIDTHS(VEC_CONVERT_FAST, D, S, _rtp)          \
  VEC_WIDTHS(VEC_CONVERT_FAST, D, S, _rtn) VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _sat)          \
  VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _sat_rte) VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _sat_rtz)  \
  VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _sat_rtp) VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _sat_rtn)
#define VEC_FI(D, S)                                                                        \
  VEC_WIDTHS(VEC_CONVERT_FAST, D, S, ) VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _rte)              \
  VEC_WIDTHS(VEC_CONVERT_FAST, D, S, _rtz) VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _rtp)          \
  VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _rtn) VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _sat)          \
  VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _sat_rte) VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _sat_rtz)  \
  VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _sat_rtp) VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _sat_rtn)
#define VEC_XF_EXACT(D, S)                                                                  \
  VEC_WIDTHS(VEC_CONVERT_FAST, D, S, ) VEC_WIDTHS(VEC_CONVERT_FAST, D, S, _rte)              \
  VEC_WIDTHS(VEC_CONVERT_FAST, D, S, _rtz) VEC_WIDTHS(VEC_CONVERT_FAST, D, S, _rtp)          \
  VEC_WIDTHS(VEC_CONVERT_FAST, D, S, _rtn)
#define VEC_XF_DIRECTED(D, S)                                                               \
  VEC_WIDTHS(VEC_CONVERT_FAST, D, S, ) VEC_WIDTHS(VEC_CONVERT_FAST, D, S, _rte)              \
  VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _rtz) VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _rtp)          \
  VEC_WIDTHS(VEC_CONVERT_EACH, D, S, _rtn)

// ---- The 100 (destination, source) pairs ----

II_ALL(char, char, II_SAT_SAME, CHAR_MIN, CHAR_MAX) VEC_II(char, char)
II_ALL(char, uchar, II_SAT_LL, CHAR_MIN, CHAR_MAX) VEC_II(char, uchar)
II_ALL(char, short, II_SAT_LL, CHAR_MIN, CHAR_MAX) VEC_II(char, short)
II_ALL(char, ushort, II_SAT_LL, CHAR_MIN, CHAR_MAX) VEC_II(char, ushort)
II_ALL(char, int, II_SAT_LL, CHAR_MIN, CHAR_MAX) VEC_II(char, int)
II_ALL(char, uint, II_SAT_LL, CHAR_MIN, CHAR_MAX) VEC_II(char, uint)
II_ALL(char, long, II_SAT_LL, CHAR_MIN, CHAR_MAX) VEC_II(char, long)
II_ALL(char, ulong, II_SAT_FROM_ULONG, CHAR_MIN, CHAR_MAX) VEC_II(char, ulong)
FI_ALL(char, float, CHAR_MIN, CHAR_MAX) VEC_FI(char, float)
FI_ALL(char, double, CHAR_MIN, CHAR_MAX) VEC_FI(char, double)
II_ALL(uchar, char, II_SAT_LL, 0, UCHAR_MAX) VEC_II(uchar, char)
II_ALL(uchar, uchar, II_SAT_SAME, 0, UCHAR_MAX) VEC_II(uchar, uchar)
II_ALL(uchar, short, II_SAT_LL, 0, UCHAR_MAX) VEC_II(uchar, short)
II_ALL(uchar, ushort, II_SAT_LL, 0, UCHAR_MAX) VEC_II(uchar, ushort)
II_ALL(uchar, int, II_SAT_LL, 0, UCHAR_MAX) VEC_II(uchar, int)
II_ALL(uchar, uint, II_SAT_LL, 0, UCHAR_MAX) VEC_II(uchar, uint)
II_ALL(uchar, long, II_SAT_LL, 0, UCHAR_MAX) VEC_II(uchar, long)
II_ALL(uchar, ulong, II_SAT_FROM_ULONG, 0, UCHAR_MAX) VEC_II(uchar, ulong)
FI_ALL(uchar, float, 0, UCHAR_MAX) VEC_FI(uchar, float)
FI_ALL(uchar, double, 0, UCHAR_MAX) VEC_FI(uchar, double)
II_ALL(short, char, II_SAT_LL, SHRT_MIN, SHRT_MAX) VEC_II(short, char)
II_ALL(short, uchar, II_SAT_LL, SHRT_MIN, SHRT_MAX) VEC_II(short, uchar)
II_ALL(short, short, II_SAT_SAME, SHRT_MIN, SHRT_MAX) VEC_II(short, short)
II_ALL(short, ushort, II_SAT_LL, SHRT_MIN, SHRT_MAX) VEC_II(short, ushort)
II_ALL(short, int, II_SAT_LL, SHRT_MIN, SHRT_MAX) VEC_II(short, int)
II_ALL(short, uint, II_SAT_LL, SHRT_MIN, SHRT_MAX) VEC_II(short, uint)
II_ALL(short, long, II_SAT_LL, SHRT_MIN, SHRT_MAX) VEC_II(short, long)
II_ALL(short, ulong, II_SAT_FROM_ULONG, SHRT_MIN, SHRT_MAX) VEC_II(short, ulong)
FI_ALL(short, float, SHRT_MIN, SHRT_MAX) VEC_FI(short, float)
FI_ALL(short, double, SHRT_MIN, SHRT_MAX) VEC_FI(short, double)
II_ALL(ushort, char, II_SAT_LL, 0, USHRT_MAX) VEC_II(ushort, char)
II_ALL(ushort, uchar, II_SAT_LL, 0, USHRT_MAX) VEC_II(ushort, uchar)
II_ALL(ushort, short, II_SAT_LL, 0, USHRT_MAX) VEC_II(ushort, short)
II_ALL(ushort, ushort, II_SAT_SAME, 0, USHRT_MAX) VEC_II(ushort, ushort)
II_ALL(ushort, int, II_SAT_LL, 0, USHRT_MAX) VEC_II(ushort, int)
II_ALL(ushort, uint, II_SAT_LL, 0, USHRT_MAX) VEC_II(ushort, uint)
II_ALL(ushort, long, II_SAT_LL, 0, USHRT_MAX) VEC_II(ushort, long)
II_ALL(ushort, ulong, II_SAT_FROM_ULONG, 0, USHRT_MAX) VEC_II(ushort, ulong)
FI_ALL(ushort, float, 0, USHRT_MAX) VEC_FI(ushort, float)
FI_ALL(ushort, double, 0, USHRT_MAX) VEC_FI(ushort, double)
II_ALL(int, char, II_SAT_LL, INT_MIN, INT_MAX) VEC_II(int, char)
II_ALL(int, uchar, II_SAT_LL, INT_MIN, INT_MAX) VEC_II(int, uchar)
II_ALL(int, short, II_SAT_LL, INT_MIN, INT_MAX) VEC_II(int, short)
II_ALL(int, ushort, II_SAT_LL, INT_MIN, INT_MAX) VEC_II(int, ushort)
II_ALL(int, int, II_SAT_SAME, INT_MIN, INT_MAX) VEC_II(int, int)
II_ALL(int, uint, II_SAT_LL, INT_MIN, INT_MAX) VEC_II(int, uint)
II_ALL(int, long, II_SAT_LL, INT_MIN, INT_MAX) VEC_II(int, long)
II_ALL(int, ulong, II_SAT_FROM_ULONG, INT_MIN, INT_MAX) VEC_II(int, ulong)
FI_ALL(int, float, INT_MIN, INT_MAX) VEC_FI(int, float)
FI_ALL(int, double, INT_MIN, INT_MAX) VEC_FI(int, double)
II_ALL(uint, char, II_SAT_LL, 0, UINT_MAX) VEC_II(uint, char)
II_ALL(uint, uchar, II_SAT_LL, 0, UINT_MAX) VEC_II(uint, uchar)
II_ALL(uint, short, II_SAT_LL, 0, UINT_MAX) VEC_II(uint, short)
II_ALL(uint, ushort, II_SAT_LL, 0, UINT_MAX) VEC_II(uint, ushort)
II_ALL(uint, int, II_SAT_LL, 0, UINT_MAX) VEC_II(uint, int)
II_ALL(uint, uint, II_SAT_SAME, 0, UINT_MAX) VEC_II(uint, uint)
II_ALL(uint, long, II_SAT_LL, 0, UINT_MAX) VEC_II(uint, long)
II_ALL(uint, ulong, II_SAT_FROM_ULONG, 0, UINT_MAX) VEC_II(uint, ulong)
FI_ALL(uint, float, 0, UINT_MAX) VEC_FI(uint, float)
FI_ALL(uint, double, 0, UINT_MAX) VEC_FI(uint, double)
II_ALL(long, char, II_SAT_LL, LONG_MIN, LONG_MAX) VEC_II(long, char)
II_ALL(long, uchar, II_SAT_LL, LONG_MIN, LONG_MAX) VEC_II(long, uchar)
II_ALL(long, short, II_SAT_LL, LONG_MIN, LONG_MAX) VEC_II(long, short)
II_ALL(long, ushort, II_SAT_LL, LONG_MIN, LONG_MAX) VEC_II(long, ushort)
II_ALL(long, int, II_SAT_LL, LONG_MIN, LONG_MAX) VEC_II(long, int)
II_ALL(long, uint, II_SAT_LL, LONG_MIN, LONG_MAX) VEC_II(long, uint)
II_ALL(long, long, II_SAT_SAME, LONG_MIN, LONG_MAX) VEC_II(long, long)
II_ALL(long, ulong, II_SAT_FROM_ULONG, LONG_MIN, LONG_MAX) VEC_II(long, ulong)
FI_ALL(long, float, LONG_MIN, LONG_MAX) VEC_FI(long, float)
FI_ALL(long, double, LONG_MIN, LONG_MAX) VEC_FI(long, double)
II_ALL(ulong, char, II_SAT_TO_ULONG, 0, ULONG_MAX) VEC_II(ulong, char)
II_ALL(ulong, uchar, II_SAT_TO_ULONG, 0, ULONG_MAX) VEC_II(ulong, uchar)
II_ALL(ulong, short, II_SAT_TO_ULONG, 0, ULONG_MAX) VEC_II(ulong, short)
II_ALL(ulong, ushort, II_SAT_TO_ULONG, 0, ULONG_MAX) VEC_II(ulong, ushort)
II_ALL(ulong, int, II_SAT_TO_ULONG, 0, ULONG_MAX) VEC_II(ulong, int)
II_ALL(ulong, uint, II_SAT_TO_ULONG, 0, ULONG_MAX) VEC_II(ulong, uint)
II_ALL(ulong, long, II_SAT_TO_ULONG, 0, ULONG_MAX) VEC_II(ulong, long)
II_ALL(ulong, ulong, II_SAT_SAME, 0, ULONG_MAX) VEC_II(ulong, ulong)
FI_ALL(ulong, float, 0, ULONG_MAX) VEC_FI(ulong, float)
FI_ALL(ulong, double, 0, ULONG_MAX) VEC_FI(ulong, double)
XF_EXACT(float, char) VEC_XF_EXACT(float, char)
XF_EXACT(float, uchar) VEC_XF_EXACT(float, uchar)
XF_EXACT(float, short) VEC_XF_EXACT(float, short)
XF_EXACT(float, ushort) VEC_XF_EXACT(float, ushort)
XF_DIRECTED(float, int, CMP_VIA_DOUBLE) VEC_XF_DIRECTED(float, int)
XF_DIRECTED(float, uint, CMP_VIA_DOUBLE) VEC_XF_DIRECTED(float, uint)
XF_DIRECTED(float, long, CMP_VIA_LONG) VEC_XF_DIRECTED(float, long)
XF_DIRECTED(float, ulong, CMP_VIA_ULONG) VEC_XF_DIRECTED(float, ulong)
XF_EXACT(float, float) VEC_XF_EXACT(float, float)
XF_DIRECTED(float, double, CMP_DOUBLE_NAN) VEC_XF_DIRECTED(float, double)
XF_EXACT(double, char) VEC_XF_EXACT(double, char)
XF_EXACT(double, uchar) VEC_XF_EXACT(double, uchar)
XF_EXACT(double, short) VEC_XF_EXACT(double, short)
XF_EXACT(double, ushort) VEC_XF_EXACT(double, ushort)
XF_EXACT(double, int) VEC_XF_EXACT(double, int)
XF_EXACT(double, uint) VEC_XF_EXACT(double, uint)
XF_DIRECTED(double, long, CMP_VIA_LONG) VEC_XF_DIRECTED(double, long)
XF_DIRECTED(double, ulong, CMP_VIA_ULONG) VEC_XF_DIRECTED(double, ulong)
XF_EXACT(double, float) VEC_XF_EXACT(double, float)
XF_EXACT(double, double) VEC_XF_EXACT(double, double)
