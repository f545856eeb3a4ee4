// Sub-group functions for the CPU device: OpenCL C 3.0's (6.15.17, __opencl_c_subgroups) and
// those of cl_khr_subgroup_extended_types, _non_uniform_vote, _ballot, _non_uniform_arithmetic,
// _shuffle, _shuffle_relative and _clustered_reduce.
//
// A sub-group is get_max_sub_group_size() consecutive local linear ids, the last one of a group
// partial. Work-items exchange values through one 128-byte slot each (the widest type, double16)
// and meet at __manifold_sub_group_barrier(), where the work-group pass makes a sub-group's
// work-items wait for each other (compiler/workgroup.cpp, sub-group mode). The work-items that
// arrive at such a barrier together are the active ones of the function that called it:
// __manifold_sub_group_active() gives their lanes as a bit mask. Each exchange ends with a
// second barrier, so that no work-item writes its slot again before all have read.
//
// half (cl_khr_fp16) is in every type list.
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

// Resolved by the work-group pass.
void __manifold_sub_group_barrier(void);
ulong __manifold_sub_group_active(void);
__private uchar* __manifold_sub_group_exchange(void);
uint OVLC get_sub_group_size(void);
uint OVLC get_max_sub_group_size(void);
uint OVLC get_sub_group_local_id(void);

#define SLOT(T, lane) ((__private T*)(__manifold_sub_group_exchange() + 128 * (size_t)(lane)))

// The linear id of the running sub-group's first work-item.
static size_t first_lane(void) { return get_local_linear_id() - get_sub_group_local_id(); }

// Every work-item of a group waits at a work-group barrier: a sub-group barrier for each is one.
OVL void sub_group_barrier(cl_mem_fence_flags flags) { __manifold_sub_group_barrier(); }
OVL void sub_group_barrier(cl_mem_fence_flags flags, memory_scope scope) {
  __manifold_sub_group_barrier();
}

// Deposits x, waits for the sub-group, and returns the value of lane `source` (a sub-group
// local id).
// A lane outside the sub-group (an undefined result) reads the last one's slot.
#define EXCHANGE(T)                                                               \
  static OVL T exchange(T x, uint source) {                                       \
    *SLOT(T, get_local_linear_id()) = x;                                          \
    __manifold_sub_group_barrier();                                               \
    T result = *SLOT(T, first_lane() + min(source, get_sub_group_size() - 1));    \
    __manifold_sub_group_barrier();                                               \
    return result;                                                                \
  }                                                                               \
  OVL T sub_group_broadcast(T x, uint id) { return exchange(x, id); } \
  OVL T sub_group_non_uniform_broadcast(T x, uint id) { return exchange(x, id); }

#define SCALAR_TYPES(M)                                                                 \
  M(char) M(uchar) M(short) M(ushort) M(int) M(uint) M(long) M(ulong) M(float) M(double) \
  M(half)
#define VECTOR_TYPES(M, T) M(T##2) M(T##3) M(T##4) M(T##8) M(T##16)
#define ALL_TYPES(M)                                                                      \
  SCALAR_TYPES(M)                                                                         \
  VECTOR_TYPES(M, char) VECTOR_TYPES(M, uchar) VECTOR_TYPES(M, short)                     \
  VECTOR_TYPES(M, ushort) VECTOR_TYPES(M, int) VECTOR_TYPES(M, uint) VECTOR_TYPES(M, long) \
  VECTOR_TYPES(M, ulong) VECTOR_TYPES(M, float) VECTOR_TYPES(M, double)                  \
  VECTOR_TYPES(M, half)
ALL_TYPES(EXCHANGE)

// ---- Shuffles (cl_khr_subgroup_shuffle, _shuffle_relative) ----
#define SHUFFLES(T)                                                                          \
  OVL T sub_group_shuffle(T x, uint index) { return exchange(x, index); }                    \
  OVL T sub_group_shuffle_xor(T x, uint mask) {                                              \
    return exchange(x, get_sub_group_local_id() ^ mask);                                     \
  }                                                                                          \
  OVL T sub_group_shuffle_up(T x, uint delta) {                                              \
    return exchange(x, get_sub_group_local_id() - delta);                                    \
  }                                                                                          \
  OVL T sub_group_shuffle_down(T x, uint delta) {                                            \
    return exchange(x, get_sub_group_local_id() + delta);                                    \
  }
