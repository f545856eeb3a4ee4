// Miscellaneous vector builtins (OpenCL C 3.0 section 6.15.13): shuffle and shuffle2 for every
// gentypen x ugentypem pair, n and m in {2, 4, 8, 16} (3-component vectors are not allowed).
//
// The mask is a run-time value, so each result element is a subscripted read of the input.
// Only the low log2(n) bits of a mask element count (log2(2n) for shuffle2): the index modulo
// n (2n), as the spec requires. After inlining, constant masks fold into one shufflevector.
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#define SHUFFLE_NM(T, U, N, M)                                                    \
  OVLC T##M shuffle(T##N x, U##M mask) {                                          \
    T##M result;                                                                  \
    for (int i = 0; i < M; ++i) result[i] = x[mask[i] & (U)(N - 1)];             \
    return result;                                                                \
  }                                                                               \
  OVLC T##M shuffle2(T##N x, T##N y, U##M mask) {                                 \
    T##M result;                                                                  \
    for (int i = 0; i < M; ++i) {                                                 \
      const U index = mask[i] & (U)(N - 1);                                       \
      const T from_x = x[index], from_y = y[index];                              \
      result[i] = (mask[i] & (U)N) ? from_y : from_x;                             \
    }                                                                             \
    return result;                                                                \
  }

#define SHUFFLE_N(T, U, N) \
  SHUFFLE_NM(T, U, N, 2) SHUFFLE_NM(T, U, N, 4) SHUFFLE_NM(T, U, N, 8) SHUFFLE_NM(T, U, N, 16)
#define SHUFFLE(T, U) \
  SHUFFLE_N(T, U, 2) SHUFFLE_N(T, U, 4) SHUFFLE_N(T, U, 8) SHUFFLE_N(T, U, 16)

SHUFFLE(char, uchar)
SHUFFLE(uchar, uchar)
SHUFFLE(short, ushort)
SHUFFLE(ushort, ushort)
SHUFFLE(int, uint)
SHUFFLE(uint, uint)
SHUFFLE(long, ulong)
SHUFFLE(ulong, ulong)
SHUFFLE(half, ushort)
SHUFFLE(float, uint)
SHUFFLE(double, ulong)
