// A kernel that calls every builtin function of half (cl_khr_fp16) at least once, in scalar and
// vector forms: building it for a device checks that its builtin library defines them all
// (tests/compiler, for the CPU and for NVPTX). Built with -cl-std=CL3.0, it takes generic pointers
// too where the device has them.
#pragma once

inline const char* kEveryHalfBuiltin = R"CL(
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define UNARY(f) r += f(x); r4 += f(x4); r16 += f(x16);
#define BINARY(f) r += f(x, y); r4 += f(x4, y4); r3 += f(x3, y3);
kernel void every(global half* h, global float* f, global double* d, global int* n,
                  global short* s, global ushort* u, global long* l, local half* scratch) {
  half x = h[0], y = h[1], z = h[2], r = 0;
  half3 x3 = vload3(1, h), y3 = vload3(2, h), r3 = 0;
  half4 x4 = vload4(1, h), y4 = vload4(2, h), z4 = vload4(3, h), r4 = 0;
  half8 x8 = vload8(1, h);
  half16 x16 = vload16(1, h), r16 = 0;
  int4 n4 = vload4(0, n);
  UNARY(acos) UNARY(acosh) UNARY(acospi) UNARY(asin) UNARY(asinh) UNARY(asinpi) UNARY(atan)
  UNARY(atanh) UNARY(atanpi) UNARY(cbrt) UNARY(ceil) UNARY(cos) UNARY(cosh) UNARY(cospi)
  UNARY(erfc) UNARY(erf) UNARY(exp) UNARY(exp2) UNARY(exp10) UNARY(expm1) UNARY(fabs)
  UNARY(floor) UNARY(lgamma) UNARY(log) UNARY(log2) UNARY(log10) UNARY(log1p) UNARY(logb)
  UNARY(rint) UNARY(round) UNARY(rsqrt) UNARY(sin) UNARY(sinh) UNARY(sinpi) UNARY(sqrt)
  UNARY(tan) UNARY(tanh) UNARY(tanpi) UNARY(tgamma) UNARY(trunc) UNARY(degrees) UNARY(radians)
  UNARY(sign)
  BINARY(atan2) BINARY(atan2pi) BINARY(copysign) BINARY(fdim) BINARY(fmax) BINARY(fmin)
  BINARY(fmod) BINARY(hypot) BINARY(maxmag) BINARY(minmag) BINARY(nextafter) BINARY(pow)
  BINARY(powr) BINARY(remainder) BINARY(max) BINARY(min) BINARY(step)
  r += fma(x, y, z) + mad(x, y, z) + clamp(x, y, z) + mix(x, y, z) + smoothstep(x, y, z);
  r4 += fma(x4, y4, z4) + mad(x4, y4, z4) + clamp(x4, y4, z4) + mix(x4, y4, z4);
  r4 += fmax(x4, y) + fmin(x4, y) + max(x4, y) + min(x4, y) + clamp(x4, y, z) + mix(x4, y4, z);
  r4 += step(x, y4) + smoothstep(x, y, z4) + smoothstep(x4, y4, z4);
  r += ldexp(x, n[0]) + pown(x, n[1]) + rootn(x, n[2]) + nan(u[0]);
  r4 += ldexp(x4, n4) + ldexp(x4, n[0]) + pown(x4, n4) + rootn(x4, n4) + nan(vload4(0, u));
  n[4] = ilogb(x);
  vstore4(ilogb(x4), 2, n);
  // Pointer results in private, local, global and generic memory.
  half whole;
  half4 whole4;
  int e;
  int4 e4;
  r += fract(x, &whole) + whole + modf(y, &whole) + sincos(z, &whole) + whole;
  r += frexp(x, &e) + lgamma_r(y, &e) + remquo(x, y, &e) + fract(z, scratch) + modf(x, h + 8);
  r4 += fract(x4, &whole4) + modf(y4, &whole4) + sincos(z4, &whole4) + whole4;
  r4 += frexp(x4, &e4) + lgamma_r(y4, &e4) + remquo(x4, y4, &e4) + convert_half4(e4);
#ifdef __opencl_c_generic_address_space
  generic half* anywhere = get_local_id(0) ? (generic half*)scratch : (generic half*)(h + 9);
  r += fract(x, anywhere) + frexp(y, (generic int*)n + 9);
#endif
  n[3] = e;
  // Geometric.
  r += dot(x, y) + dot(x3, y3) + dot(x4, y4) + length(x4) + length(x3) + distance(x4, y4);
  r += distance(x, y) + length(x) + normalize(x);
  r3 += cross(x3, y3) + normalize(x3);
  r4 += cross(x4, y4) + normalize(x4);
  // Relational.
  n[5] = isequal(x, y) + isnotequal(x, y) + isgreater(x, y) + isgreaterequal(x, y) + isless(x, y) +
         islessequal(x, y) + islessgreater(x, y) + isordered(x, y) + isunordered(x, y) +
         isnan(x) + isinf(x) + isfinite(x) + isnormal(x) + signbit(x);
  short4 m = isequal(x4, y4) | isnotequal(x4, y4) | isgreater(x4, y4) | isgreaterequal(x4, y4) |
             isless(x4, y4) | islessequal(x4, y4) | islessgreater(x4, y4) | isordered(x4, y4) |
             isunordered(x4, y4) | isnan(x4) | isinf(x4) | isfinite(x4) | isnormal(x4) |
             signbit(x4);
  n[6] = any(m) + all(isnan(x16));
  r4 += select(x4, y4, m) + select(x4, y4, as_ushort4(m)) + bitselect(x4, y4, z4);
  r += select(x, y, s[0]) + select(x, y, u[0]) + bitselect(x, y, z);
  // Shuffles.
  r4 += shuffle(x8, vload4(0, u)) + shuffle2(x4, y4, vload4(1, u));
  r16 += shuffle(x4, vload16(0, u)) + shuffle2(x16, x16, vload16(1, u));
  // Conversions to half from every type, every mode.
  r += convert_half(f[0]) + convert_half_rte(f[1]) + convert_half_rtz(f[2]) +
       convert_half_rtp(f[3]) + convert_half_rtn(d[0]) + convert_half_rtz(d[1]) +
       convert_half(n[7]) + convert_half_rtp(n[8]) + convert_half_rtn(l[0]) +
       convert_half_rtz((uint)n[9]) + convert_half_rtp(s[1]) + convert_half_rtn(u[1]) +
       convert_half_rtz((char)n[10]) + convert_half((uchar)n[11]) + convert_half_rtp((ulong)l[1]);
  r4 += convert_half4(vload4(0, f)) + convert_half4_rtz(vload4(1, f)) +
        convert_half4_rtn(vload4(0, d)) + convert_half4_rtp(n4) + convert_half4_rtz(vload4(0, l)) +
        convert_half4_rte(vload4(0, s)) + convert_half4(x4);
  r3 += convert_half3_rtz(vload3(0, d));
  r16 += convert_half16_rtp(vload16(0, f));
  // Conversions from half to every type, saturating and not.
  n[11] = convert_int_sat_rte(x) + convert_int(y) + convert_int_rtp(z) + convert_char_sat(x) +
          convert_uchar_sat_rtn(y) + convert_short_sat_rtz(z) + convert_ushort_sat_rte(x) +
          (int)convert_uint_sat(y) + (int)convert_long_sat_rtp(z) + (int)convert_ulong_rtn(x);
  vstore4(convert_int4_sat_rte(x4) + convert_int4_rtz(y4), 3, n);
  vstore8(convert_short8_sat(x8), 0, s);
  vstore16(convert_ushort16_sat_rtp(x16), 0, u);
  vstore4(convert_long4_sat_rtn(x4), 0, l);
  f[8] = convert_float(x) + convert_float_rtz(y);
  vstore4(convert_float4(x4), 3, f);
  d[8] = convert_double(x) + convert_double4_rtp(x4).y;
  // Loads and stores of half, and of floats as half.
  vstore2(vload2(3, h), 4, h);
  vstore3(r3, 5, h);
  vstore4(r4, 6, h);
  vstore8(vload8(2, h) + x8, 7, h);
  vstore16(r16, 8, h);
  vstore_half_rtz(f[9] + vload_half(1, h), 300, h);
  vstore_half4_rtp(vload_half4(1, h), 80, h);
  // Async copies and prefetch of half.
  event_t ev = async_work_group_copy(scratch, h + 64, 16, 0);
  ev = async_work_group_strided_copy((local half4*)(scratch + 16), (global const half4*)(h + 64), 4,
                                     2, ev);
  wait_group_events(1, &ev);
  prefetch(h + 128, 16);
  ev = async_work_group_copy(h + 400, scratch, 16, 0);
  wait_group_events(1, &ev);
  h[3] = r + scratch[get_local_id(0)];
}
)CL";
