// Work-group builtins: async copies and prefetch (6.15.13), work-group collectives (6.15.16).
//
// These run inside kernels before the work-group pass, so they use barriers and work-item
// queries like user code does. An async copy is shared among the work-items of the group
// (each copies every local-size'th element) and completes at wait_group_events, which is a
// barrier; the returned event carries nothing.
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

static size_t group_items(void) { return get_local_size(0) * get_local_size(1) * get_local_size(2); }

#define ASYNC_ALL(S) ALL_WIDTHS(ASYNC_COPY, S)
ASYNC_ALL(char) ASYNC_ALL(uchar) ASYNC_ALL(short) ASYNC_ALL(ushort) ASYNC_ALL(int)
ASYNC_ALL(uint) ASYNC_ALL(long) ASYNC_ALL(ulong) ASYNC_ALL(float) ASYNC_ALL(double)

OVL void wait_group_events(int count, __private event_t* events) {
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}
OVL void wait_group_events(int count, __generic event_t* events) {
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}

// ---- Collectives ----
// Each work-item deposits its value in the group's scratch, work-item 0 combines them, and
// everyone reads the result back; the trailing barrier lets the next collective reuse the
// scratch. The barriers are in straight-line code, so the work-group pass splits them cleanly.
#define COLLECTIVE_SLOTS(T) ((__local T*)__manifold_collective_scratch())

#define COMBINE_add(a, b) ((a) + (b))
#define COMBINE_min(a, b) min((a), (b))
#define COMBINE_max(a, b) max((a), (b))

#define REDUCE(T, OP, IDENTITY)                                       \
  OVL T work_group_reduce_##OP(T x) {                                 \
    __local T* slots = COLLECTIVE_SLOTS(T);                           \
    size_t id = get_local_linear_id(), n = group_items();             \
    slots[id] = x;                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                     \
    if (id == 0) {                                                    \
      T acc = slots[0];                                               \
      for (size_t i = 1; i < n; ++i) acc = COMBINE_##OP(acc, slots[i]); \
      slots[n] = acc;                                                 \
    }                                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                     \
    T result = slots[n];                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                     \
    return result;                                                    \
  }                                                                   \
  OVL T work_group_scan_inclusive_##OP(T x) {                         \
    __local T* slots = COLLECTIVE_SLOTS(T);                           \
    size_t id = get_local_linear_id(), n = group_items();             \
    slots[id] = x;                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                     \
    if (id == 0) {                                                    \
      for (size_t i = 1; i < n; ++i) slots[i] = COMBINE_##OP(slots[i - 1], slots[i]); \
    }                                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                     \
    T result = slots[id];                                             \
    barrier(CLK_LOCAL_MEM_FENCE);                                     \
    return result;                                                    \
  }                                                                   \
  OVL T work_group_scan_exclusive_##OP(T x) {                         \
    __local T* slots = COLLECTIVE_SLOTS(T);                           \
    size_t id = get_local_linear_id(), n = group_items();             \
    slots[id + 1] = x;                                                \
    barrier(CLK_LOCAL_MEM_FENCE);                                     \
    if (id == 0) {                                                    \
      slots[0] = (IDENTITY);                                          \
      for (size_t i = 1; i < n; ++i) slots[i] = COMBINE_##OP(slots[i - 1], slots[i]); \
    }                                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                     \
    T result = slots[id];                                             \
    barrier(CLK_LOCAL_MEM_FENCE);                                     \
    return result;                                                    \
  }
#define COLLECTIVES(T, MIN_VALUE, MAX_VALUE)                               \
  REDUCE(T, add, (T)0)                                                     \
  REDUCE(T, min, MAX_VALUE)                                                \
  REDUCE(T, max, MIN_VALUE)                                                \
  OVL T work_group_broadcast(T x, size_t local_id) {                       \
    __local T* slots = COLLECTIVE_SLOTS(T);                                \
    if (get_local_linear_id() == local_id) slots[0] = x;                   \
    barrier(CLK_LOCAL_MEM_FENCE);                                          \
    T result = slots[0];                                                   \
    barrier(CLK_LOCAL_MEM_FENCE);                                          \
    return result;                                                         \
  }                                                                        \
  OVL T work_group_broadcast(T x, size_t lx, size_t ly) {                  \
    return work_group_broadcast(x, ly * get_local_size(0) + lx);           \
  }                                                                        \
  OVL T work_group_broadcast(T x, size_t lx, size_t ly, size_t lz) {       \
    return work_group_broadcast(                                           \
        x, (lz * get_local_size(1) + ly) * get_local_size(0) + lx);        \
  }
COLLECTIVES(int, INT_MIN, INT_MAX)
COLLECTIVES(uint, 0u, UINT_MAX)
COLLECTIVES(long, LONG_MIN, LONG_MAX)
COLLECTIVES(ulong, 0ul, ULONG_MAX)
COLLECTIVES(float, -INFINITY, INFINITY)
COLLECTIVES(double, -(double)INFINITY, (double)INFINITY)
COLLECTIVES(half, -(half)INFINITY, (half)INFINITY)

OVL int work_group_all(int predicate) { return work_group_reduce_min(predicate != 0 ? 1 : 0); }
OVL int work_group_any(int predicate) { return work_group_reduce_max(predicate != 0 ? 1 : 0); }