SCALAR_TYPES(SHUFFLES)

// ---- Reductions and scans over the active work-items ----
// Each work-item combines the slots of the active lanes it needs, in lane order: for
// sub_group_reduce_* and sub_group_scan_* every lane of the sub-group is active.

#define COMBINE_add(a, b) ((a) + (b))
#define COMBINE_mul(a, b) ((a) * (b))
#define COMBINE_min(a, b) min((a), (b))
#define COMBINE_max(a, b) max((a), (b))
#define COMBINE_and(a, b) ((a) & (b))
#define COMBINE_or(a, b) ((a) | (b))
#define COMBINE_xor(a, b) ((a) ^ (b))
#define COMBINE_logical_and(a, b) ((a) && (b))
#define COMBINE_logical_or(a, b) ((a) || (b))
#define COMBINE_logical_xor(a, b) (!(a) != !(b))

// Combines the slots of the active lanes in `lanes` (a mask of sub-group local ids), starting
// from `identity`.
#define COMBINE_LANES(T, OP, IDENTITY)                                                  \
  static T combine_##OP##_##T(ulong lanes) {                                           \
    size_t first = first_lane();                                                       \
    T acc = IDENTITY;                                                                  \
    for (ulong m = lanes; m; m &= m - 1)                                               \
      acc = COMBINE_##OP(acc, *SLOT(T, first + (uint)__builtin_ctzl(m)));              \
    return acc;                                                                        \
  }

// Deposits x, waits, combines the lanes `which` selects of the active ones, waits again.
#define GATHER(T, OP, which)                                        \
  ({                                                                \
    *SLOT(T, get_local_linear_id()) = x;                            \
    __manifold_sub_group_barrier();                                 \
    T result = combine_##OP##_##T(__manifold_sub_group_active() & (which)); \
    __manifold_sub_group_barrier();                                 \
    result;                                                         \
  })

// Lanes up to this one, and below it.
#define UP_TO_ME (2ul << get_sub_group_local_id()) - 1
#define BELOW_ME (1ul << get_sub_group_local_id()) - 1

#define OPERATION(T, OP, IDENTITY, PREFIX)                                                  \
  OVL T PREFIX##reduce_##OP(T x) { return GATHER(T, OP, ~0ul); }                           \
  OVL T PREFIX##scan_inclusive_##OP(T x) { return GATHER(T, OP, UP_TO_ME); }               \
  OVL T PREFIX##scan_exclusive_##OP(T x) { return GATHER(T, OP, BELOW_ME); }

// The lanes of this work-item's cluster: clusters of `size` consecutive lanes.
#define CLUSTER(size) (((size) >= 64 ? ~0ul : (1ul << (size)) - 1) << (get_sub_group_local_id() & ~((size) - 1)))

#define CLUSTERED(T, OP)                                                    \
  OVL T sub_group_clustered_reduce_##OP(T x, uint clustersize) {           \
    return GATHER(T, OP, CLUSTER(clustersize));                            \
  }

// sub_group_reduce/scan (core: int, uint, long, ulong, float, double; char, uchar, short, ushort
// with cl_khr_subgroup_extended_types) and the non-uniform and clustered forms.
#define ARITHMETIC(T, MIN_VALUE, MAX_VALUE)                    \
  COMBINE_LANES(T, add, (T)0)                                  \
  COMBINE_LANES(T, mul, (T)1)                                  \
  COMBINE_LANES(T, min, MAX_VALUE)                             \
  COMBINE_LANES(T, max, MIN_VALUE)                             \
  OPERATION(T, add, (T)0, sub_group_)                          \
  OPERATION(T, min, MAX_VALUE, sub_group_)                     \
  OPERATION(T, max, MIN_VALUE, sub_group_)                     \
  OPERATION(T, add, (T)0, sub_group_non_uniform_)              \
  OPERATION(T, mul, (T)1, sub_group_non_uniform_)              \
  OPERATION(T, min, MAX_VALUE, sub_group_non_uniform_)         \
  OPERATION(T, max, MIN_VALUE, sub_group_non_uniform_)         \
  CLUSTERED(T, add) CLUSTERED(T, mul) CLUSTERED(T, min) CLUSTERED(T, max)

