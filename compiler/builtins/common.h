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

// Element-wise vector versions of a scalar function, built by halving (.lo/.hi) so each width
// is written once. RET/ARG are scalar type names; vector names are formed by pasting widths.
#define VEC_UNARY(RET, NAME, ARG)                                                        \
  OVL RET##2 NAME(ARG##2 x) { return (RET##2)(NAME(x.s0), NAME(x.s1)); }                  \
  OVL RET##3 NAME(ARG##3 x) { return (RET##3)(NAME(x.s0), NAME(x.s1), NAME(x.s2)); }      \
  OVL RET##4 NAME(ARG##4 x) { return (RET##4)(NAME(x.lo), NAME(x.hi)); }                  \
  OVL RET##8 NAME(ARG##8 x) { return (RET##8)(NAME(x.lo), NAME(x.hi)); }                  \
  OVL RET##16 NAME(ARG##16 x) { return (RET##16)(NAME(x.lo), NAME(x.hi)); }

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

// Declarations the library needs that opencl-c-base.h leaves to opencl-c.h.
size_t OVLC get_local_id(uint dim);
size_t OVLC get_local_size(uint dim);
size_t OVLC get_local_linear_id(void);
void OVL barrier(cl_mem_fence_flags flags);
// Per-group scratch for work-group collectives: 8 * (work-items + 2) bytes, resolved by the
// work-group pass like a work-item query.
__local void* __manifold_collective_scratch(void) __attribute__((const));
