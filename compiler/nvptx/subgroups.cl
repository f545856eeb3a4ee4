// Sub-group functions on NVIDIA GPUs: OpenCL C 3.0's (cl_khr_subgroups, __opencl_c_subgroups) and
// those of cl_khr_subgroup_extended_types, _non_uniform_vote, _ballot, _non_uniform_arithmetic,
// _shuffle, _shuffle_relative and _clustered_reduce. Compiled for NVPTX at build time and linked
// before libclc (compiler/nvptx/nvptx.cmake).
//
// A sub-group is a warp: 32 consecutive local linear ids (CUDA forms warps so), the last warp of
// a group partial. Functions every work-item of a sub-group must reach name the whole warp as the
// members of the warp-synchronous instructions (lanes past the end of a partial warp count as
// exited, which those instructions do not wait for); the non-uniform ones name the lanes
// executing together (activemask). A computed member mask would be no warp-uniform value to
// ptxas, which then emits a loop over the masks per instruction (and failed to allocate
// predicates for some kernels on sm_90). Values move between lanes as 32-bit words (shfl.sync),
// wider ones word by word. 32-bit integer reductions over whole warps use redux.sync where the
// GPU has it (sm_80 on: NVVMReflect folds __CUDA_ARCH, so older GPUs never see it).
//
// half (cl_khr_fp16) is in every type list.
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#define INLINE __attribute__((always_inline))

size_t OVLC get_enqueued_local_size(uint dim);

// ---- work-item functions ----

INLINE static uint linear_id(void) {
  return (__nvvm_read_ptx_sreg_tid_z() * __nvvm_read_ptx_sreg_ntid_y() +
          __nvvm_read_ptx_sreg_tid_y()) *
             __nvvm_read_ptx_sreg_ntid_x() +
         __nvvm_read_ptx_sreg_tid_x();
}
INLINE static uint group_items(void) {
  return __nvvm_read_ptx_sreg_ntid_x() * __nvvm_read_ptx_sreg_ntid_y() *
         __nvvm_read_ptx_sreg_ntid_z();
}
INLINE static uint enqueued_items(void) {
  return (uint)(get_enqueued_local_size(0) * get_enqueued_local_size(1) *
                get_enqueued_local_size(2));
}

INLINE OVL uint get_sub_group_local_id(void) { return __nvvm_read_ptx_sreg_laneid(); }
INLINE OVL uint get_sub_group_id(void) { return linear_id() / 32; }
INLINE OVL uint get_sub_group_size(void) { return min(32u, group_items() - (linear_id() & ~31u)); }
INLINE OVL uint get_max_sub_group_size(void) { return min(32u, enqueued_items()); }
INLINE OVL uint get_num_sub_groups(void) { return (group_items() + 31) / 32; }
INLINE OVL uint get_enqueued_num_sub_groups(void) { return (enqueued_items() + 31) / 32; }

// The lanes of the calling sub-group: every lane but past the end of a partial last warp.
INLINE static uint all_lanes(void) { return ~0u >> (32 - get_sub_group_size()); }
INLINE static uint active_lanes(void) { return __nvvm_activemask(); }
#define WHOLE_WARP 0xffffffffu

// bar.warp.sync orders the memory accesses of the lanes it names, as the fence flags ask.
INLINE OVL void sub_group_barrier(cl_mem_fence_flags flags) { __nvvm_bar_warp_sync(WHOLE_WARP); }
INLINE OVL void sub_group_barrier(cl_mem_fence_flags flags, memory_scope scope) {
  __nvvm_bar_warp_sync(WHOLE_WARP);
}

// ---- moving values between lanes ----

INLINE static uint shuffle_word(uint members, uint word, uint source) {
  return (uint)__nvvm_shfl_sync_idx_i32(members, (int)word, (int)source, 0x1f);
}