#define BITWISE(T)                                     \
  COMBINE_LANES(T, and, (T)~(T)0)                      \
  COMBINE_LANES(T, or, (T)0)                           \
  COMBINE_LANES(T, xor, (T)0)                          \
  OPERATION(T, and, (T)~(T)0, sub_group_non_uniform_)  \
  OPERATION(T, or, (T)0, sub_group_non_uniform_)       \
  OPERATION(T, xor, (T)0, sub_group_non_uniform_)      \
  CLUSTERED(T, and) CLUSTERED(T, or) CLUSTERED(T, xor)

ARITHMETIC(char, CHAR_MIN, CHAR_MAX)
ARITHMETIC(uchar, (uchar)0, UCHAR_MAX)
ARITHMETIC(short, SHRT_MIN, SHRT_MAX)
ARITHMETIC(ushort, (ushort)0, USHRT_MAX)
ARITHMETIC(int, INT_MIN, INT_MAX)
ARITHMETIC(uint, 0u, UINT_MAX)
ARITHMETIC(long, LONG_MIN, LONG_MAX)
ARITHMETIC(ulong, 0ul, ULONG_MAX)
ARITHMETIC(float, -INFINITY, INFINITY)
ARITHMETIC(double, -(double)INFINITY, (double)INFINITY)
ARITHMETIC(half, -(half)INFINITY, (half)INFINITY)
BITWISE(char) BITWISE(uchar) BITWISE(short) BITWISE(ushort)
BITWISE(int) BITWISE(uint) BITWISE(long) BITWISE(ulong)

// Logical operations take and give predicates (int, 1 or 0).
COMBINE_LANES(int, logical_and, 1)
COMBINE_LANES(int, logical_or, 0)
COMBINE_LANES(int, logical_xor, 0)
#define LOGICAL(OP, IDENTITY)                                                         \
  OVL int sub_group_non_uniform_reduce_logical_##OP(int predicate) {                 \
    int x = predicate != 0;                                                           \
    return GATHER(int, logical_##OP, ~0ul);                                           \
  }                                                                                   \
  OVL int sub_group_non_uniform_scan_inclusive_logical_##OP(int predicate) {         \
    int x = predicate != 0;                                                           \
    return GATHER(int, logical_##OP, UP_TO_ME);                                       \
  }                                                                                   \
  OVL int sub_group_non_uniform_scan_exclusive_logical_##OP(int predicate) {         \
    int x = predicate != 0;                                                           \
    return GATHER(int, logical_##OP, BELOW_ME);                                       \
  }                                                                                   \
  OVL int sub_group_clustered_reduce_logical_##OP(int predicate, uint clustersize) { \
    int x = predicate != 0;                                                           \
    return GATHER(int, logical_##OP, CLUSTER(clustersize));                           \
  }
LOGICAL(and, 1)
LOGICAL(or, 0)
LOGICAL(xor, 0)

// ---- Votes ----
OVL int sub_group_all(int predicate) {
  int x = predicate != 0;
  return GATHER(int, logical_and, ~0ul);
}
OVL int sub_group_any(int predicate) {
  int x = predicate != 0;
  return GATHER(int, logical_or, ~0ul);
}
OVL int sub_group_non_uniform_all(int predicate) { return sub_group_all(predicate); }
OVL int sub_group_non_uniform_any(int predicate) { return sub_group_any(predicate); }

OVL int sub_group_elect(void) {
  __manifold_sub_group_barrier();
  const ulong active = __manifold_sub_group_active();
  return get_sub_group_local_id() == (uint)__builtin_ctzl(active);
}

