// What atomic read-modify-writes return when many work-items, whole warps of them, update one
// address at once: every returned value must fit one order of the operations (each work-item
// sees the effects of exactly those before it). On GPUs a warp's operations on one address may be
// combined into one (compiler/nvptx_warp_atomics.h); these kernels catch a combination whose
// results do not fit any order, and check the divergent and partial-warp paths beside it.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <vector>

#include "device_session.h"

namespace {

using namespace corpus;

const char* kAtomicResults = R"CL(
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
kernel void legacy(global uint* counter, global uint* counter_olds, global uint* words,
                   global uint* word_olds, global uint* cell, global uint* cell_olds,
                   global int* minimum, global int* sub, global int* sub_olds,
                   global uint* divergent, global uint* group_olds, local uint* group_counter) {
  uint gid = get_global_id(0);
  if (get_local_id(0) == 0) *group_counter = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  counter_olds[gid] = atomic_inc(counter);
  word_olds[gid] = atomic_or(&words[gid / 32], 1u << (gid % 32));
  cell_olds[gid] = atomic_xchg(cell, gid + 1);
  atomic_min(minimum, -(int)gid);  // the result unused
  sub_olds[gid] = atomic_sub(sub, 3);
  if (gid % 3 == 0) atomic_inc(divergent);
  group_olds[gid] = atomic_add(group_counter, 2u);
}
kernel void wide(global long* total, global long* olds, global ulong* bits, global ulong* bit_olds) {
  uint gid = get_global_id(0);
  olds[gid] = atom_add(total, 1L << 33);
  bit_olds[gid] = atom_xor(&bits[gid / 64], 1ul << (gid % 64));
}
)CL";

const char* kRelaxedResults = R"CL(
kernel void relaxed(global atomic_uint* counters, global uint* olds) {
  local atomic_uint group_counter;
  uint gid = get_global_id(0), n = get_global_size(0);
  if (get_local_id(0) == 0) atomic_init(&group_counter, 0);
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  olds[gid] = atomic_fetch_add_explicit(&counters[0], 1, memory_order_relaxed,
                                        memory_scope_device);
  olds[n + gid] = atomic_fetch_add_explicit(&counters[1], 1, memory_order_acq_rel,
                                            memory_scope_device);
  olds[2 * n + gid] = atomic_fetch_add_explicit(&group_counter, 1, memory_order_relaxed,
                                                memory_scope_work_group);
}
)CL";

template <typename T>
std::vector<T> sorted(std::vector<T> values) {
  std::sort(values.begin(), values.end());
  return values;
}

// first, first + step, ... (count values).
template <typename T>
std::vector<T> arithmetic(T first, T step, size_t count) {
  std::vector<T> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = T(first + step * T(i));
  return values;
}

// The olds of fetch-or (or fetch-xor onto zero) of distinct bits into one word, `width` updaters:
// in some order, each sees exactly the bits of those before it.
template <typename T>
void expect_bit_chain(const std::vector<T>& olds, size_t first, size_t width, const char* what) {
  std::vector<std::pair<int, size_t>> by_count;  // bits seen, updater
  for (size_t i = 0; i < width; ++i) by_count.push_back({std::popcount(olds[first + i]), i});
  std::sort(by_count.begin(), by_count.end());
  T seen = 0;
  for (size_t k = 0; k < width; ++k) {
    const size_t updater = by_count[k].second;
    ASSERT_EQ(olds[first + updater], seen) << what << " word " << first / width << ", the " << k
                                           << "th updater (bit " << updater << ")";
    seen |= T(1) << updater;
  }
}