// The value of lane `source`, for any type, `members` taking part: its 32-bit words one by one
// (the words past a narrow type's bytes are zeroed first, so that nothing undefined moves).
#define LANE_SHUFFLE(T)                                                     \
  INLINE static OVL T shuffle(uint members, T x, uint source) {            \
    union {                                                                \
      T value;                                                             \
      uint words[(sizeof(T) + 3) / 4];                                     \
    } u;                                                                   \
    u.words[(sizeof(T) + 3) / 4 - 1] = 0;                                  \
    u.value = x;                                                           \
    for (uint i = 0; i < (sizeof(T) + 3) / 4; ++i)                         \
      u.words[i] = shuffle_word(members, u.words[i], source);              \
    return u.value;                                                        \
  }

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
ALL_TYPES(LANE_SHUFFLE)

// A lane outside the sub-group (an undefined result) reads the last one.
#define BROADCASTS(T)                                                            \
  INLINE OVL T sub_group_broadcast(T x, uint id) {                               \
    return shuffle(WHOLE_WARP, x, min(id, get_sub_group_size() - 1));           \
  }                                                                              \
  INLINE OVL T sub_group_non_uniform_broadcast(T x, uint id) {                   \
    return shuffle(active_lanes(), x, min(id, get_sub_group_size() - 1));        \
  }
ALL_TYPES(BROADCASTS)

#define SHUFFLES(T)                                                                        \
  INLINE OVL T sub_group_broadcast_first(T x) {                                            \
    const uint lanes = active_lanes();                                                     \
    return shuffle(lanes, x, (uint)__builtin_ctz(lanes));                                  \
  }                                                                                        \
  INLINE OVL T sub_group_shuffle(T x, uint index) {                                        \
    return shuffle(active_lanes(), x, min(index, get_sub_group_size() - 1));               \
  }                                                                                        \
  INLINE OVL T sub_group_shuffle_xor(T x, uint mask) {                                     \
    return shuffle(active_lanes(), x, min(get_sub_group_local_id() ^ mask, 31u));          \
  }                                                                                        \
  INLINE OVL T sub_group_shuffle_up(T x, uint delta) {                                     \
    return shuffle(active_lanes(), x, (get_sub_group_local_id() - delta) & 31);            \
  }                                                                                        \
  INLINE OVL T sub_group_shuffle_down(T x, uint delta) {                                   \
    return shuffle(active_lanes(), x, min(get_sub_group_local_id() + delta, 31u));         \
  }
SCALAR_TYPES(SHUFFLES)

// ---- reductions and scans ----

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

