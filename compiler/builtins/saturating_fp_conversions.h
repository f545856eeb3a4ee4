// convert_<integer>[n]_sat[_rte|_rtz|_rtp|_rtn](float|double[n]) for the GPU shims (NVPTX,
// AMDGPU), whose definitions win over libclc's. libclc clamps and then converts with the
// hardware's instruction, which leaves NaN to the hardware (INT_MIN for doubles on an H100);
// OpenCL C 3.0 section 6.4.3.3 wants 0. Rounded first, then compared in the source type against
// bounds that are exact there (the range's ends are 0 or powers of two).
#pragma once

#define SAT_FROM_FP_SCALAR(D, S, MODE, ROUND, LOW, HIGH_EXCLUSIVE, DMIN, DMAX) \
  OVLC D convert_##D##_sat##MODE(S x) {                                        \
    const S r = ROUND(x);                                                      \
    return r != r                     ? (D)0                                   \
           : r <= (S)(LOW)            ? (D)(DMIN)                              \
           : r >= (S)(HIGH_EXCLUSIVE) ? (D)(DMAX)                              \
                                      : (D)r;                                  \
  }

#define SAT_FROM_FP_VECTORS(D, S, MODE)                                             \
  OVLC D##2 convert_##D##2_sat##MODE(S##2 x) {                                      \
    return (D##2)(convert_##D##_sat##MODE(x.s0), convert_##D##_sat##MODE(x.s1));    \
  }                                                                                 \
  OVLC D##3 convert_##D##3_sat##MODE(S##3 x) {                                      \
    return (D##3)(convert_##D##_sat##MODE(x.s0), convert_##D##_sat##MODE(x.s1),     \
                  convert_##D##_sat##MODE(x.s2));                                   \
  }                                                                                 \
  OVLC D##4 convert_##D##4_sat##MODE(S##4 x) {                                      \
    return (D##4)(convert_##D##2_sat##MODE(x.lo), convert_##D##2_sat##MODE(x.hi));  \
  }                                                                                 \
  OVLC D##8 convert_##D##8_sat##MODE(S##8 x) {                                      \
    return (D##8)(convert_##D##4_sat##MODE(x.lo), convert_##D##4_sat##MODE(x.hi));  \
  }                                                                                 \
  OVLC D##16 convert_##D##16_sat##MODE(S##16 x) {                                   \
    return (D##16)(convert_##D##8_sat##MODE(x.lo), convert_##D##8_sat##MODE(x.hi)); \
  }

// Default saturating conversions round toward zero, like _rtz.
#define SAT_FROM_FP_MODES(D, S, LOW, HIGH_EXCLUSIVE, DMIN, DMAX)         \
  SAT_FROM_FP_SCALAR(D, S, , trunc, LOW, HIGH_EXCLUSIVE, DMIN, DMAX)     \
  SAT_FROM_FP_SCALAR(D, S, _rtz, trunc, LOW, HIGH_EXCLUSIVE, DMIN, DMAX) \
  SAT_FROM_FP_SCALAR(D, S, _rte, rint, LOW, HIGH_EXCLUSIVE, DMIN, DMAX)  \
  SAT_FROM_FP_SCALAR(D, S, _rtp, ceil, LOW, HIGH_EXCLUSIVE, DMIN, DMAX)  \
  SAT_FROM_FP_SCALAR(D, S, _rtn, floor, LOW, HIGH_EXCLUSIVE, DMIN, DMAX) \
  SAT_FROM_FP_VECTORS(D, S, )                                            \
  SAT_FROM_FP_VECTORS(D, S, _rtz)                                        \
  SAT_FROM_FP_VECTORS(D, S, _rte) SAT_FROM_FP_VECTORS(D, S, _rtp) SAT_FROM_FP_VECTORS(D, S, _rtn)

#define SAT_FROM_FP_TYPES(S)                                       \
  SAT_FROM_FP_MODES(char, S, -0x1p7, 0x1p7, CHAR_MIN, CHAR_MAX)    \
  SAT_FROM_FP_MODES(uchar, S, 0, 0x1p8, 0, UCHAR_MAX)              \
  SAT_FROM_FP_MODES(short, S, -0x1p15, 0x1p15, SHRT_MIN, SHRT_MAX) \
  SAT_FROM_FP_MODES(ushort, S, 0, 0x1p16, 0, USHRT_MAX)            \
  SAT_FROM_FP_MODES(int, S, -0x1p31, 0x1p31, INT_MIN, INT_MAX)     \
  SAT_FROM_FP_MODES(uint, S, 0, 0x1p32, 0, UINT_MAX)               \
  SAT_FROM_FP_MODES(long, S, -0x1p63, 0x1p63, LONG_MIN, LONG_MAX)  \
  SAT_FROM_FP_MODES(ulong, S, 0, 0x1p64, 0, ULONG_MAX)

SAT_FROM_FP_TYPES(float)
SAT_FROM_FP_TYPES(double)
