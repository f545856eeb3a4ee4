// Work-group collective functions on NVIDIA GPUs (OpenCL C 3.0's
// __opencl_c_work_group_collective_functions): within a warp by shuffles, across the group's
// warps through a small __local scratch that the NVPTX pipeline defines (65 8-byte slots, static
// shared memory next to the launch's dynamic block: __manifold_collective_scratch, resolved in
// compiler/nvptx_pipeline.cpp). work_group_all/any are the hardware's barrier reductions.
//
// The scratch's two halves let consecutive collectives go without a trailing barrier: slots
// 0..31 (one partial per warp) are written before a collective's first barrier and read before
// its second; slots 32..64 (results) are written between the two and read after the second, so
// no work-item still reads a slot that the next collective writes.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#include "common.h"

#define WARP 32u
#define RESULT 32u          // the reduction's or broadcast's result
#define WARP_PREFIX 33u     // 33 + w: a scan's combined value through warp w

static uint group_items(void) {
  return (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2));
}
// Lanes of warp `warp` in a group of `items` work-items, and the shuffles' member mask for them.
static uint lanes_of(uint warp, uint items) { return min(WARP, items - warp * WARP); }
static uint member_mask(uint lanes) { return lanes == WARP ? 0xffffffffu : (1u << lanes) - 1u; }

// Shuffles of each type: 32-bit values as they are, 64-bit values as two halves.
static int down32(uint mask, int v, uint delta) {
  return __nvvm_shfl_sync_down_i32(mask, v, (int)delta, 0x1f);
}
static int up32(uint mask, int v, uint delta) {
  return __nvvm_shfl_sync_up_i32(mask, v, (int)delta, 0);
}
#define SHUFFLES_32(T)                                                                        \
  static T down_##T(uint mask, T v, uint delta) { return as_##T(down32(mask, as_int(v), delta)); } \
  static T up_##T(uint mask, T v, uint delta) { return as_##T(up32(mask, as_int(v), delta)); }
#define SHUFFLES_64(T)                                                  \
  static T down_##T(uint mask, T v, uint delta) {                       \
    int2 halves = as_int2(v);                                           \
    halves.x = down32(mask, halves.x, delta);                           \
    halves.y = down32(mask, halves.y, delta);                           \
    return as_##T(halves);                                              \
  }                                                                     \
  static T up_##T(uint mask, T v, uint delta) {                         \
    int2 halves = as_int2(v);                                           \
    halves.x = up32(mask, halves.x, delta);                             \
    halves.y = up32(mask, halves.y, delta);                             \
    return as_##T(halves);                                              \
  }
// 16-bit values widened to a 32-bit shuffle.
static half down_half(uint mask, half v, uint delta) {
  return as_half((short)down32(mask, as_short(v), delta));
}
static half up_half(uint mask, half v, uint delta) {
  return as_half((short)up32(mask, as_short(v), delta));
}
SHUFFLES_32(int)
SHUFFLES_32(uint)
SHUFFLES_32(float)
SHUFFLES_64(long)
SHUFFLES_64(ulong)
SHUFFLES_64(double)

#define COMBINE_add(a, b) ((a) + (b))
#define COMBINE_min(a, b) ((b) < (a) ? (b) : (a))
#define COMBINE_max(a, b) ((a) < (b) ? (b) : (a))
#define COMBINE_fmin(a, b) __builtin_elementwise_min((a), (b))
#define COMBINE_fmax(a, b) __builtin_elementwise_max((a), (b))

// Combines the first `lanes` values of the calling warp into lane 0's (a tree of shuffles down;
// a lane whose partner is past the last lane keeps its value).
#define WARP_REDUCE(T, COMBINE, value, lane, lanes, mask)              \
  for (uint delta = WARP / 2; delta > 0; delta /= 2) {                 \
    T other = down_##T(mask, value, delta);                            \
    if (lane + delta < lanes) value = COMBINE(value, other);           \
  }
// Inclusive scan of the calling warp's values (shuffles up).
#define WARP_SCAN(T, COMBINE, value, lane, mask)                       \
  for (uint delta = 1; delta < WARP; delta *= 2) {                     \
    T other = up_##T(mask, value, delta);                              \
    if (lane >= delta) value = COMBINE(other, value);                  \
  }