// Over lanes 0 to n - 1 (a whole sub-group: "dense"), an inclusive scan in log2(32) steps over
// the warp's `members`; over any other set of `present` lanes (divergent code: "sparse"), one step
// per lane. A lane's exclusive scan is the inclusive scan of the lane before it. Functions all of
// a sub-group reaches take the dense forms only: a loop with shfl.sync whose trip count ptxas
// cannot see to be the same across the warp made it fail register allocation on sm_90.
#define SCANS(T, OP, IDENTITY)                                                           \
  INLINE static T dense_scan_##OP##_##T(uint members, T x, bool inclusive) {             \
    const uint lane = get_sub_group_local_id();                                          \
    T acc = x;                                                                           \
    for (uint d = 1; d < 32; d <<= 1) {                                                  \
      const T other = shuffle(members, acc, lane >= d ? lane - d : lane);                \
      if (lane >= d) acc = COMBINE_##OP(acc, other);                                     \
    }                                                                                    \
    if (inclusive) return acc;                                                           \
    const T before = shuffle(members, acc, lane > 0 ? lane - 1 : 0);                     \
    return lane > 0 ? before : (IDENTITY);                                               \
  }                                                                                      \
  /* The reduction: the inclusive scan of the last lane. */                             \
  INLINE static T dense_reduce_##OP##_##T(uint members, uint last, T x) {                \
    return shuffle(members, dense_scan_##OP##_##T(members, x, true), last);              \
  }                                                                                      \
  INLINE static T sparse_scan_##OP##_##T(uint present, T x, bool inclusive) {            \
    const uint lane = get_sub_group_local_id();                                          \
    T acc = (IDENTITY);                                                                  \
    for (uint m = present; m; m &= m - 1) {                                              \
      const uint source = (uint)__builtin_ctz(m);                                        \
      const T other = shuffle(present, x, source);                                       \
      if (source < lane || (inclusive && source == lane)) acc = COMBINE_##OP(acc, other); \
    }                                                                                    \
    return acc;                                                                          \
  }                                                                                      \
  INLINE static T sparse_reduce_##OP##_##T(uint present, T x) {                          \
    T acc = (IDENTITY);                                                                  \
    for (uint m = present; m; m &= m - 1)                                                \
      acc = COMBINE_##OP(acc, shuffle(present, x, (uint)__builtin_ctz(m)));              \
    return acc;                                                                          \
  }                                                                                      \
  /* Divergent code: dense where the active lanes happen to be 0 to n - 1. */           \
  INLINE static T scan_##OP##_##T(uint active, T x, bool inclusive) {                    \
    return (active & (active + 1)) == 0 ? dense_scan_##OP##_##T(active, x, inclusive)    \
                                        : sparse_scan_##OP##_##T(active, x, inclusive);  \
  }                                                                                      \
  INLINE static T reduce_##OP##_##T(uint active, T x) {                                  \
    return (active & (active + 1)) == 0                                                  \
               ? dense_reduce_##OP##_##T(active, 31 - __builtin_clz(active), x)          \
               : sparse_reduce_##OP##_##T(active, x);                                    \
  }                                                                                      \
  /* Clusters of `size` lanes, which every lane of the sub-group reaches: a tree toward   */ \
  /* each cluster's first lane in five fixed steps (lanes past the end of a partial warp  */ \
  /* are all after the present ones, so no present value is skipped), then that lane's    */ \
  /* result to its cluster. Loops over the lanes made ptxas fail register allocation on  */ \
  /* sm_90 in kernels that also scan in divergent code.                                  */ \
  INLINE static T clustered_##OP##_##T(T x, uint size) {                                \
    const uint lane = get_sub_group_local_id(), lanes = get_sub_group_size();           \
    T acc = x;                                                                          \
    for (uint d = 1; d < 32; d <<= 1) {                                                 \
      const T other = shuffle(WHOLE_WARP, acc, min(lane + d, 31u));                     \
      if (d < size && (lane & (2 * d - 1)) == 0 && lane + d < lanes)                    \
        acc = COMBINE_##OP(acc, other);                                                 \
    }                                                                                   \
    return shuffle(WHOLE_WARP, acc, lane & ~(min(size, 32u) - 1));                      \
  }

// redux.sync on sm_80 and later for 32-bit integer reductions over whole warps: one
// instruction. Whole warps are told by activemask, which ptxas knows to be the same across the
// warp: a branch on a value computed from the thread id around warp instructions made it fail
// register allocation on sm_90 (in kernels that also call clustered reductions).
#define REDUX(KIND, OP, T)                                                                 \
  if (__nvvm_reflect("__CUDA_ARCH") >= 800 && active_lanes() == ~0u) {                     \
    T result;                                                                              \
    __asm__ volatile("redux.sync." KIND " %0, %1, 0xffffffff;" : "=r"(result) : "r"(x));   \
    return result;                                                                         \
  }

// The functions of one operation over a whole sub-group (sub_group_*) and over the active lanes
// (sub_group_non_uniform_*); FAST: a faster reduction where one applies.
#define UNIFORM(T, OP, FAST)                                                              \
  INLINE OVL T sub_group_reduce_##OP(T x) {                                               \
    FAST;                                                                                 \
    return dense_reduce_##OP##_##T(WHOLE_WARP, get_sub_group_size() - 1, x);              \
  }                                                                                       \
  INLINE OVL T sub_group_scan_inclusive_##OP(T x) {                                       \
    return dense_scan_##OP##_##T(WHOLE_WARP, x, true);                                    \
  }                                                                                       \
  INLINE OVL T sub_group_scan_exclusive_##OP(T x) {                                       \
    return dense_scan_##OP##_##T(WHOLE_WARP, x, false);                                   \
  }
#define NON_UNIFORM(T, OP, FAST)                                                          \
  INLINE OVL T sub_group_non_uniform_reduce_##OP(T x) {                                   \
    FAST;                                                                                 \
    return reduce_##OP##_##T(active_lanes(), x);                                          \
  }                                                                                       \
  INLINE OVL T sub_group_non_uniform_scan_inclusive_##OP(T x) {                           \
    return scan_##OP##_##T(active_lanes(), x, true);                                      \
  }                                                                                       \
  INLINE OVL T sub_group_non_uniform_scan_exclusive_##OP(T x) {                           \
    return scan_##OP##_##T(active_lanes(), x, false);                                     \
  }

