// Shared macros of Manifold's OpenCL builtin library (compiled by clang at build time with
// opencl-c-base.h for the types; every definition is overloadable so its mangled name matches
// what -fdeclare-opencl-builtins makes programs call).
#pragma once

#define OVL __attribute__((overloadable))
#define OVLC __attribute__((overloadable, const))

// Address spaces a pointer argument of a builtin may have. OpenCL C 1.x programs call the
// named-address-space overloads, 2.0+ programs with generic address space call the generic one.
#define FOR_EACH_WRITABLE_AS(M, ...) \
  M(__global, __VA_ARGS__)           \
  M(__local, __VA_ARGS__)            \
  M(__private, __VA_ARGS__)          \
  M(__generic, __VA_ARGS__)

#define FOR_EACH_READABLE_AS(M, ...) \
  FOR_EACH_WRITABLE_AS(M, __VA_ARGS__) \
  M(__constant, __VA_ARGS__)

// The same for builtins compiled for NVPTX too (half.cl): there __private and __generic pointers
// mangle alike, and the generic overload serves both.
#ifdef __NVPTX__
#define FOR_EACH_DISTINCT_WRITABLE_AS(M, ...) \
  M(__global, __VA_ARGS__)                    \
  M(__local, __VA_ARGS__)                     \
  M(__generic, __VA_ARGS__)
#else
#define FOR_EACH_DISTINCT_WRITABLE_AS(M, ...) FOR_EACH_WRITABLE_AS(M, __VA_ARGS__)
#endif
#define FOR_EACH_DISTINCT_READABLE_AS(M, ...) \
  FOR_EACH_DISTINCT_WRITABLE_AS(M, __VA_ARGS__) \
  M(__constant, __VA_ARGS__)

// Element-wise vector versions of a scalar function, built by halving (.lo/.hi) so each width
// is written once. RET/ARG are scalar type names; vector names are formed by pasting widths.
#define VEC_UNARY(RET, NAME, ARG)                                                        \
  OVL RET##2 NAME(ARG##2 x) { return (RET##2)(NAME(x.s0), NAME(x.s1)); }                  \
  OVL RET##3 NAME(ARG##3 x) { return (RET##3)(NAME(x.s0), NAME(x.s1), NAME(x.s2)); }      \
  OVL RET##4 NAME(ARG##4 x) { return (RET##4)(NAME(x.lo), NAME(x.hi)); }                  \
  OVL RET##8 NAME(ARG##8 x) { return (RET##8)(NAME(x.lo), NAME(x.hi)); }                  \
  OVL RET##16 NAME(ARG##16 x) { return (RET##16)(NAME(x.lo), NAME(x.hi)); }

// Element-wise vector versions of a scalar function with a pointer result, f(T x, AS P* p),
// for an address space AS (the CPU's math.cl and the NVPTX shim's sincos).
#define PTR1_VECTOR(AS, NAME, T, P, N)        \
  OVL T##N NAME(T##N x, AS P##N* p) {         \
    T##N r;                                   \
    P##N o;                                   \
    for (int i = 0; i < N; ++i) {             \
      P t;                                    \
      r[i] = NAME(x[i], &t);                  \
      o[i] = t;                               \
    }                                         \
    *p = o;                                   \
    return r;                                 \
  }
#define PTR1_VECTORS(AS, NAME, T, P)                                                 \
  PTR1_VECTOR(AS, NAME, T, P, 2) PTR1_VECTOR(AS, NAME, T, P, 3)                      \
  PTR1_VECTOR(AS, NAME, T, P, 4) PTR1_VECTOR(AS, NAME, T, P, 8) PTR1_VECTOR(AS, NAME, T, P, 16)
#define VEC_BINARY(RET, NAME, A, B)                                                          \
  OVL RET##2 NAME(A##2 x, B##2 y) { return (RET##2)(NAME(x.s0, y.s0), NAME(x.s1, y.s1)); }    \
  OVL RET##3 NAME(A##3 x, B##3 y) {                                                          \
    return (RET##3)(NAME(x.s0, y.s0), NAME(x.s1, y.s1), NAME(x.s2, y.s2));                   \
  }                                                                                          \
  OVL RET##4 NAME(A##4 x, B##4 y) { return (RET##4)(NAME(x.lo, y.lo), NAME(x.hi, y.hi)); }    \
  OVL RET##8 NAME(A##8 x, B##8 y) { return (RET##8)(NAME(x.lo, y.lo), NAME(x.hi, y.hi)); }    \
  OVL RET##16 NAME(A##16 x, B##16 y) { return (RET##16)(NAME(x.lo, y.lo), NAME(x.hi, y.hi)); }

#define VEC_TERNARY(RET, NAME, A, B, C)                                                       \
  OVL RET##2 NAME(A##2 x, B##2 y, C##2 z) {                                                   \
    return (RET##2)(NAME(x.s0, y.s0, z.s0), NAME(x.s1, y.s1, z.s1));                          \
  }                                                                                           \
  OVL RET##3 NAME(A##3 x, B##3 y, C##3 z) {                                                   \
    return (RET##3)(NAME(x.s0, y.s0, z.s0), NAME(x.s1, y.s1, z.s1), NAME(x.s2, y.s2, z.s2));  \
  }                                                                                           \
  OVL RET##4 NAME(A##4 x, B##4 y, C##4 z) {                                                   \
    return (RET##4)(NAME(x.lo, y.lo, z.lo), NAME(x.hi, y.hi, z.hi));                          \
  }                                                                                           \
  OVL RET##8 NAME(A##8 x, B##8 y, C##8 z) {                                                   \
    return (RET##8)(NAME(x.lo, y.lo, z.lo), NAME(x.hi, y.hi, z.hi));                          \
  }                                                                                           \
  OVL RET##16 NAME(A##16 x, B##16 y, C##16 z) {                                               \
    return (RET##16)(NAME(x.lo, y.lo, z.lo), NAME(x.hi, y.hi, z.hi));                         \
  }

