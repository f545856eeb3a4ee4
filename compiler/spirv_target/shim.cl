// What LLVM's SPIR-V backend leaves unresolved (imports no driver provides), compiled for
// spirv64 at build time and linked lazily into programs before code generation: the OpenCL 1.x
// atomic functions it does not lower itself, the legacy fences, ldexp of a vector by a scalar
// exponent (the backend keeps the exponent scalar, which OpenCL.std's ldexp forbids), and
// all/any (the backend gives OpAll/OpAny the integer vector itself where they take booleans), the
// generic-pointer casts and get_fence, C11 atomic min/max and the 64-bit weak compare-exchange.
// Each is written with the SPIR-V instruction it stands for (__spirv_* calls, which the backend
// turns into instructions).
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

#define OVERLOAD __attribute__((overloadable))

// SPIR-V scopes and memory semantics (SPIR-V spec 3.27, 3.25).
#define SCOPE_DEVICE 1
#define SCOPE_WORKGROUP 2
#define SEM_RELAXED 0
#define SEM_ACQUIRE 0x2
#define SEM_RELEASE 0x4
#define SEM_ACQ_REL 0x8
#define SEM_WORKGROUP_MEMORY 0x100
#define SEM_CROSS_WORKGROUP_MEMORY 0x200
#define SEM_IMAGE_MEMORY 0x800

// ---- The instructions, per pointer type ----
#define DECLARE_SPIRV(T, AS)                                                              \
  T OVERLOAD __spirv_AtomicIIncrement(volatile AS T*, int, int);                          \
  T OVERLOAD __spirv_AtomicIDecrement(volatile AS T*, int, int);                          \
  T OVERLOAD __spirv_AtomicExchange(volatile AS T*, int, int, T);                         \
  T OVERLOAD __spirv_AtomicIAdd(volatile AS T*, int, int, T);                             \
  T OVERLOAD __spirv_AtomicISub(volatile AS T*, int, int, T);                             \
  T OVERLOAD __spirv_AtomicAnd(volatile AS T*, int, int, T);                              \
  T OVERLOAD __spirv_AtomicOr(volatile AS T*, int, int, T);                               \
  T OVERLOAD __spirv_AtomicXor(volatile AS T*, int, int, T);                              \
  T OVERLOAD __spirv_AtomicCompareExchange(volatile AS T*, int, int, int, T, T);
#define DECLARE_MINMAX(T, AS, S)                          \
  T OVERLOAD __spirv_Atomic##S##Min(volatile AS T*, int, int, T); \
  T OVERLOAD __spirv_Atomic##S##Max(volatile AS T*, int, int, T);

// On signed types only: the backend does not recognize the unsigned forms, and an
// instruction's signedness is its opcode's (UMin/UMax), not its operands'.
DECLARE_SPIRV(int, global)
DECLARE_SPIRV(int, local)
DECLARE_SPIRV(long, global)
DECLARE_SPIRV(long, local)
DECLARE_MINMAX(int, global, S)
DECLARE_MINMAX(int, local, S)
DECLARE_MINMAX(long, global, S)
DECLARE_MINMAX(long, local, S)
DECLARE_MINMAX(int, global, U)
DECLARE_MINMAX(int, local, U)
DECLARE_MINMAX(long, global, U)
DECLARE_MINMAX(long, local, U)
float OVERLOAD __spirv_AtomicExchange(volatile global float*, int, int, float);
float OVERLOAD __spirv_AtomicExchange(volatile local float*, int, int, float);
void OVERLOAD __spirv_MemoryBarrier(int, int);

// The OpenCL 1.x atomics are relaxed, at the scope of the memory they touch.
#define SEM_global SEM_CROSS_WORKGROUP_MEMORY
#define SEM_local SEM_WORKGROUP_MEMORY
#define SCOPE_global SCOPE_DEVICE
#define SCOPE_local SCOPE_WORKGROUP