#define CLUSTERED(T, OP)                                                     \
  INLINE OVL T sub_group_clustered_reduce_##OP(T x, uint clustersize) {      \
    return clustered_##OP##_##T(x, clustersize);                            \
  }

#define ARITHMETIC(T, MIN_VALUE, MAX_VALUE, R_ADD, R_MIN, R_MAX)                       \
  SCANS(T, add, (T)0)                                                                  \
  SCANS(T, mul, (T)1)                                                                  \
  SCANS(T, min, MAX_VALUE)                                                             \
  SCANS(T, max, MIN_VALUE)                                                             \
  UNIFORM(T, add, R_ADD) UNIFORM(T, min, R_MIN) UNIFORM(T, max, R_MAX)                 \
  NON_UNIFORM(T, add, R_ADD) NON_UNIFORM(T, mul, ) NON_UNIFORM(T, min, R_MIN)          \
  NON_UNIFORM(T, max, R_MAX)                                                           \
  CLUSTERED(T, add) CLUSTERED(T, mul) CLUSTERED(T, min) CLUSTERED(T, max)

#define BITWISE(T, R_AND, R_OR, R_XOR)                                                 \
  SCANS(T, and, (T)~(T)0)                                                              \
  SCANS(T, or, (T)0)                                                                   \
  SCANS(T, xor, (T)0)                                                                  \
  NON_UNIFORM(T, and, R_AND) NON_UNIFORM(T, or, R_OR) NON_UNIFORM(T, xor, R_XOR)       \
  CLUSTERED(T, and) CLUSTERED(T, or) CLUSTERED(T, xor)

ARITHMETIC(char, CHAR_MIN, CHAR_MAX, , , )
ARITHMETIC(uchar, (uchar)0, UCHAR_MAX, , , )
ARITHMETIC(short, SHRT_MIN, SHRT_MAX, , , )
ARITHMETIC(ushort, (ushort)0, USHRT_MAX, , , )
ARITHMETIC(int, INT_MIN, INT_MAX, REDUX("add.s32", add, int), REDUX("min.s32", min, int),
           REDUX("max.s32", max, int))
ARITHMETIC(uint, 0u, UINT_MAX, REDUX("add.u32", add, uint), REDUX("min.u32", min, uint),
           REDUX("max.u32", max, uint))
ARITHMETIC(long, LONG_MIN, LONG_MAX, , , )
ARITHMETIC(ulong, 0ul, ULONG_MAX, , , )
ARITHMETIC(float, -INFINITY, INFINITY, , , )
ARITHMETIC(double, -(double)INFINITY, (double)INFINITY, , , )
ARITHMETIC(half, -(half)INFINITY, (half)INFINITY, , , )
BITWISE(char, , , ) BITWISE(uchar, , , ) BITWISE(short, , , ) BITWISE(ushort, , , )
BITWISE(int, REDUX("and.b32", and, int), REDUX("or.b32", or, int), REDUX("xor.b32", xor, int))
BITWISE(uint, REDUX("and.b32", and, uint), REDUX("or.b32", or, uint), REDUX("xor.b32", xor, uint))
BITWISE(long, , , ) BITWISE(ulong, , , )

// Logical operations take and give predicates (int, 1 or 0).
SCANS(int, logical_and, 1)
SCANS(int, logical_or, 0)
SCANS(int, logical_xor, 0)
#define LOGICAL(OP)                                                                        \
  INLINE OVL int sub_group_non_uniform_reduce_logical_##OP(int predicate) {               \
    return reduce_logical_##OP##_int(active_lanes(), predicate != 0);                        \
  }                                                                                        \
  INLINE OVL int sub_group_non_uniform_scan_inclusive_logical_##OP(int predicate) {       \
    return scan_logical_##OP##_int(active_lanes(), predicate != 0, true);                    \
  }                                                                                        \
  INLINE OVL int sub_group_non_uniform_scan_exclusive_logical_##OP(int predicate) {       \
    return scan_logical_##OP##_int(active_lanes(), predicate != 0, false);                   \
  }                                                                                        \
  INLINE OVL int sub_group_clustered_reduce_logical_##OP(int predicate, uint clustersize) { \
    return clustered_logical_##OP##_int(predicate != 0, clustersize);                        \
  }
