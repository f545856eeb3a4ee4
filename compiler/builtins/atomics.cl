// Atomic builtins: OpenCL 1.x atomic_* / atom_* (sections 6.15.12.x of 1.2) and the C11-style
// functions of OpenCL C 2.0+ (6.15.12), for every address space a program can name.
//
// On the CPU all address spaces are ordinary memory, so everything maps onto clang's
// __atomic / __opencl_atomic builtins (LLVM atomicrmw / cmpxchg / load / store). The 1.x
// functions are relaxed read-modify-writes as the 1.x specification allows (x86 executes
// them as locked instructions, which are sequentially consistent anyway).
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

// ---- OpenCL 1.x: atomic_* (int, uint) and atom_* (int, uint, long, ulong) ----
#define LEGACY_RMW(PREFIX, AS, T)                                                             \
  OVL T PREFIX##_add(volatile AS T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); } \
  OVL T PREFIX##_sub(volatile AS T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); } \
  OVL T PREFIX##_xchg(volatile AS T* p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); } \
  OVL T PREFIX##_inc(volatile AS T* p) { return __atomic_fetch_add(p, (T)1, __ATOMIC_RELAXED); }  \
  OVL T PREFIX##_dec(volatile AS T* p) { return __atomic_fetch_sub(p, (T)1, __ATOMIC_RELAXED); }  \
  OVL T PREFIX##_min(volatile AS T* p, T v) { return __atomic_fetch_min(p, v, __ATOMIC_RELAXED); } \
  OVL T PREFIX##_max(volatile AS T* p, T v) { return __atomic_fetch_max(p, v, __ATOMIC_RELAXED); } \
  OVL T PREFIX##_and(volatile AS T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); } \
  OVL T PREFIX##_or(volatile AS T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }   \
  OVL T PREFIX##_xor(volatile AS T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); } \
  OVL T PREFIX##_cmpxchg(volatile AS T* p, T expected, T desired) {                             \
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED,                 \
                                __ATOMIC_RELAXED);                                              \
    return expected;                                                                            \
  }
// The unqualified-pointer forms (generic in 2.0+ programs) are included for completeness.
#define LEGACY_FOR_AS(AS, unused)                                                    \
  LEGACY_RMW(atomic, AS, int) LEGACY_RMW(atomic, AS, uint)                           \
  LEGACY_RMW(atom, AS, int) LEGACY_RMW(atom, AS, uint)                               \
  LEGACY_RMW(atom, AS, long) LEGACY_RMW(atom, AS, ulong)                             \
  OVL float atomic_xchg(volatile AS float* p, float v) {                             \
    return as_float(__atomic_exchange_n((volatile AS int*)p, as_int(v), __ATOMIC_RELAXED)); \
  }
LEGACY_FOR_AS(__global, 0)
LEGACY_FOR_AS(__local, 0)
LEGACY_FOR_AS(__generic, 0)

// ---- C11-style atomics (OpenCL C 2.0+) ----
// Every form calls the one with an explicit order and scope. On NVPTX that one stays a function
// of its own until the NVPTX pipeline has specialized its calls by their scope
// (compiler/nvptx_atomics.h: clang's NVPTX target drops OpenCL's scopes).
// __manifold_memory_scope keeps the scope parameter in use (else the optimizer drops it from the
// calls here, as the NVPTX IR does not read it); the pipeline removes those calls.
#ifdef __NVPTX__
#define SCOPED __attribute__((overloadable, noinline))
void __manifold_memory_scope(memory_scope scope);
#define KEEP_SCOPE(scope) __manifold_memory_scope(scope)
#else
#define SCOPED OVL
#define KEEP_SCOPE(scope)
#endif

// A: atomic type, C: its value type, for each object address space.
#define C11_BASIC(AS, A, C)                                                                  \
  OVL void atomic_init(volatile AS A* object, C value) { __opencl_atomic_init(object, value); } \
  SCOPED void atomic_store_explicit(volatile AS A* object, C value, memory_order order,      \
                                    memory_scope scope) {                                    \
    KEEP_SCOPE(scope);                                                                       \
    __opencl_atomic_store(object, value, order, scope);                                      \
  }                                                                                          \
  OVL void atomic_store(volatile AS A* object, C value) {                                    \
    atomic_store_explicit(object, value, memory_order_seq_cst, memory_scope_device);         \
  }                                                                                          \
  OVL void atomic_store_explicit(volatile AS A* object, C value, memory_order order) {       \
    atomic_store_explicit(object, value, order, memory_scope_device);                        \
  }                                                                                          \
  SCOPED C atomic_load_explicit(volatile AS A* object, memory_order order,                   \
                                memory_scope scope) {                                        \
    KEEP_SCOPE(scope);                                                                       \
    return __opencl_atomic_load(object, order, scope);                                       \
  }                                                                                          \
  OVL C atomic_load(volatile AS A* object) {                                                 \
    return atomic_load_explicit(object, memory_order_seq_cst, memory_scope_device);          \
  }                                                                                          \
  OVL C atomic_load_explicit(volatile AS A* object, memory_order order) {                    \
    return atomic_load_explicit(object, order, memory_scope_device);                         \
  }                                                                                          \
  SCOPED C atomic_exchange_explicit(volatile AS A* object, C value, memory_order order,      \
                                    memory_scope scope) {                                    \
    KEEP_SCOPE(scope);                                                                       \
    return __opencl_atomic_exchange(object, value, order, scope);                            \
  }                                                                                          \
  OVL C atomic_exchange(volatile AS A* object, C value) {                                    \
    return atomic_exchange_explicit(object, value, memory_order_seq_cst, memory_scope_device); \
  }                                                                                          \
  OVL C atomic_exchange_explicit(volatile AS A* object, C value, memory_order order) {       \
    return atomic_exchange_explicit(object, value, order, memory_scope_device);              \
  }

