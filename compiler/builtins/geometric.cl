// Geometric builtins (OpenCL C 3.0 section 6.15.5) for float/double, scalars and 2-4 wide.
// length/distance/normalize rescale when the plain dot product would overflow or underflow,
// as the conformance tests expect.
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

OVLC float4 cross(float4 a, float4 b) {
  return (float4)(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x, 0.0f);
}
OVLC float3 cross(float3 a, float3 b) {
  return (float3)(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
OVLC double4 cross(double4 a, double4 b) {
  return (double4)(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x, 0.0);
}
OVLC double3 cross(double3 a, double3 b) {
  return (double3)(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

#define DOT_SCALAR(S) OVLC S dot(S a, S b) { return a * b; }
#define DOT_VECTOR(S, V, N) \
  OVLC S dot(V a, V b) { \
    V p = a * b; \
    S sum = p.s0; \
    for (int i = 1; i < N; ++i) sum += p[i]; \
    return sum; \
  }
DOT_SCALAR(float) DOT_VECTOR(float, float2, 2) DOT_VECTOR(float, float3, 3)
DOT_VECTOR(float, float4, 4)
DOT_SCALAR(double) DOT_VECTOR(double, double2, 2) DOT_VECTOR(double, double3, 3)
DOT_VECTOR(double, double4, 4)

// Largest |element|, for rescaling.
#define MAXABS_SCALAR(S) static S maxabs_##S(S v) { return __builtin_elementwise_abs(v); }
#define MAXABS_VECTOR(S, V) \
  static S maxabs_##V(V v) { return __builtin_reduce_max(__builtin_elementwise_abs(v)); }
MAXABS_SCALAR(float) MAXABS_VECTOR(float, float2) MAXABS_VECTOR(float, float3)
MAXABS_VECTOR(float, float4)
MAXABS_SCALAR(double) MAXABS_VECTOR(double, double2) MAXABS_VECTOR(double, double3)
MAXABS_VECTOR(double, double4)

#define GEOMETRIC(S, V, TINY, HUGE)                                                   \
  OVLC S length(V p) {                                                                \
    S sum = dot(p, p);                                                                \
    if (sum < (S)(TINY) || sum > (S)(HUGE)) {                                         \
      S m = maxabs_##V(p);                                                            \
      if (m == (S)(0) || isinf(m) || isnan(m)) return isnan(sum) ? sum : m;           \
      V q = p / m;                                                                    \
      return m * __builtin_elementwise_sqrt(dot(q, q));                               \
    }                                                                                 \
    return __builtin_elementwise_sqrt(sum);                                           \
  }                                                                                   \
  OVLC S distance(V a, V b) { return length(a - b); }                                 \
  OVLC V normalize(V p) {                                                             \
    S m = maxabs_##V(p);                                                              \
    if (m == (S)(0)) return p;                                                        \
    if (isinf(m)) {                                                                   \
      p = __builtin_elementwise_copysign(                                             \
          isinf(p) ? (V)(1) : (V)(0), p);                                             \
      m = (S)(1);                                                                     \
    }                                                                                 \
    V q = p / m;                                                                      \
    return q / __builtin_elementwise_sqrt(dot(q, q));                                 \
  }                                                                                   \
  OVLC S fast_length(V p) { return __builtin_elementwise_sqrt(dot(p, p)); }           \
  OVLC S fast_distance(V a, V b) { return fast_length(a - b); }                       \
  OVLC V fast_normalize(V p) {                                                        \
    S sum = dot(p, p);                                                                \
    return sum == (S)(0) ? p : p / __builtin_elementwise_sqrt(sum);                   \
  }
GEOMETRIC(float, float, 0x1p-100f, 0x1p100f)
GEOMETRIC(float, float2, 0x1p-100f, 0x1p100f)
GEOMETRIC(float, float3, 0x1p-100f, 0x1p100f)
GEOMETRIC(float, float4, 0x1p-100f, 0x1p100f)
GEOMETRIC(double, double, 0x1p-900, 0x1p900)
GEOMETRIC(double, double2, 0x1p-900, 0x1p900)
GEOMETRIC(double, double3, 0x1p-900, 0x1p900)
GEOMETRIC(double, double4, 0x1p-900, 0x1p900)
