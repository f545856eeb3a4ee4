// vload/vstore (OpenCL C 3.0 section 6.15.11), including the half-precision loads (the stores
// with their rounding modes are in vstore_half.cl; vloadn/vstoren of half in half.cl). Loads and stores of N elements use vector types whose alignment is reduced to
// the element's (the spec only guarantees element alignment), so they stay single vector
// memory operations; 3-element forms touch exactly 3 elements.
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

UNALIGNED_TYPES(char) UNALIGNED_TYPES(uchar) UNALIGNED_TYPES(short) UNALIGNED_TYPES(ushort)
UNALIGNED_TYPES(int) UNALIGNED_TYPES(uint) UNALIGNED_TYPES(long) UNALIGNED_TYPES(ulong)
UNALIGNED_TYPES(float) UNALIGNED_TYPES(double) UNALIGNED_TYPES(half)

#define VLOAD_TYPES(AS, unused)                                                            \
  VLOAD_ALL(AS, char) VLOAD_ALL(AS, uchar) VLOAD_ALL(AS, short) VLOAD_ALL(AS, ushort)      \
  VLOAD_ALL(AS, int) VLOAD_ALL(AS, uint) VLOAD_ALL(AS, long) VLOAD_ALL(AS, ulong)          \
  VLOAD_ALL(AS, float) VLOAD_ALL(AS, double)
#define VSTORE_TYPES(AS, unused)                                                           \
  VSTORE_ALL(AS, char) VSTORE_ALL(AS, uchar) VSTORE_ALL(AS, short) VSTORE_ALL(AS, ushort)  \
  VSTORE_ALL(AS, int) VSTORE_ALL(AS, uint) VSTORE_ALL(AS, long) VSTORE_ALL(AS, ulong)      \
  VSTORE_ALL(AS, float) VSTORE_ALL(AS, double)
FOR_EACH_READABLE_AS(VLOAD_TYPES, 0)
FOR_EACH_WRITABLE_AS(VSTORE_TYPES, 0)

// ---- Half precision ----
// vload_half*: half -> float is exact.
#define VLOAD_HALF(AS, unused)                                                               \
  OVL float vload_half(size_t offset, const AS half* p) { return (float)p[offset]; }         \
  OVL float2 vload_half2(size_t offset, const AS half* p) {                                  \
    return __builtin_convertvector(*(const AS half2_u*)(p + offset * 2), float2);            \
  }                                                                                          \
  OVL float4 vload_half4(size_t offset, const AS half* p) {                                  \
    return __builtin_convertvector(*(const AS half4_u*)(p + offset * 4), float4);            \
  }                                                                                          \
  OVL float8 vload_half8(size_t offset, const AS half* p) {                                  \
    return __builtin_convertvector(*(const AS half8_u*)(p + offset * 8), float8);            \
  }                                                                                          \
  OVL float16 vload_half16(size_t offset, const AS half* p) {                                \
    return __builtin_convertvector(*(const AS half16_u*)(p + offset * 16), float16);         \
  }                                                                                          \
  OVL float3 vload_half3(size_t offset, const AS half* p) {                                  \
    const AS half* q = p + offset * 3;                                                       \
    return (float3)((float)q[0], (float)q[1], (float)q[2]);                                  \
  }                                                                                          \
  OVL float2 vloada_half2(size_t offset, const AS half* p) {                                 \
    return __builtin_convertvector(*(const AS half2*)(p + offset * 2), float2);              \
  }                                                                                          \
  OVL float3 vloada_half3(size_t offset, const AS half* p) {                                 \
    return __builtin_convertvector(*(const AS half4*)(p + offset * 4), float4).xyz;          \
  }                                                                                          \
  OVL float4 vloada_half4(size_t offset, const AS half* p) {                                 \
    return __builtin_convertvector(*(const AS half4*)(p + offset * 4), float4);              \
  }                                                                                          \
  OVL float8 vloada_half8(size_t offset, const AS half* p) {                                 \
    return __builtin_convertvector(*(const AS half8*)(p + offset * 8), float8);              \
  }                                                                                          \
  OVL float16 vloada_half16(size_t offset, const AS half* p) {                               \
    return __builtin_convertvector(*(const AS half16*)(p + offset * 16), float16);           \
  }
FOR_EACH_READABLE_AS(VLOAD_HALF, 0)
