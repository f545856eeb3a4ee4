// Miscellaneous vector builtins (OpenCL C 3.0 section 6.15.13): shuffle and shuffle2 for every
// gentypen x ugentypem pair, n and m in {2, 4, 8, 16} (3-component vectors are not allowed).
//
// The mask is a run-time value, so each result element is a subscripted read of the input.
// Only the low log2(n) bits of a mask element count (log2(2n) for shuffle2): the index modulo
// n (2n), as the spec requires. After inlining, constant masks fold into one shufflevector.
// The macros are in common.h (half.cl makes the half forms).
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

SHUFFLE(char, uchar)
SHUFFLE(uchar, uchar)
SHUFFLE(short, ushort)
SHUFFLE(ushort, ushort)
SHUFFLE(int, uint)
SHUFFLE(uint, uint)
SHUFFLE(long, ulong)
SHUFFLE(ulong, ulong)
SHUFFLE(float, uint)
SHUFFLE(double, ulong)
