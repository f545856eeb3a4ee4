// vstore_half* (OpenCL C 3.0 section 6.15.11): float and double to half with each rounding
// mode, computed in software from the exact double value (float sources on NVPTX: in hardware,
// half_rounding.h). Portable OpenCL C: the CPU library and the NVPTX one
// (compiler/nvptx/nvptx.cmake; libclc rounds doubles through float, which loses the rtp/rtn
// direction of tiny values) both use it.
#include "common.h"
#include "half_rounding.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

// Store variants for one source type (float or double) and one rounding mode.
#define VSTORE_HALF_MODE(AS, S, SUFFIX, MODE)                                                 \
  OVL void vstore_half##SUFFIX(S data, size_t offset, AS half* p) {                           \
    ((AS ushort*)p)[offset] = half_bits_from_##S(data, MODE);                                  \
  }                                                                                           \
  OVL void vstore_half2##SUFFIX(S##2 data, size_t offset, AS half* p) {                       \
    for (int i = 0; i < 2; ++i) ((AS ushort*)p)[offset * 2 + i] = half_bits_from_##S(data[i], MODE);   \
  }                                                                                           \
  OVL void vstore_half3##SUFFIX(S##3 data, size_t offset, AS half* p) {                       \
    for (int i = 0; i < 3; ++i) ((AS ushort*)p)[offset * 3 + i] = half_bits_from_##S(data[i], MODE);   \
  }                                                                                           \
  OVL void vstore_half4##SUFFIX(S##4 data, size_t offset, AS half* p) {                       \
    for (int i = 0; i < 4; ++i) ((AS ushort*)p)[offset * 4 + i] = half_bits_from_##S(data[i], MODE);   \
  }                                                                                           \
  OVL void vstore_half8##SUFFIX(S##8 data, size_t offset, AS half* p) {                       \
    for (int i = 0; i < 8; ++i) ((AS ushort*)p)[offset * 8 + i] = half_bits_from_##S(data[i], MODE);   \
  }                                                                                           \
  OVL void vstore_half16##SUFFIX(S##16 data, size_t offset, AS half* p) {                     \
    for (int i = 0; i < 16; ++i) ((AS ushort*)p)[offset * 16 + i] = half_bits_from_##S(data[i], MODE); \
  }                                                                                           \
  OVL void vstorea_half2##SUFFIX(S##2 data, size_t offset, AS half* p) {                      \
    for (int i = 0; i < 2; ++i) ((AS ushort*)p)[offset * 2 + i] = half_bits_from_##S(data[i], MODE);   \
  }                                                                                           \
  OVL void vstorea_half3##SUFFIX(S##3 data, size_t offset, AS half* p) {                      \
    for (int i = 0; i < 3; ++i) ((AS ushort*)p)[offset * 4 + i] = half_bits_from_##S(data[i], MODE);   \
  }                                                                                           \
  OVL void vstorea_half4##SUFFIX(S##4 data, size_t offset, AS half* p) {                      \
    for (int i = 0; i < 4; ++i) ((AS ushort*)p)[offset * 4 + i] = half_bits_from_##S(data[i], MODE);   \
  }                                                                                           \
  OVL void vstorea_half8##SUFFIX(S##8 data, size_t offset, AS half* p) {                      \
    for (int i = 0; i < 8; ++i) ((AS ushort*)p)[offset * 8 + i] = half_bits_from_##S(data[i], MODE);   \
  }                                                                                           \
  OVL void vstorea_half16##SUFFIX(S##16 data, size_t offset, AS half* p) {                    \
    for (int i = 0; i < 16; ++i) ((AS ushort*)p)[offset * 16 + i] = half_bits_from_##S(data[i], MODE); \
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