TEST_F(KernelCorpus, AtomicResultsFitOneOrder) {
  const size_t n = 4096, local = 128;
  for_each_device([&](DeviceSession& s) {
    Program program = s.build(kAtomicResults);
    if (!program) return;
    Kernel legacy = s.kernel(program, "legacy");
    Mem Counter = s.buffer(std::vector<uint32_t>{0}), CounterOlds = s.buffer(n * 4),
        Words = s.buffer(std::vector<uint32_t>(n / 32, 0)), WordOlds = s.buffer(n * 4),
        Cell = s.buffer(std::vector<uint32_t>{0}), CellOlds = s.buffer(n * 4),
        Minimum = s.buffer(std::vector<int32_t>{0}), Sub = s.buffer(std::vector<int32_t>{1000000}),
        SubOlds = s.buffer(n * 4), Divergent = s.buffer(std::vector<uint32_t>{0}),
        GroupOlds = s.buffer(n * 4);
    s.set_args(legacy.get(), Counter, CounterOlds, Words, WordOlds, Cell, CellOlds, Minimum, Sub,
               SubOlds, Divergent, GroupOlds, DeviceSession::LocalBytes{4});
    s.run(legacy.get(), 1, &n, &local);
    EXPECT_EQ(s.read<uint32_t>(Counter.get(), 1)[0], n);
    EXPECT_EQ(sorted(s.read<uint32_t>(CounterOlds.get(), n)), arithmetic<uint32_t>(0, 1, n));
    EXPECT_EQ(s.read<uint32_t>(Words.get(), n / 32), std::vector<uint32_t>(n / 32, ~0u));
    const std::vector<uint32_t> word_olds = s.read<uint32_t>(WordOlds.get(), n);
    for (size_t w = 0; w < n / 32; ++w) expect_bit_chain(word_olds, w * 32, 32, "fetch_or");
    // Exchange: the cell's values, 0 and each work-item's, each seen exactly once.
    std::vector<uint32_t> cell = s.read<uint32_t>(CellOlds.get(), n);
    cell.push_back(s.read<uint32_t>(Cell.get(), 1)[0]);
    EXPECT_EQ(sorted(cell), arithmetic<uint32_t>(0, 1, n + 1));
    EXPECT_EQ(s.read<int32_t>(Minimum.get(), 1)[0], -int32_t(n - 1));
    EXPECT_EQ(s.read<int32_t>(Sub.get(), 1)[0], 1000000 - 3 * int32_t(n));
    EXPECT_EQ(sorted(s.read<int32_t>(SubOlds.get(), n)),
              arithmetic<int32_t>(1000000 - 3 * int32_t(n - 1), 3, n));
    EXPECT_EQ(s.read<uint32_t>(Divergent.get(), 1)[0], (n + 2) / 3);
    const std::vector<uint32_t> group_olds = s.read<uint32_t>(GroupOlds.get(), n);
    for (size_t g = 0; g < n / local; ++g)
      EXPECT_EQ(sorted(std::vector<uint32_t>(group_olds.begin() + g * local,
                                             group_olds.begin() + (g + 1) * local)),
                arithmetic<uint32_t>(0, 2, local))
          << "group " << g;

    if (!s.has_extension("cl_khr_int64_base_atomics")) return;
    Kernel wide = s.kernel(program, "wide");
    Mem Total = s.buffer(std::vector<int64_t>{5}), Olds = s.buffer(n * 8),
        Bits = s.buffer(std::vector<uint64_t>(n / 64, 0)), BitOlds = s.buffer(n * 8);
    s.set_args(wide.get(), Total, Olds, Bits, BitOlds);
    s.run(wide.get(), 1, &n, &local);
    EXPECT_EQ(s.read<int64_t>(Total.get(), 1)[0], 5 + (int64_t(n) << 33));
    EXPECT_EQ(sorted(s.read<int64_t>(Olds.get(), n)), arithmetic<int64_t>(5, int64_t(1) << 33, n));
    EXPECT_EQ(s.read<uint64_t>(Bits.get(), n / 64), std::vector<uint64_t>(n / 64, ~0ull));
    const std::vector<uint64_t> bit_olds = s.read<uint64_t>(BitOlds.get(), n);
    for (size_t w = 0; w < n / 64; ++w) expect_bit_chain(bit_olds, w * 64, 64, "atom_xor");
  });
}

TEST_F(KernelCorpus, RelaxedAndOrderedAtomicResultsFitOneOrder) {
  const size_t n = 2048, local = 256;
  for_each_device([&](DeviceSession& s) {
    if (!s.has_feature("__opencl_c_atomic_scope_device") ||
        !s.has_feature("__opencl_c_atomic_order_acq_rel"))
      return;
    Program program = s.build(kRelaxedResults, "-cl-std=CL3.0");
    if (!program) return;
    Kernel relaxed = s.kernel(program, "relaxed");
    Mem Counters = s.buffer(std::vector<uint32_t>{0, 0}), Olds = s.buffer(3 * n * 4);
    s.set_args(relaxed.get(), Counters, Olds);
    s.run(relaxed.get(), 1, &n, &local);
    EXPECT_EQ(s.read<uint32_t>(Counters.get(), 2),
              (std::vector<uint32_t>{uint32_t(n), uint32_t(n)}));
    const std::vector<uint32_t> olds = s.read<uint32_t>(Olds.get(), 3 * n);
    for (size_t c = 0; c < 2; ++c)
      EXPECT_EQ(sorted(std::vector<uint32_t>(olds.begin() + c * n, olds.begin() + (c + 1) * n)),
                arithmetic<uint32_t>(0, 1, n))
          << "counter " << c;
    for (size_t g = 0; g < n / local; ++g)
      EXPECT_EQ(sorted(std::vector<uint32_t>(olds.begin() + 2 * n + g * local,
                                             olds.begin() + 2 * n + (g + 1) * local)),
                arithmetic<uint32_t>(0, 1, local))
          << "group " << g;
  });
}

}  // namespace