// compare_exchange for one object address space and one `expected` address space.
#define C11_CMPXCHG(AS, EAS, A, C, KIND)                                                       \
  SCOPED bool atomic_compare_exchange_##KIND##_explicit(volatile AS A* object, EAS C* expected, \
                                                        C desired, memory_order success,       \
                                                        memory_order failure,                  \
                                                        memory_scope scope) {                  \
    KEEP_SCOPE(scope);                                                                         \
    return __opencl_atomic_compare_exchange_##KIND(object, expected, desired, success,         \
                                                   failure, scope);                            \
  }                                                                                            \
  OVL bool atomic_compare_exchange_##KIND(volatile AS A* object, EAS C* expected, C desired) { \
    return atomic_compare_exchange_##KIND##_explicit(object, expected, desired,                \
                                                     memory_order_seq_cst, memory_order_seq_cst, \
                                                     memory_scope_device);                     \
  }                                                                                            \
  OVL bool atomic_compare_exchange_##KIND##_explicit(volatile AS A* object, EAS C* expected,   \
                                                     C desired, memory_order success,          \
                                                     memory_order failure) {                   \
    return atomic_compare_exchange_##KIND##_explicit(object, expected, desired, success,       \
                                                     failure, memory_scope_device);            \
  }
#define C11_CMPXCHG_BOTH(AS, EAS, A, C) C11_CMPXCHG(AS, EAS, A, C, strong) \
  C11_CMPXCHG(AS, EAS, A, C, weak)

// fetch_<op> for integer atomics; M is the operand type (ptrdiff_t for atomic_uintptr_t).
#define C11_FETCH_OP(AS, A, C, M, OP)                                                          \
  SCOPED C atomic_fetch_##OP##_explicit(volatile AS A* object, M operand, memory_order order,  \
                                        memory_scope scope) {                                  \
    KEEP_SCOPE(scope);                                                                         \
    return __opencl_atomic_fetch_##OP(object, operand, order, scope);                          \
  }                                                                                            \
  OVL C atomic_fetch_##OP(volatile AS A* object, M operand) {                                  \
    return atomic_fetch_##OP##_explicit(object, operand, memory_order_seq_cst,                 \
                                        memory_scope_device);                                  \
  }                                                                                            \
  OVL C atomic_fetch_##OP##_explicit(volatile AS A* object, M operand, memory_order order) {   \
    return atomic_fetch_##OP##_explicit(object, operand, order, memory_scope_device);          \
  }
#define C11_FETCH_ALL(AS, A, C)                                                  \
  C11_FETCH_OP(AS, A, C, C, add) C11_FETCH_OP(AS, A, C, C, sub)                  \
  C11_FETCH_OP(AS, A, C, C, or) C11_FETCH_OP(AS, A, C, C, xor)                   \
  C11_FETCH_OP(AS, A, C, C, and) C11_FETCH_OP(AS, A, C, C, min)                  \
  C11_FETCH_OP(AS, A, C, C, max)

#define C11_FLAG(AS)                                                                           \
  SCOPED bool atomic_flag_test_and_set_explicit(volatile AS atomic_flag* object,               \
                                                memory_order order, memory_scope scope) {      \
    KEEP_SCOPE(scope);                                                                         \
    return __opencl_atomic_exchange((volatile AS atomic_int*)object, 1, order, scope);         \
  }                                                                                            \
  OVL bool atomic_flag_test_and_set(volatile AS atomic_flag* object) {                         \
    return atomic_flag_test_and_set_explicit(object, memory_order_seq_cst, memory_scope_device); \
  }                                                                                            \
  OVL bool atomic_flag_test_and_set_explicit(volatile AS atomic_flag* object,                  \
                                             memory_order order) {                             \
    return atomic_flag_test_and_set_explicit(object, order, memory_scope_device);              \
  }                                                                                            \
  SCOPED void atomic_flag_clear_explicit(volatile AS atomic_flag* object, memory_order order,  \
                                         memory_scope scope) {                                 \
    KEEP_SCOPE(scope);                                                                         \
    __opencl_atomic_store((volatile AS atomic_int*)object, 0, order, scope);                   \
  }                                                                                            \
  OVL void atomic_flag_clear(volatile AS atomic_flag* object) {                                \
    atomic_flag_clear_explicit(object, memory_order_seq_cst, memory_scope_device);             \
  }                                                                                            \
  OVL void atomic_flag_clear_explicit(volatile AS atomic_flag* object, memory_order order) {   \
    atomic_flag_clear_explicit(object, order, memory_scope_device);                            \
  }

