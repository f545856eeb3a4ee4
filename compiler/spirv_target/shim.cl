// What LLVM's SPIR-V backend leaves unresolved (imports no driver provides), compiled for
// spirv64 at build time and linked lazily into programs before code generation: the OpenCL 1.x
// atomic functions it does not lower itself, the legacy fences, ldexp of a vector by a scalar
// exponent (the backend keeps the exponent scalar, which OpenCL.std's ldexp forbids), and
// all/any (the backend gives OpAll/OpAny the integer vector itself where they take booleans). Each is written with the
// SPIR-V instruction it stands for (__spirv_* calls, which the backend turns into instructions).
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
