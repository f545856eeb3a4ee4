// Software rounding of a double to half with an explicit rounding mode, from the exact double
// value (float and every integer of half's range convert to double exactly), for the vstore_half
// functions (vstore_half.cl).
#pragma once

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
    scaled = __builtin_ldexp(a, 10 - exponent);            // in [1024, 2048)
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

// float to half. NVPTX converts in hardware with each rounding mode (subnormals kept: no .ftz),
// as NVIDIA's own OpenCL does; the software path costs dozens of double operations per value.
static ushort half_bits_from_float(float x, int mode) {
#ifdef __NVPTX__
  if (x != x) return (__builtin_signbit(x) ? 0x8000 : 0) | 0x7e00;  // as the software path
  ushort bits;
  if (mode == ROUND_TZ)
    __asm__("cvt.rz.f16.f32 %0, %1;" : "=h"(bits) : "f"(x));
  else if (mode == ROUND_TP)
    __asm__("cvt.rp.f16.f32 %0, %1;" : "=h"(bits) : "f"(x));
  else if (mode == ROUND_TN)
    __asm__("cvt.rm.f16.f32 %0, %1;" : "=h"(bits) : "f"(x));
  else
    __asm__("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(x));
  return bits;
#else
  return half_bits((double)x, mode);
#endif
}
static ushort half_bits_from_double(double x, int mode) { return half_bits(x, mode); }