// f(vector, scalar) forms that splat the scalar (fmin(float4, float), ldexp(float4, int)...).
#define VEC_SPLAT_SECOND(RET, NAME, A, B)                                   \
  OVL RET##2 NAME(A##2 x, B y) { return NAME(x, (B##2)(y)); }             \
  OVL RET##3 NAME(A##3 x, B y) { return NAME(x, (B##3)(y)); }             \
  OVL RET##4 NAME(A##4 x, B y) { return NAME(x, (B##4)(y)); }             \
  OVL RET##8 NAME(A##8 x, B y) { return NAME(x, (B##8)(y)); }             \
  OVL RET##16 NAME(A##16 x, B y) { return NAME(x, (B##16)(y)); }

// Apply M(type) to a scalar type and all its vector types.
#define ALL_WIDTHS(M, T) M(T) M(T##2) M(T##3) M(T##4) M(T##8) M(T##16)

// vloadn/vstoren of one element type T in one address space (vload_vstore.cl, half.cl). The
// vector types' alignment is reduced to the element's (the spec only guarantees element
// alignment), so loads and stores of N elements stay single vector memory operations;
// 3-element forms touch exactly 3 elements.
#define UNALIGNED_TYPES(T)                                                        \
  typedef T T##2_u __attribute__((ext_vector_type(2), aligned(sizeof(T))));       \
  typedef T T##4_u __attribute__((ext_vector_type(4), aligned(sizeof(T))));       \
  typedef T T##8_u __attribute__((ext_vector_type(8), aligned(sizeof(T))));       \
  typedef T T##16_u __attribute__((ext_vector_type(16), aligned(sizeof(T))));

#define VLOAD_N(AS, T, N)                                         \
  OVL T##N vload##N(size_t offset, const AS T* p) {               \
    return *(const AS T##N##_u*)(p + offset * N);                 \
  }
#define VSTORE_N(AS, T, N)                                        \
  OVL void vstore##N(T##N data, size_t offset, AS T* p) {         \
    *(AS T##N##_u*)(p + offset * N) = data;                       \
  }
#define VLOAD_ALL(AS, T)                                                                   \
  VLOAD_N(AS, T, 2) VLOAD_N(AS, T, 4) VLOAD_N(AS, T, 8) VLOAD_N(AS, T, 16)                  \
  OVL T##3 vload3(size_t offset, const AS T* p) {                                          \
    const AS T* q = p + offset * 3;                                                        \
    return (T##3)(q[0], q[1], q[2]);                                                       \
  }
#define VSTORE_ALL(AS, T)                                                                  \
  VSTORE_N(AS, T, 2) VSTORE_N(AS, T, 4) VSTORE_N(AS, T, 8) VSTORE_N(AS, T, 16)              \
  OVL void vstore3(T##3 data, size_t offset, AS T* p) {                                    \
    AS T* q = p + offset * 3;                                                              \
    q[0] = data.s0;                                                                        \
    q[1] = data.s1;                                                                        \
    q[2] = data.s2;                                                                        \
  }

// shuffle and shuffle2 for element type T with mask element type U (shuffle.cl, half.cl).
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

// Async work-group copies and prefetch of element type T (workgroup.cl, half.cl): shared among
// the work-items of the group (each copies every local-size'th element), complete at
// wait_group_events, which is a barrier; the returned event carries nothing.
#define ASYNC_COPY_GROUP_ITEMS (get_local_size(0) * get_local_size(1) * get_local_size(2))
#define ASYNC_COPY(T)                                                                          \
  OVL event_t async_work_group_copy(__local T* dst, const __global T* src, size_t n,           \
                                    event_t event) {                                           \
    size_t step = ASYNC_COPY_GROUP_ITEMS;                                                      \
    for (size_t i = get_local_linear_id(); i < n; i += step) dst[i] = src[i];                  \
    return event;                                                                              \
  }                                                                                            \
  OVL event_t async_work_group_copy(__global T* dst, const __local T* src, size_t n,           \
                                    event_t event) {                                           \
    size_t step = ASYNC_COPY_GROUP_ITEMS;                                                      \
    for (size_t i = get_local_linear_id(); i < n; i += step) dst[i] = src[i];                  \
    return event;                                                                              \
  }                                                                                            \
  OVL event_t async_work_group_strided_copy(__local T* dst, const __global T* src, size_t n,   \
                                            size_t stride, event_t event) {                    \
    size_t step = ASYNC_COPY_GROUP_ITEMS;                                                      \
    for (size_t i = get_local_linear_id(); i < n; i += step) dst[i] = src[i * stride];         \
    return event;                                                                              \
  }                                                                                            \
  OVL event_t async_work_group_strided_copy(__global T* dst, const __local T* src, size_t n,   \
                                            size_t stride, event_t event) {                    \
    size_t step = ASYNC_COPY_GROUP_ITEMS;                                                      \
    for (size_t i = get_local_linear_id(); i < n; i += step) dst[i * stride] = src[i];         \
    return event;                                                                              \
  }                                                                                            \
  OVL void prefetch(const __global T* p, size_t n) {}

// Declarations the library needs that opencl-c-base.h leaves to opencl-c.h.
size_t OVLC get_local_id(uint dim);
size_t OVLC get_local_size(uint dim);
size_t OVLC get_local_linear_id(void);
void OVL barrier(cl_mem_fence_flags flags);
// Per-group scratch for work-group collectives: 8 * (work-items + 2) bytes, resolved by the
// work-group pass like a work-item query.
__local void* __manifold_collective_scratch(void) __attribute__((const));