LOGICAL(and)
LOGICAL(or)
LOGICAL(xor)

// ---- votes ----

INLINE OVL int sub_group_all(int predicate) { return __nvvm_vote_all_sync(WHOLE_WARP, predicate != 0); }
INLINE OVL int sub_group_any(int predicate) { return __nvvm_vote_any_sync(WHOLE_WARP, predicate != 0); }
INLINE OVL int sub_group_non_uniform_all(int predicate) {
  return __nvvm_vote_all_sync(active_lanes(), predicate != 0);
}
INLINE OVL int sub_group_non_uniform_any(int predicate) {
  return __nvvm_vote_any_sync(active_lanes(), predicate != 0);
}
INLINE OVL int sub_group_elect(void) {
  return get_sub_group_local_id() == (uint)__builtin_ctz(active_lanes());
}

#define ALL_EQUAL(T)                                                    \
  INLINE OVL int sub_group_non_uniform_all_equal(T x) {                 \
    const uint lanes = active_lanes();                                  \
    const T first = shuffle(lanes, x, (uint)__builtin_ctz(lanes));      \
    return __nvvm_vote_all_sync(lanes, x == first);                     \
  }
SCALAR_TYPES(ALL_EQUAL)

// ---- ballots: bit i of the uint4 in component i / 32; a warp needs only .x ----

// The lanes of a sub-group as wide as the widest (get_max_sub_group_size()): the bits of a
// ballot that name sub-group local ids.
INLINE static uint max_lanes(void) {
  const uint size = get_max_sub_group_size();
  return size >= 32 ? ~0u : (1u << size) - 1;
}

INLINE OVL uint4 sub_group_ballot(int predicate) {
  return (uint4)(__nvvm_vote_ballot_sync(active_lanes(), predicate != 0), 0, 0, 0);
}
INLINE OVL int sub_group_inverse_ballot(uint4 value) {
  return (value.x >> get_sub_group_local_id()) & 1;
}
INLINE OVL int sub_group_ballot_bit_extract(uint4 value, uint index) {
  return (value[index / 32 & 3] >> (index % 32)) & 1;
}
INLINE OVL uint sub_group_ballot_bit_count(uint4 value) { return popcount(value.x & max_lanes()); }
INLINE OVL uint sub_group_ballot_inclusive_scan(uint4 value) {
  return popcount(value.x & (uint)__nvvm_read_ptx_sreg_lanemask_le());
}
INLINE OVL uint sub_group_ballot_exclusive_scan(uint4 value) {
  return popcount(value.x & (uint)__nvvm_read_ptx_sreg_lanemask_lt());
}
INLINE OVL uint sub_group_ballot_find_lsb(uint4 value) {
  const uint bits = value.x & max_lanes();
  return bits ? (uint)__builtin_ctz(bits) : UINT_MAX;
}
INLINE OVL uint sub_group_ballot_find_msb(uint4 value) {
  const uint bits = value.x & max_lanes();
  return bits ? 31 - (uint)__builtin_clz(bits) : UINT_MAX;
}

INLINE OVL uint4 get_sub_group_eq_mask(void) {
  return (uint4)((uint)__nvvm_read_ptx_sreg_lanemask_eq(), 0, 0, 0);
}
INLINE OVL uint4 get_sub_group_ge_mask(void) {
  return (uint4)((uint)__nvvm_read_ptx_sreg_lanemask_ge() & max_lanes(), 0, 0, 0);
}
INLINE OVL uint4 get_sub_group_gt_mask(void) {
  return (uint4)((uint)__nvvm_read_ptx_sreg_lanemask_gt() & max_lanes(), 0, 0, 0);
}
INLINE OVL uint4 get_sub_group_le_mask(void) {
  return (uint4)((uint)__nvvm_read_ptx_sreg_lanemask_le(), 0, 0, 0);
}
INLINE OVL uint4 get_sub_group_lt_mask(void) {
  return (uint4)((uint)__nvvm_read_ptx_sreg_lanemask_lt(), 0, 0, 0);
}
