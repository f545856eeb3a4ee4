// What libclc's nvptx64--nvidiacl library lacks, or gets wrong for Manifold, compiled for NVPTX
// at build time and linked before libclc (a definition here wins: libclc's is then not pulled).
//
// Launch state the host writes before a launch when it changes (global offset, work_dim, and
// for a launch of part of an NDRange's work-groups, the first group, the whole range's group
// count, global size and enqueued local size): CUDA has no notion of these, so they live in one
// variable per module (declared __constant here; the NVPTX pipeline moves constants to global
// memory, see nvptx_pipeline.cpp). compiler/gpu_launch_abi.h describes it.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

#define OVERLOAD __attribute__((overloadable))
#define INLINE __attribute__((always_inline))

#include "common.h"  // VEC_UNARY / VEC_BINARY / PTR1_VECTORS ..., shared with the CPU library
#include "saturating_fp_conversions.h"  // NaN -> 0, which libclc leaves to the hardware

typedef struct {
  ulong global_offset[3];
  uint work_dim;
  uint pad;
  ulong group_offset[3];  // the launch's first work-group in the NDRange
  ulong num_groups[3];    // the NDRange's work-groups; 0: the launch's grid is the whole range
  ulong global_size[3];   // where num_groups is set: the NDRange's
  ulong local_size[3];    // where num_groups is set: the enqueued local size
  ulong global_id_base[3];  // global offset + group_offset * enqueued local size
} manifold_launch_state;

// Name known to the runtime (backends/cuda): it writes this symbol with cuModuleGetGlobal.
// Only declared here: with its initializer in sight, clang folded get_work_dim() to 1 when this
// file was compiled. The NVPTX pipeline defines it (offsets 0, work_dim 1), externally
// initialized, so that nothing folds its value.
extern __constant manifold_launch_state __manifold_launch;

// ---- Work-items: libclc's nvptx get_global_id ignores the global offset ----
// A block is a work-group: of the enqueued local size, or the smaller last one of a non-uniform
// NDRange's dimension, which a launch of its own runs (its num_groups set).

#define PICK(dim, x, y, z, other) ((dim) == 0 ? (x) : (dim) == 1 ? (y) : (dim) == 2 ? (z) : (other))

INLINE OVERLOAD size_t get_local_size(uint dim) {
  return PICK(dim, __nvvm_read_ptx_sreg_ntid_x(), __nvvm_read_ptx_sreg_ntid_y(),
              __nvvm_read_ptx_sreg_ntid_z(), 1);
}
INLINE OVERLOAD size_t get_enqueued_local_size(uint dim) {
  return dim < 3 && __manifold_launch.num_groups[dim] ? __manifold_launch.local_size[dim]
                                                      : get_local_size(dim);
}
INLINE OVERLOAD size_t get_local_id(uint dim) {
  return PICK(dim, __nvvm_read_ptx_sreg_tid_x(), __nvvm_read_ptx_sreg_tid_y(),
              __nvvm_read_ptx_sreg_tid_z(), 0);
}
INLINE OVERLOAD size_t get_group_id(uint dim) {
  return dim < 3 ? PICK(dim, __nvvm_read_ptx_sreg_ctaid_x(), __nvvm_read_ptx_sreg_ctaid_y(),
                        __nvvm_read_ptx_sreg_ctaid_z(), 0) +
                       __manifold_launch.group_offset[dim]
                 : 0;
}
INLINE OVERLOAD size_t get_num_groups(uint dim) {
  if (dim >= 3) return 1;
  const size_t whole = __manifold_launch.num_groups[dim];
  return whole ? whole
               : PICK(dim, __nvvm_read_ptx_sreg_nctaid_x(), __nvvm_read_ptx_sreg_nctaid_y(),
                      __nvvm_read_ptx_sreg_nctaid_z(), 1);
}
INLINE OVERLOAD size_t get_global_size(uint dim) {
  if (dim >= 3) return 1;
  return __manifold_launch.num_groups[dim]
             ? __manifold_launch.global_size[dim]
             : PICK(dim, __nvvm_read_ptx_sreg_nctaid_x(), __nvvm_read_ptx_sreg_nctaid_y(),
                    __nvvm_read_ptx_sreg_nctaid_z(), 1) *
                   get_local_size(dim);
}
INLINE OVERLOAD size_t get_global_offset(uint dim) {
  return dim < 3 ? __manifold_launch.global_offset[dim] : 0;
}
// The block's own position in the launch, from where the launch starts: a block of a part with
// a smaller last group is that part's only one in its dimension, so ntid is right for it too.
INLINE OVERLOAD size_t get_global_id(uint dim) {
  if (dim >= 3) return 0;
  return PICK(dim, __nvvm_read_ptx_sreg_ctaid_x(), __nvvm_read_ptx_sreg_ctaid_y(),
              __nvvm_read_ptx_sreg_ctaid_z(), 0) *
             get_local_size(dim) +
         get_local_id(dim) + __manifold_launch.global_id_base[dim];
}
INLINE OVERLOAD uint get_work_dim(void) { return __manifold_launch.work_dim; }
INLINE OVERLOAD size_t get_local_linear_id(void) {
  return (get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) +
         get_local_id(0);
}
INLINE OVERLOAD size_t get_global_linear_id(void) {
  return ((get_global_id(2) - get_global_offset(2)) * get_global_size(1) +
          (get_global_id(1) - get_global_offset(1))) * get_global_size(0) +
         (get_global_id(0) - get_global_offset(0));
}