// T: the function's type; S: the signed type of its width, which the instruction is called on.
#define CALL(op, S, AS, ...) __spirv_Atomic##op((volatile AS S*)p, SCOPE_##AS, SEM_##AS, ##__VA_ARGS__)
#define DEFINE_COMMON(P, T, S, AS)                                                          \
  T OVERLOAD P##_inc(volatile AS T* p) { return (T)CALL(IAdd, S, AS, (S)1); }             \
  T OVERLOAD P##_dec(volatile AS T* p) { return (T)CALL(ISub, S, AS, (S)1); }             \
  T OVERLOAD P##_xchg(volatile AS T* p, T v) { return (T)CALL(Exchange, S, AS, (S)v); }     \
  T OVERLOAD P##_add(volatile AS T* p, T v) { return (T)CALL(IAdd, S, AS, (S)v); }          \
  T OVERLOAD P##_sub(volatile AS T* p, T v) { return (T)CALL(ISub, S, AS, (S)v); }          \
  T OVERLOAD P##_and(volatile AS T* p, T v) { return (T)CALL(And, S, AS, (S)v); }           \
  T OVERLOAD P##_or(volatile AS T* p, T v) { return (T)CALL(Or, S, AS, (S)v); }             \
  T OVERLOAD P##_xor(volatile AS T* p, T v) { return (T)CALL(Xor, S, AS, (S)v); }           \
  T OVERLOAD P##_cmpxchg(volatile AS T* p, T cmp, T v) {                                    \
    return (T)__spirv_AtomicCompareExchange((volatile AS S*)p, SCOPE_##AS, SEM_##AS,         \
                                            SEM_##AS, (S)v, (S)cmp);                         \
  }
#define DEFINE_MINMAX(P, T, S, AS, KIND)                                                     \
  T OVERLOAD P##_min(volatile AS T* p, T v) { return (T)CALL(KIND##Min, S, AS, (S)v); }     \
  T OVERLOAD P##_max(volatile AS T* p, T v) { return (T)CALL(KIND##Max, S, AS, (S)v); }
#define DEFINE_32(P, AS)                                           \
  DEFINE_COMMON(P, int, int, AS)                                   \
  DEFINE_COMMON(P, uint, int, AS)                                  \
  DEFINE_MINMAX(P, int, int, AS, S)                                \
  DEFINE_MINMAX(P, uint, int, AS, U)                               \
  float OVERLOAD P##_xchg(volatile AS float* p, float v) {         \
    return __spirv_AtomicExchange(p, SCOPE_##AS, SEM_##AS, v);     \
  }
#define DEFINE_64(AS)                      \
  DEFINE_COMMON(atom, long, long, AS)      \
  DEFINE_COMMON(atom, ulong, long, AS)     \
  DEFINE_MINMAX(atom, long, long, AS, S)   \
  DEFINE_MINMAX(atom, ulong, long, AS, U)

DEFINE_32(atomic, global)
DEFINE_32(atomic, local)
DEFINE_32(atom, global)
DEFINE_32(atom, local)
DEFINE_64(global)
DEFINE_64(local)

// ---- Legacy fences: work-group scope, on the memory the flags name ----
static int fence_memory(cl_mem_fence_flags flags) {
  return ((flags & CLK_LOCAL_MEM_FENCE) ? SEM_WORKGROUP_MEMORY : 0) |
         ((flags & CLK_GLOBAL_MEM_FENCE) ? SEM_CROSS_WORKGROUP_MEMORY : 0) |
         ((flags & CLK_IMAGE_MEM_FENCE) ? SEM_IMAGE_MEMORY : 0);
}
void OVERLOAD mem_fence(cl_mem_fence_flags flags) {
  __spirv_MemoryBarrier(SCOPE_WORKGROUP, SEM_ACQ_REL | fence_memory(flags));
}
void OVERLOAD read_mem_fence(cl_mem_fence_flags flags) {
  __spirv_MemoryBarrier(SCOPE_WORKGROUP, SEM_ACQUIRE | fence_memory(flags));
}
void OVERLOAD write_mem_fence(cl_mem_fence_flags flags) {
  __spirv_MemoryBarrier(SCOPE_WORKGROUP, SEM_RELEASE | fence_memory(flags));
}

