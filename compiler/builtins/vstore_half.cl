// vstore_half* (OpenCL C 3.0 section 6.15.11): float and double to half with each rounding
// mode, computed in software from the exact double value. Portable OpenCL C: the CPU library
// and the NVPTX one (compiler/nvptx/nvptx.cmake; libclc rounds doubles through float, which
// loses the rtp/rtn direction of tiny values) both use it.
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

// Software float/double -> half with an explicit rounding mode, from the exact double value.
enum { ROUND_TE, ROUND_TZ, ROUND_TP, ROUND_TN };
static ushort half_bits(double x, int mode) {
  ushort sign = __builtin_signbit(x) ? 0x8000 : 0;
  if (x != x) return sign | 0x7e00;
  double a = __builtin_fabs(x);
  // Magnitude goes up when rounding away from zero: toward +inf for positive values, toward
  // -inf for negative ones.
  bool up_dir = (mode == ROUND_TP && !sign) || (mode == ROUND_TN && sign);
  if (a == (double)INFINITY) return sign | 0x7c00;
  int exponent;
  double scaled;
  if (a < 0x1p-14) {
    exponent = -15;  // subnormal: units of 2^-24
    scaled = a * 0x1p24;
  } else {
    exponent = (int)((as_ulong(a) >> 52) & 0x7ff) - 1023;  // a is a normal double here
    scaled = __builtin_ldexp(a, 10 - exponent);  // in [1024, 2048)
  }
  double whole = __builtin_floor(scaled);
  double fraction = scaled - whole;
  uint m = (uint)whole;
  if (fraction > 0.0) {
    if (mode == ROUND_TE) {
      if (fraction > 0.5 || (fraction == 0.5 && (m & 1))) ++m;
    } else if (up_dir) {
      ++m;
    }
  }
  if (exponent == -15) return sign | (ushort)m;  // m == 1024 is the smallest normal: same bits
  if (m == 2048) {
    m = 1024;
    ++exponent;
  }
  if (exponent > 15) {
    // Overflow: to infinity when rounding to nearest or away from zero, else the largest half.
    return sign | ((mode == ROUND_TE || up_dir) ? 0x7c00 : 0x7bff);
  }
  return sign | (ushort)((exponent + 15) << 10) | (ushort)(m - 1024);
}

// Store variants for one source type (float or double) and one rounding mode.
#define VSTORE_HALF_MODE(AS, S, SUFFIX, MODE)                                                 \
  OVL void vstore_half##SUFFIX(S data, size_t offset, AS half* p) {                           \
    ((AS ushort*)p)[offset] = half_bits((double)data, MODE);                                  \
  }                                                                                           \
  OVL void vstore_half2##SUFFIX(S##2 data, size_t offset, AS half* p) {                       \
    for (int i = 0; i < 2; ++i) ((AS ushort*)p)[offset * 2 + i] = half_bits(data[i], MODE);   \
  }                                                                                           \
  OVL void vstore_half3##SUFFIX(S##3 data, size_t offset, AS half* p) {                       \
    for (int i = 0; i < 3; ++i) ((AS ushort*)p)[offset * 3 + i] = half_bits(data[i], MODE);   \
  }                                                                                           \
  OVL void vstore_half4##SUFFIX(S##4 data, size_t offset, AS half* p) {                       \
    for (int i = 0; i < 4; ++i) ((AS ushort*)p)[offset * 4 + i] = half_bits(data[i], MODE);   \
  }                                                                                           \
  OVL void vstore_half8##SUFFIX(S##8 data, size_t offset, AS half* p) {                       \
    for (int i = 0; i < 8; ++i) ((AS ushort*)p)[offset * 8 + i] = half_bits(data[i], MODE);   \
  }                                                                                           \
  OVL void vstore_half16##SUFFIX(S##16 data, size_t offset, AS half* p) {                     \
    for (int i = 0; i < 16; ++i) ((AS ushort*)p)[offset * 16 + i] = half_bits(data[i], MODE); \
  }                                                                                           \
  OVL void vstorea_half2##SUFFIX(S##2 data, size_t offset, AS half* p) {                      \
    for (int i = 0; i < 2; ++i) ((AS ushort*)p)[offset * 2 + i] = half_bits(data[i], MODE);   \
  }                                                                                           \
  OVL void vstorea_half3##SUFFIX(S##3 data, size_t offset, AS half* p) {                      \
    for (int i = 0; i < 3; ++i) ((AS ushort*)p)[offset * 4 + i] = half_bits(data[i], MODE);   \
  }                                                                                           \
  OVL void vstorea_half4##SUFFIX(S##4 data, size_t offset, AS half* p) {                      \
    for (int i = 0; i < 4; ++i) ((AS ushort*)p)[offset * 4 + i] = half_bits(data[i], MODE);   \
  }                                                                                           \
  OVL void vstorea_half8##SUFFIX(S##8 data, size_t offset, AS half* p) {                      \
    for (int i = 0; i < 8; ++i) ((AS ushort*)p)[offset * 8 + i] = half_bits(data[i], MODE);   \
  }                                                                                           \
  OVL void vstorea_half16##SUFFIX(S##16 data, size_t offset, AS half* p) {                    \
    for (int i = 0; i < 16; ++i) ((AS ushort*)p)[offset * 16 + i] = half_bits(data[i], MODE); \
  }
#define VSTORE_HALF_AS(AS, S)                        \
  VSTORE_HALF_MODE(AS, S, , ROUND_TE)                \
  VSTORE_HALF_MODE(AS, S, _rte, ROUND_TE)            \
  VSTORE_HALF_MODE(AS, S, _rtz, ROUND_TZ)            \
  VSTORE_HALF_MODE(AS, S, _rtp, ROUND_TP)            \
  VSTORE_HALF_MODE(AS, S, _rtn, ROUND_TN)
#define VSTORE_HALF_BOTH(AS, unused) VSTORE_HALF_AS(AS, float) VSTORE_HALF_AS(AS, double)
#ifdef __NVPTX__
// Private and generic pointers mangle alike on NVPTX: the generic overload serves both.
VSTORE_HALF_BOTH(__global, 0)
VSTORE_HALF_BOTH(__local, 0)
VSTORE_HALF_BOTH(__generic, 0)
#else
FOR_EACH_WRITABLE_AS(VSTORE_HALF_BOTH, 0)
#endif