#define C11_TYPES(AS)                                                              \
  C11_BASIC(AS, atomic_int, int) C11_BASIC(AS, atomic_uint, uint)                  \
  C11_BASIC(AS, atomic_long, long) C11_BASIC(AS, atomic_ulong, ulong)              \
  C11_BASIC(AS, atomic_float, float) C11_BASIC(AS, atomic_double, double)          \
  C11_FETCH_ALL(AS, atomic_int, int) C11_FETCH_ALL(AS, atomic_uint, uint)          \
  C11_FETCH_ALL(AS, atomic_long, long) C11_FETCH_ALL(AS, atomic_ulong, ulong)      \
  C11_FETCH_OP(AS, atomic_uintptr_t, uintptr_t, ptrdiff_t, add)                    \
  C11_FETCH_OP(AS, atomic_uintptr_t, uintptr_t, ptrdiff_t, sub)                    \
  C11_FLAG(AS)
#define C11_CMPXCHG_TYPES(AS, EAS)                                                       \
  C11_CMPXCHG_BOTH(AS, EAS, atomic_int, int) C11_CMPXCHG_BOTH(AS, EAS, atomic_uint, uint) \
  C11_CMPXCHG_BOTH(AS, EAS, atomic_long, long)                                           \
  C11_CMPXCHG_BOTH(AS, EAS, atomic_ulong, ulong)                                         \
  C11_CMPXCHG_BOTH(AS, EAS, atomic_float, float)                                         \
  C11_CMPXCHG_BOTH(AS, EAS, atomic_double, double)

// Programs with the generic address space call the generic forms; OpenCL C 2.0/3.0 programs
// without it call the named ones (object in global or local memory, expected anywhere).
C11_TYPES(__generic)
C11_TYPES(__global)
C11_TYPES(__local)
C11_CMPXCHG_TYPES(__generic, __generic)
C11_CMPXCHG_TYPES(__global, __global)
C11_CMPXCHG_TYPES(__global, __local)
C11_CMPXCHG_TYPES(__global, __private)
C11_CMPXCHG_TYPES(__local, __global)
C11_CMPXCHG_TYPES(__local, __local)
C11_CMPXCHG_TYPES(__local, __private)

// ---- Fences ----
#ifdef __NVPTX__
// A fence of __local memory alone orders it for the work-group, whose memory it is, whatever the
// scope asked for: membar.cta. mem_fence and its kin are work-group fences (OpenCL C 2.0, 6.13.9).
SCOPED void atomic_work_item_fence(cl_mem_fence_flags flags, memory_order order,
                                   memory_scope scope) {
  KEEP_SCOPE(scope);
  if (order == memory_order_relaxed) return;
  if (!(flags & (CLK_GLOBAL_MEM_FENCE | CLK_IMAGE_MEM_FENCE)) && scope != memory_scope_work_item)
    __nvvm_membar_cta();
  else if (order == memory_order_seq_cst)
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
  else
    __atomic_thread_fence(__ATOMIC_ACQ_REL);
}
void OVL mem_fence(cl_mem_fence_flags flags) { __nvvm_membar_cta(); }
void OVL read_mem_fence(cl_mem_fence_flags flags) { __nvvm_membar_cta(); }
void OVL write_mem_fence(cl_mem_fence_flags flags) { __nvvm_membar_cta(); }
#else
// Work-items of a group run on one thread, so fences only order memory between threads
// (other work-groups, the host). x86 keeps stores ordered; a sequentially consistent fence is
// only needed for seq_cst.
void OVL atomic_work_item_fence(cl_mem_fence_flags flags, memory_order order,
                                memory_scope scope) {
  if (order == memory_order_seq_cst)
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
  else if (order != memory_order_relaxed)
    __atomic_thread_fence(__ATOMIC_ACQ_REL);
}
void OVL mem_fence(cl_mem_fence_flags flags) { __atomic_thread_fence(__ATOMIC_ACQ_REL); }
void OVL read_mem_fence(cl_mem_fence_flags flags) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
void OVL write_mem_fence(cl_mem_fence_flags flags) { __atomic_thread_fence(__ATOMIC_RELEASE); }
#endif