// OP names the operation in the function's name, COMBINE how two values combine.
#define COLLECTIVE_OP(T, OP, COMBINE, IDENTITY)                                               \
  OVL T work_group_reduce_##OP(T x) {                                                         \
    __local T* slots = (__local T*)__manifold_collective_scratch();                           \
    const uint id = (uint)get_local_linear_id(), items = group_items();                       \
    const uint lane = id % WARP, warp = id / WARP, warps = (items + WARP - 1) / WARP;         \
    const uint lanes = lanes_of(warp, items);                                                 \
    T value = x;                                                                              \
    WARP_REDUCE(T, COMBINE, value, lane, lanes, member_mask(lanes))                           \
    if (lane == 0) slots[warp] = value;                                                       \
    barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    if (warp == 0) {                                                                          \
      T total = slots[lane < warps ? lane : 0];                                               \
      WARP_REDUCE(T, COMBINE, total, lane, warps, member_mask(lanes))                         \
      if (lane == 0) slots[RESULT] = total;                                                   \
    }                                                                                         \
    barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    return slots[RESULT];                                                                     \
  }                                                                                           \
  /* The inclusive scan in the warp, and before it what the earlier warps combine to. */      \
  static T scan_##OP##_##T(T x, bool exclusive) {                                             \
    __local T* slots = (__local T*)__manifold_collective_scratch();                           \
    const uint id = (uint)get_local_linear_id(), items = group_items();                       \
    const uint lane = id % WARP, warp = id / WARP, warps = (items + WARP - 1) / WARP;         \
    const uint lanes = lanes_of(warp, items), mask = member_mask(lanes);                      \
    T value = x;                                                                              \
    WARP_SCAN(T, COMBINE, value, lane, mask)                                                  \
    if (lane == lanes - 1) slots[warp] = value;                                               \
    barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    if (warp == 0) {                                                                          \
      T through = slots[lane < warps ? lane : 0];                                             \
      WARP_SCAN(T, COMBINE, through, lane, mask)                                              \
      if (lane < warps) slots[WARP_PREFIX + lane] = through;                                  \
    }                                                                                         \
    barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    if (exclusive) {                                                                          \
      T before = up_##T(mask, value, 1);                                                      \
      value = lane == 0 ? (T)(IDENTITY) : before;                                             \
    }                                                                                         \
    return warp == 0 ? value : COMBINE(slots[WARP_PREFIX + warp - 1], value);                 \
  }                                                                                           \
  OVL T work_group_scan_inclusive_##OP(T x) { return scan_##OP##_##T(x, false); }            \
  OVL T work_group_scan_exclusive_##OP(T x) { return scan_##OP##_##T(x, true); }

#define BROADCAST(T)                                                                    \
  OVL T work_group_broadcast(T x, size_t local_id) {                                    \
    __local T* slots = (__local T*)__manifold_collective_scratch();                     \
    barrier(CLK_LOCAL_MEM_FENCE); /* the previous collective's readers are done */      \
    if (get_local_linear_id() == local_id) slots[RESULT] = x;                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                                       \
    return slots[RESULT];                                                               \
  }                                                                                     \
  OVL T work_group_broadcast(T x, size_t lx, size_t ly) {                               \
    return work_group_broadcast(x, ly * get_local_size(0) + lx);                        \
  }                                                                                     \
  OVL T work_group_broadcast(T x, size_t lx, size_t ly, size_t lz) {                    \
    return work_group_broadcast(x, (lz * get_local_size(1) + ly) * get_local_size(0) + lx); \
  }

#define INTEGER_COLLECTIVES(T, MIN_VALUE, MAX_VALUE) \
  COLLECTIVE_OP(T, add, COMBINE_add, 0)              \
  COLLECTIVE_OP(T, min, COMBINE_min, MAX_VALUE)      \
  COLLECTIVE_OP(T, max, COMBINE_max, MIN_VALUE)      \
  BROADCAST(T)
#define FLOAT_COLLECTIVES(T, INFINITE)               \
  COLLECTIVE_OP(T, add, COMBINE_add, 0)              \
  COLLECTIVE_OP(T, min, COMBINE_fmin, INFINITE)      \
  COLLECTIVE_OP(T, max, COMBINE_fmax, -INFINITE)     \
  BROADCAST(T)

INTEGER_COLLECTIVES(int, INT_MIN, INT_MAX)
INTEGER_COLLECTIVES(uint, 0u, UINT_MAX)
INTEGER_COLLECTIVES(long, LONG_MIN, LONG_MAX)
INTEGER_COLLECTIVES(ulong, 0ul, ULONG_MAX)
FLOAT_COLLECTIVES(float, INFINITY)
FLOAT_COLLECTIVES(double, (double)INFINITY)
FLOAT_COLLECTIVES(half, (half)INFINITY)

// bar.red.and / bar.red.or: a barrier that reduces a predicate over the whole group.
OVL int work_group_all(int predicate) { return __nvvm_bar0_and(predicate != 0) ? 1 : 0; }
OVL int work_group_any(int predicate) { return __nvvm_bar0_or(predicate != 0) ? 1 : 0; }