// ---- ldexp(vector, int): the exponent widened to the vector ----
#define LDEXP_VECTOR(T, N)                                     \
  T##N OVERLOAD __spirv_ocl_ldexp(T##N, int##N);               \
  T##N OVERLOAD ldexp(T##N x, int k) { return __spirv_ocl_ldexp(x, (int##N)(k)); }
#define LDEXP_ALL(T) \
  LDEXP_VECTOR(T, 2) LDEXP_VECTOR(T, 3) LDEXP_VECTOR(T, 4) LDEXP_VECTOR(T, 8) LDEXP_VECTOR(T, 16)
LDEXP_ALL(float)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
LDEXP_ALL(double)

// ---- all/any: whether the sign bit of every (any) component is set ----
#define ALL_ANY(T)                                                      \
  int OVERLOAD all(T x) { return x < 0; }                               \
  int OVERLOAD all(T##2 x) { return (x.s0 & x.s1) < 0; }                \
  int OVERLOAD all(T##3 x) { return (x.s0 & x.s1 & x.s2) < 0; }         \
  int OVERLOAD all(T##4 x) { return all(x.lo & x.hi); }                 \
  int OVERLOAD all(T##8 x) { return all(x.lo & x.hi); }                 \
  int OVERLOAD all(T##16 x) { return all(x.lo & x.hi); }                \
  int OVERLOAD any(T x) { return x < 0; }                               \
  int OVERLOAD any(T##2 x) { return (x.s0 | x.s1) < 0; }                \
  int OVERLOAD any(T##3 x) { return (x.s0 | x.s1 | x.s2) < 0; }         \
  int OVERLOAD any(T##4 x) { return any(x.lo | x.hi); }                 \
  int OVERLOAD any(T##8 x) { return any(x.lo | x.hi); }                 \
  int OVERLOAD any(T##16 x) { return any(x.lo | x.hi); }
ALL_ANY(char)
ALL_ANY(short)
ALL_ANY(int)
ALL_ANY(long)

// ---- Generic pointers: to_global/to_local/to_private (clang calls __to_global and so on) ----
#define STORAGE_WORKGROUP 4
#define STORAGE_CROSS_WORKGROUP 5
#define STORAGE_FUNCTION 7
global void* OVERLOAD __spirv_GenericCastToPtrExplicit_ToGlobal(generic void*, int);
local void* OVERLOAD __spirv_GenericCastToPtrExplicit_ToLocal(generic void*, int);
private void* OVERLOAD __spirv_GenericCastToPtrExplicit_ToPrivate(generic void*, int);
global void* __to_global(generic void* p) {
  return __spirv_GenericCastToPtrExplicit_ToGlobal(p, STORAGE_CROSS_WORKGROUP);
}
local void* __to_local(generic void* p) {
  return __spirv_GenericCastToPtrExplicit_ToLocal(p, STORAGE_WORKGROUP);
}
private void* __to_private(generic void* p) {
  return __spirv_GenericCastToPtrExplicit_ToPrivate(p, STORAGE_FUNCTION);
}
// A private pointer needs no fence: 0 is a valid answer.
static cl_mem_fence_flags fence_for(const generic void* p) {
  if (__to_local((generic void*)p)) return CLK_LOCAL_MEM_FENCE;
  return __to_global((generic void*)p) ? CLK_GLOBAL_MEM_FENCE : 0;
}
cl_mem_fence_flags OVERLOAD get_fence(generic void* p) { return fence_for(p); }
cl_mem_fence_flags OVERLOAD get_fence(const generic void* p) { return fence_for(p); }

// ---- C11 atomic_fetch_min/max, which the backend does not lower ----
// memory_order (relaxed 0, acquire 2, release 3, acq_rel 4, seq_cst 5) as SPIR-V semantics, on
// both memories a generic pointer may point into.
static int c11_semantics(memory_order order) {
  const int ordering[] = {SEM_RELAXED, SEM_ACQUIRE, SEM_ACQUIRE, SEM_RELEASE, SEM_ACQ_REL, 0x10};
  return ordering[order] | SEM_WORKGROUP_MEMORY | SEM_CROSS_WORKGROUP_MEMORY;
}
// memory_scope (work_item 0, work_group 1, device 2, all_svm_devices 3, sub_group 4) as a SPIR-V
// scope (CrossDevice 0, Device 1, Workgroup 2, Subgroup 3, Invocation 4).
static int c11_scope(memory_scope scope) {
  const int scopes[] = {4, SCOPE_WORKGROUP, SCOPE_DEVICE, 0, 3};
  return scopes[scope];
}
DECLARE_MINMAX(int, generic, S)
DECLARE_MINMAX(int, generic, U)
DECLARE_MINMAX(long, generic, S)
DECLARE_MINMAX(long, generic, U)
#define C11_MINMAX_FORM(OP, A, T, S, KIND)                                                      \
  T OVERLOAD atomic_fetch_##OP##_explicit(volatile generic A* p, T v, memory_order order,      \
                                          memory_scope scope) {                                 \
    return (T)__spirv_Atomic##KIND((volatile generic S*)p, c11_scope(scope),                    \
                                   c11_semantics(order), (S)v);                                 \
  }                                                                                             \
  T OVERLOAD atomic_fetch_##OP##_explicit(volatile generic A* p, T v, memory_order order) {    \
    return atomic_fetch_##OP##_explicit(p, v, order, memory_scope_device);                      \
  }                                                                                             \
  T OVERLOAD atomic_fetch_##OP(volatile generic A* p, T v) {                                    \
    return atomic_fetch_##OP##_explicit(p, v, memory_order_seq_cst, memory_scope_device);       \
  }
#define C11_MINMAX(A, T, S, KIND)               \
  C11_MINMAX_FORM(min, A, T, S, KIND##Min)      \
  C11_MINMAX_FORM(max, A, T, S, KIND##Max)
C11_MINMAX(atomic_int, int, int, S)
C11_MINMAX(atomic_uint, uint, int, U)
C11_MINMAX(atomic_long, long, long, S)
C11_MINMAX(atomic_ulong, ulong, long, U)

// ---- 64-bit weak compare-exchange: the backend's OpAtomicCompareExchangeWeak lacks the
// Int64Atomics capability; a strong exchange is a valid weak one ----
#define C11_WEAK_CAS(A, T)                                                                      \
  bool OVERLOAD atomic_compare_exchange_weak_explicit(volatile generic A* p, generic T* expected, \
                                                      T desired, memory_order success,          \
                                                      memory_order failure,                     \
                                                      memory_scope scope) {                     \
    return atomic_compare_exchange_strong_explicit(p, expected, desired, success, failure,     \
                                                   scope);                                      \
  }                                                                                             \
  bool OVERLOAD atomic_compare_exchange_weak_explicit(volatile generic A* p, generic T* expected, \
                                                      T desired, memory_order success,          \
                                                      memory_order failure) {                   \
    return atomic_compare_exchange_strong_explicit(p, expected, desired, success, failure);    \
  }                                                                                             \
  bool OVERLOAD atomic_compare_exchange_weak(volatile generic A* p, generic T* expected,         \
                                             T desired) {                                       \
    return atomic_compare_exchange_strong(p, expected, desired);                                \
  }
C11_WEAK_CAS(atomic_long, long)
C11_WEAK_CAS(atomic_ulong, ulong)