// ---- Barriers: libclc has barrier() only ----

INLINE OVERLOAD void barrier(cl_mem_fence_flags flags) { __nvvm_barrier_sync(0); }
// OpenCL C 2.0's spelling (CTS basic wg_barrier); bar.sync orders memory for the block.
INLINE OVERLOAD void work_group_barrier(cl_mem_fence_flags flags) { __nvvm_barrier_sync(0); }
// The scoped form: memory_scope is OpenCL C 2.0's and this file is 1.2, so the definition takes
// its mangled name (the enum is passed as an i32).
void manifold_scoped_work_group_barrier(cl_mem_fence_flags flags, int scope) __asm__(
    "_Z18work_group_barrierj12memory_scope");
INLINE void manifold_scoped_work_group_barrier(cl_mem_fence_flags flags, int scope) {
  __nvvm_barrier_sync(0);
}

// ---- 64-bit atomics (cl_khr_int64_base/extended_atomics): absent from libclc ----
#define ATOM64_RMW(name, builtin, type, as)                                  \
  INLINE OVERLOAD type name(volatile as type* p, type v) {                   \
    return builtin((as type*)p, v, __ATOMIC_RELAXED);                        \
  }
#define ATOM64_ALL(type, as)                                                  \
  ATOM64_RMW(atom_add, __atomic_fetch_add, type, as)                         \
  ATOM64_RMW(atom_sub, __atomic_fetch_sub, type, as)                         \
  ATOM64_RMW(atom_xchg, __atomic_exchange_n, type, as)                       \
  ATOM64_RMW(atom_min, __atomic_fetch_min, type, as)                         \
  ATOM64_RMW(atom_max, __atomic_fetch_max, type, as)                         \
  ATOM64_RMW(atom_and, __atomic_fetch_and, type, as)                         \
  ATOM64_RMW(atom_or, __atomic_fetch_or, type, as)                           \
  ATOM64_RMW(atom_xor, __atomic_fetch_xor, type, as)                         \
  INLINE OVERLOAD type atom_inc(volatile as type* p) {                       \
    return __atomic_fetch_add((as type*)p, (type)1, __ATOMIC_RELAXED);       \
  }                                                                           \
  INLINE OVERLOAD type atom_dec(volatile as type* p) {                       \
    return __atomic_fetch_sub((as type*)p, (type)1, __ATOMIC_RELAXED);       \
  }                                                                           \
  INLINE OVERLOAD type atom_cmpxchg(volatile as type* p, type cmp, type v) { \
    __atomic_compare_exchange_n((as type*)p, &cmp, v, false, __ATOMIC_RELAXED, \
                                __ATOMIC_RELAXED);                            \
    return cmp;                                                               \
  }