#define ALL_EQUAL(T)                                                  \
  OVL int sub_group_non_uniform_all_equal(T x) {                      \
    *SLOT(T, get_local_linear_id()) = x;                              \
    __manifold_sub_group_barrier();                                   \
    const size_t first = first_lane();                                \
    int equal = 1;                                                    \
    for (ulong m = __manifold_sub_group_active(); m; m &= m - 1)      \
      equal &= *SLOT(T, first + (uint)__builtin_ctzl(m)) == x;        \
    __manifold_sub_group_barrier();                                   \
    return equal;                                                     \
  }
SCALAR_TYPES(ALL_EQUAL)

// ---- Ballots (cl_khr_subgroup_ballot): masks of sub-group local ids, bit i of the uint4 in
// component i / 32 ----

static uint4 as_ballot(ulong mask) { return (uint4)((uint)mask, (uint)(mask >> 32), 0, 0); }
static ulong from_ballot(uint4 value) { return (ulong)value.x | ((ulong)value.y << 32); }
// The lanes of a sub-group as wide as the widest (get_max_sub_group_size()): the bits of a
// ballot that name sub-group local ids (the CTS counts them so in partial sub-groups too).
static ulong max_lanes(void) {
  const uint size = get_max_sub_group_size();
  return size >= 64 ? ~0ul : (1ul << size) - 1;
}

OVL uint4 sub_group_ballot(int predicate) {
  *SLOT(int, get_local_linear_id()) = predicate;
  __manifold_sub_group_barrier();
  const size_t first = first_lane();
  ulong ballot = 0;
  for (ulong m = __manifold_sub_group_active(); m; m &= m - 1) {
    const uint lane = (uint)__builtin_ctzl(m);
    if (*SLOT(int, first + lane)) ballot |= 1ul << lane;
  }
  __manifold_sub_group_barrier();
  return as_ballot(ballot);
}

OVL int sub_group_inverse_ballot(uint4 value) {
  return (value[get_sub_group_local_id() / 32] >> (get_sub_group_local_id() % 32)) & 1;
}
OVL int sub_group_ballot_bit_extract(uint4 value, uint index) {
  return (value[index / 32] >> (index % 32)) & 1;
}
OVL uint sub_group_ballot_bit_count(uint4 value) {
  return popcount(from_ballot(value) & max_lanes());
}
OVL uint sub_group_ballot_inclusive_scan(uint4 value) {
  return popcount(from_ballot(value) & (UP_TO_ME));
}
OVL uint sub_group_ballot_exclusive_scan(uint4 value) {
  return popcount(from_ballot(value) & (BELOW_ME));
}
OVL uint sub_group_ballot_find_lsb(uint4 value) {
  const ulong bits = from_ballot(value) & max_lanes();
  return bits ? (uint)__builtin_ctzl(bits) : UINT_MAX;
}
OVL uint sub_group_ballot_find_msb(uint4 value) {
  const ulong bits = from_ballot(value) & max_lanes();
  return bits ? 63 - (uint)__builtin_clzl(bits) : UINT_MAX;
}

OVL uint4 get_sub_group_eq_mask(void) { return as_ballot(1ul << get_sub_group_local_id()); }
OVL uint4 get_sub_group_ge_mask(void) {
  return as_ballot(max_lanes() & ~((1ul << get_sub_group_local_id()) - 1));
}
OVL uint4 get_sub_group_gt_mask(void) {
  return as_ballot(max_lanes() & ~((2ul << get_sub_group_local_id()) - 1));
}
OVL uint4 get_sub_group_le_mask(void) { return as_ballot((2ul << get_sub_group_local_id()) - 1); }
OVL uint4 get_sub_group_lt_mask(void) { return as_ballot((1ul << get_sub_group_local_id()) - 1); }

#define BROADCAST_FIRST(T)                                                   \
  OVL T sub_group_broadcast_first(T x) {                                     \
    *SLOT(T, get_local_linear_id()) = x;                                     \
    __manifold_sub_group_barrier();                                          \
    T result = *SLOT(T, first_lane() + (uint)__builtin_ctzl(__manifold_sub_group_active())); \
    __manifold_sub_group_barrier();                                          \
    return result;                                                           \
  }
SCALAR_TYPES(BROADCAST_FIRST)