ATOM64_ALL(long, __global)
ATOM64_ALL(ulong, __global)
ATOM64_ALL(long, __local)
ATOM64_ALL(ulong, __local)

// 32-bit atomic_min/max/and/or/xor/xchg/sub/dec for both spellings (atomic_* and atom_*), in
// case libclc misses a combination; identical semantics to libclc's where both exist.
#define ATOM32_ALL(prefix, type, as)                                          \
  ATOM64_RMW(prefix##_sub, __atomic_fetch_sub, type, as)                     \
  ATOM64_RMW(prefix##_xchg, __atomic_exchange_n, type, as)                   \
  ATOM64_RMW(prefix##_min, __atomic_fetch_min, type, as)                     \
  ATOM64_RMW(prefix##_max, __atomic_fetch_max, type, as)                     \
  ATOM64_RMW(prefix##_and, __atomic_fetch_and, type, as)                     \
  ATOM64_RMW(prefix##_or, __atomic_fetch_or, type, as)                       \
  ATOM64_RMW(prefix##_xor, __atomic_fetch_xor, type, as)                     \
  INLINE OVERLOAD type prefix##_dec(volatile as type* p) {                   \
    return __atomic_fetch_sub((as type*)p, (type)1, __ATOMIC_RELAXED);       \
  }
ATOM32_ALL(atomic, int, __global)
ATOM32_ALL(atomic, uint, __global)
ATOM32_ALL(atomic, int, __local)
ATOM32_ALL(atomic, uint, __local)
ATOM32_ALL(atom, int, __global)
ATOM32_ALL(atom, uint, __global)
ATOM32_ALL(atom, int, __local)
ATOM32_ALL(atom, uint, __local)

// ---- native_*: libclc lowers several to LLVM intrinsics the NVPTX backend cannot select ----
float __nv_fast_expf(float);
float __nv_fast_exp10f(float);
float __nv_fast_logf(float);
float __nv_fast_log2f(float);
float __nv_fast_log10f(float);
float __nv_fast_powf(float, float);
float __nv_fast_sinf(float);
float __nv_fast_cosf(float);
float __nv_fast_tanf(float);
float __nv_exp2f(float);
float __nv_frcp_rn(float);
float __nv_rsqrtf(float);
float __nv_fsqrt_rn(float);
float __nv_fast_fdividef(float, float);

#define NATIVE1(name, impl)                                                             \
  INLINE OVERLOAD float name(float x) { return impl(x); }                               \
  INLINE OVERLOAD float2 name(float2 x) { return (float2)(impl(x.s0), impl(x.s1)); }    \
  INLINE OVERLOAD float3 name(float3 x) {                                               \
    return (float3)(impl(x.s0), impl(x.s1), impl(x.s2));                                \
  }                                                                                     \
  INLINE OVERLOAD float4 name(float4 x) { return (float4)(name(x.lo), name(x.hi)); }    \
  INLINE OVERLOAD float8 name(float8 x) { return (float8)(name(x.lo), name(x.hi)); }    \
  INLINE OVERLOAD float16 name(float16 x) { return (float16)(name(x.lo), name(x.hi)); }
#define NATIVE2(name, impl)                                                                   \
  INLINE OVERLOAD float name(float x, float y) { return impl(x, y); }                         \
  INLINE OVERLOAD float2 name(float2 x, float2 y) {                                           \
    return (float2)(impl(x.s0, y.s0), impl(x.s1, y.s1));                                      \
  }                                                                                           \
  INLINE OVERLOAD float3 name(float3 x, float3 y) {                                           \
    return (float3)(impl(x.s0, y.s0), impl(x.s1, y.s1), impl(x.s2, y.s2));                    \
  }                                                                                           \
  INLINE OVERLOAD float4 name(float4 x, float4 y) { return (float4)(name(x.lo, y.lo), name(x.hi, y.hi)); } \
  INLINE OVERLOAD float8 name(float8 x, float8 y) { return (float8)(name(x.lo, y.lo), name(x.hi, y.hi)); } \
  INLINE OVERLOAD float16 name(float16 x, float16 y) {                                        \
    return (float16)(name(x.lo, y.lo), name(x.hi, y.hi));                                     \
  }
NATIVE1(native_exp, __nv_fast_expf)
NATIVE1(native_exp2, __nv_exp2f)
NATIVE1(native_exp10, __nv_fast_exp10f)
NATIVE1(native_log, __nv_fast_logf)
NATIVE1(native_log2, __nv_fast_log2f)
NATIVE1(native_log10, __nv_fast_log10f)
NATIVE1(native_sin, __nv_fast_sinf)
NATIVE1(native_cos, __nv_fast_cosf)
NATIVE1(native_tan, __nv_fast_tanf)
NATIVE1(native_recip, __nv_frcp_rn)
NATIVE1(native_rsqrt, __nv_rsqrtf)
NATIVE1(native_sqrt, __nv_fsqrt_rn)
NATIVE2(native_powr, __nv_fast_powf)
NATIVE2(native_divide, __nv_fast_fdividef)

// ---- Relational: libclc's nvptx vector isinf returns libdevice's 1 per true lane, where a
// vector relational must give -1 (all bits set; CTS math_brute_force isinf) ----
#define VECTOR_ISINF(T, I)                                                      \
  INLINE OVERLOAD I isinf(T x) { return __builtin_elementwise_abs(x) == (T)(__builtin_inff()); }
#define VECTOR_ISINF_WIDTHS(T, I)                                                   \
  VECTOR_ISINF(T##2, I##2) VECTOR_ISINF(T##3, I##3) VECTOR_ISINF(T##4, I##4)     \
  VECTOR_ISINF(T##8, I##8) VECTOR_ISINF(T##16, I##16)
VECTOR_ISINF_WIDTHS(float, int)
VECTOR_ISINF_WIDTHS(double, long)

// A unary function as libdevice has it, and its vector forms lane by lane.
#define FROM_LIBDEVICE(T, name, impl)             \
  INLINE OVERLOAD T name(T x) { return impl(x); } \
  VEC_UNARY(T, name, T)

// ---- Math: libclc's generic forms that get special values wrong (CTS math_brute_force on
// CUDA), replaced by libdevice's, which CUDA itself uses; vector forms lane by lane with the
// builtin library's macros (compiler/builtins/common.h) ----
double __nv_log1p(double x);
double __nv_pow(double x, double y);
double __nv_atan2(double y, double x);
float __nv_tgammaf(float x);
float __nv_ldexpf(float x, int n);
double __nv_ldexp(double x, int n);

// log1p(+inf) is +inf (libclc: 709.78).
FROM_LIBDEVICE(double, log1p, __nv_log1p)
// Large negative arguments give +-0, not inf.
FROM_LIBDEVICE(float, tgamma, __nv_tgammaf)
// Huge exponents overflow or underflow as IEEE says (libclc gave inf for 0).
INLINE OVERLOAD double pow(double x, double y) { return __nv_pow(x, y); }
VEC_BINARY(double, pow, double, double)
// powr: pow for x >= 0 with the spec's own special values.
INLINE OVERLOAD double powr(double x, double y) {
  if (__builtin_isnan(x) || __builtin_isnan(y) || x < 0.0) return __builtin_nan("");
  if (x == 0.0) return y == 0.0 ? __builtin_nan("") : y < 0.0 ? __builtin_inf() : 0.0;
  if (__builtin_isinf(x) && y == 0.0) return __builtin_nan("");
  if (x == 1.0) return __builtin_isinf(y) ? __builtin_nan("") : 1.0;
  return __nv_pow(x, y);
}
VEC_BINARY(double, powr, double, double)
// atan2pi(-inf, -inf) is -0.75 (libclc: NaN); the exact values of the special cases, else
// atan2/pi (within the 6 ulp allowed).
INLINE OVERLOAD double atan2pi(double y, double x) {
  if (__builtin_isnan(x) || __builtin_isnan(y)) return __builtin_nan("");
  const bool x_negative = __builtin_signbit(x);
  if (y == 0.0) return __builtin_copysign(x_negative ? 1.0 : 0.0, y);
  if (x == 0.0) return __builtin_copysign(0.5, y);
  if (__builtin_isinf(y))
    return __builtin_copysign(__builtin_isinf(x) ? (x_negative ? 0.75 : 0.25) : 0.5, y);
  if (__builtin_isinf(x)) return __builtin_copysign(x_negative ? 1.0 : 0.0, y);
  return __nv_atan2(y, x) * M_1_PI;
}
VEC_BINARY(double, atan2pi, double, double)
// ldexp(NaN, n) is NaN (libclc: 0 or inf).
INLINE OVERLOAD float ldexp(float x, int n) { return __nv_ldexpf(x, n); }
INLINE OVERLOAD double ldexp(double x, int n) { return __nv_ldexp(x, n); }
VEC_BINARY(float, ldexp, float, int)
VEC_BINARY(double, ldexp, double, int)
VEC_SPLAT_SECOND(float, ldexp, float, int)
VEC_SPLAT_SECOND(double, ldexp, double, int)

// tgamma(double) of large negative arguments is +-0 (libclc: inf).
double __nv_tgamma(double x);
FROM_LIBDEVICE(double, tgamma, __nv_tgamma)

// cospi and tanpi with the signs of zero the spec gives (libclc's were wrong: CTS
// math_edge_cases): cospi(n + 0.5) is +0; tanpi(n) is copysign(0, n) for even n and
// copysign(0, -n) for odd n; tanpi(n + 0.5) is +inf for even n, -inf for odd n. libdevice's
// sinpi/cospi of the argument's fraction (a period of tanpi) give the rest within 3 ulp.
float __nv_sinpif(float x);
float __nv_cospif(float x);
double __nv_sinpi(double x);
double __nv_cospi(double x);
INLINE OVERLOAD float cospi(float x) { return __nv_cospif(x); }
INLINE OVERLOAD double cospi(double x) { return __nv_cospi(x); }
VEC_UNARY(float, cospi, float)
VEC_UNARY(double, cospi, double)
#define SHIM_TANPI(T, SINPI, COSPI, EXACT_LIMIT)                                              \
  INLINE OVERLOAD T tanpi(T x) {                                                              \
    if (__builtin_isnan(x) || __builtin_isinf(x)) return (T)__builtin_nan("");               \
    const T n = __builtin_rint(x);                                                            \
    const T r = x - n; /* exact, in [-0.5, 0.5] */                                           \
    /* integers past EXACT_LIMIT are all even */                                              \
    const bool n_odd = __builtin_fabs(n) < EXACT_LIMIT && ((long)n & 1);                      \
    if (r == 0) return __builtin_copysign((T)0, n_odd ? -x : x);                              \
    if (__builtin_fabs(r) == (T)0.5) {                                                        \
      const T k = __builtin_floor(x); /* x = k + 0.5 */                                       \
      const bool k_odd = __builtin_fabs(k) < EXACT_LIMIT && ((long)k & 1);                    \
      return k_odd ? -(T)__builtin_inf() : (T)__builtin_inf();                                \
    }                                                                                         \
    return SINPI(r) / COSPI(r);                                                               \
  }
SHIM_TANPI(float, __nv_sinpif, __nv_cospif, 0x1p24f)
SHIM_TANPI(double, __nv_sinpi, __nv_cospi, 0x1p53)
VEC_UNARY(float, tanpi, float)
VEC_UNARY(double, tanpi, double)

// asinpi(-0) and atanpi(-0) are -0 (libclc's double forms gave +0: CTS math_edge_cases); the
// exact values at +-1 and +-inf, else libdevice's asin/atan over pi (within the 5 ulp allowed).
double __nv_asin(double x);
double __nv_atan(double x);
INLINE OVERLOAD double asinpi(double x) {
  if (x == 0.0 || __builtin_isnan(x)) return x;
  if (__builtin_fabs(x) == 1.0) return __builtin_copysign(0.5, x);
  return __nv_asin(x) * M_1_PI;
}
INLINE OVERLOAD double atanpi(double x) {
  if (x == 0.0 || __builtin_isnan(x)) return x;
  if (__builtin_isinf(x)) return __builtin_copysign(0.5, x);
  return __nv_atan(x) * M_1_PI;
}
VEC_UNARY(double, asinpi, double)
VEC_UNARY(double, atanpi, double)

// libdevice's, which CUDA uses, where libclc's are wrong on valid inputs: cosh(double) of NaN
// indexed libclc's table with (int)NaN, a load far outside it (a fault on the GPU);
// lgamma(float) of tiny negative arguments was inf; exp(float) and erfc(float) flushed results
// in the denormal range to zero (allowed without CL_FP_DENORM, but NVIDIA's OpenCL keeps them).
// Also where libclc's float forms are less accurate than NVIDIA's OpenCL on the same inputs
// (bench/math_ulp): exp2 (denormal results flushed too), cosh, tanh, sin and cos. sinh(double)
// too: libclc's shares cosh's table code, and the CTS's vector kernels of it (a lane of constant
// NaN) failed the CUDA context.
double __nv_cosh(double x);
double __nv_sinh(double x);
float __nv_expf(float x);
float __nv_erfcf(float x);
float __nv_lgammaf(float x);
float __nv_exp2f(float x);
float __nv_coshf(float x);
float __nv_tanhf(float x);
float __nv_sinf(float x);
float __nv_cosf(float x);
FROM_LIBDEVICE(double, cosh, __nv_cosh)
FROM_LIBDEVICE(double, sinh, __nv_sinh)
FROM_LIBDEVICE(float, exp, __nv_expf)
FROM_LIBDEVICE(float, erfc, __nv_erfcf)
FROM_LIBDEVICE(float, lgamma, __nv_lgammaf)
FROM_LIBDEVICE(float, exp2, __nv_exp2f)
FROM_LIBDEVICE(float, cosh, __nv_coshf)
FROM_LIBDEVICE(float, tanh, __nv_tanhf)
FROM_LIBDEVICE(float, sin, __nv_sinf)
FROM_LIBDEVICE(float, cos, __nv_cosf)

// sincos: libdevice's, which reduces the argument once for both results. libclc's computes sine
// and cosine apart, each through its own reduction, and neither matches sin() and cos() above.
void __nv_sincosf(float x, float* sine, float* cosine);
void __nv_sincos(double x, double* sine, double* cosine);
#define SHIM_SINCOS(AS, T, impl)                              \
  INLINE OVERLOAD T sincos(T x, AS T* cosine) {               \
    T s, c;                                                   \
    impl(x, &s, &c);                                          \
    *cosine = c;                                              \
    return s;                                                 \
  }
#define SHIM_SINCOS_ALL(AS, T, impl) \
  SHIM_SINCOS(AS, T, impl)           \
  PTR1_VECTORS(AS, sincos, T, T)
SHIM_SINCOS_ALL(__private, float, __nv_sincosf)
SHIM_SINCOS_ALL(__global, float, __nv_sincosf)
SHIM_SINCOS_ALL(__local, float, __nv_sincosf)
SHIM_SINCOS_ALL(__private, double, __nv_sincos)
SHIM_SINCOS_ALL(__global, double, __nv_sincos)
SHIM_SINCOS_ALL(__local, double, __nv_sincos)
