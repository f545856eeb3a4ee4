// Kernels compiled by manifold_compiler and run by CpuExecutable, checked against the host.
#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/binary_format.h"
#include "compiler/compiler.h"
#include "jit_test_util.h"

namespace manifold::compiler {
namespace {

using cpu::CpuExecutable;

using jit_test::build_and_load;
using jit_test::host;
using jit_test::range_1d;

TEST(CpuRun, VectorAdd) {
  auto exe = build_and_load(R"(
    __kernel void vadd(__global const float* a, __global const float* b, __global float* c) {
      size_t i = get_global_id(0);
      c[i] = a[i] + b[i];
    })");
  ASSERT_NE(exe, nullptr);
  const size_t n = 1000;
  std::vector<float> a(n), b(n), c(n, -1);
  for (size_t i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = float(2 * i);
  }
  void* pa = a.data();
  void* pb = b.data();
  void* pc = c.data();
  const void* args[] = {&pa, &pb, &pc};
  exe->run("vadd", range_1d(n, 100), args, nullptr);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], float(3 * i)) << i;
}

// A binary whose machine code was made for other CPU features is compiled again from its bitcode
// when it is loaded (the JIT's IR compiler, which makes its target machine only then), on
// threads that have built nothing before as well.
TEST(CpuRun, BinaryForOtherFeaturesIsCompiledFromItsBitcode) {
  BuildOutput out = build(R"(
    __kernel void scale(__global const float* a, __global float* b, float s) {
      size_t i = get_global_id(0);
      b[i] = a[i] * s + 1.0f;
    })",
                          "", host());
  ASSERT_TRUE(out.success) << out.log;
  Target other = host();
  other.features += other.features.empty() ? "-avx512f" : ",-avx512f";
  auto load_and_run = [&] {
    std::string error;
    auto exe = CpuExecutable::load(out.binary, other, &error);
    ASSERT_NE(exe, nullptr) << error;
    const size_t n = 333;
    std::vector<float> a(n), b(n, -1);
    for (size_t i = 0; i < n; ++i) a[i] = float(i);
    void* pa = a.data();
    void* pb = b.data();
    float s = 3.0f;
    const void* args[] = {&pa, &pb, &s};
    exe->run("scale", range_1d(n, 37), args, nullptr);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(b[i], float(3 * i + 1)) << i;
  };
  load_and_run();
  std::thread fresh_thread(load_and_run);
  fresh_thread.join();
}

// Tree reduction in __local memory: barriers inside a loop whose trip count is uniform.
// Many values carried through a uniform loop and a barrier: the work-group form keeps them in
// per-work-item slot arrays (float2 and float4 chains split into 24 scalars), laid out with a cache
// line between arrays where the group has room for it. Every group size, the smallest ones
// included, computes each work-item's own chains and nothing overlaps the next array.
TEST(CpuRun, ManyLoopCarriedValuesInEveryGroupSize) {
  auto exe = build_and_load(R"(
    __kernel void chains(__global float* out, float a, float b) {
      float2 x0 = (float2)(get_global_id(0), 1.0f);
      float2 x1 = x0 + 1.0f, x2 = x0 + 2.0f, x3 = x0 + 3.0f;
      float4 y0 = (float4)(get_global_id(0)) + (float4)(0, 1, 2, 3), y1 = y0 * 2.0f;
      for (int i = 0; i < 5; ++i) {
        x0 = x0 * a + b; x1 = x1 * a + b; x2 = x2 * a + b; x3 = x3 * a + b;
        y0 = y0 * a + b; y1 = y1 * a - b;
      }
      // The barrier keeps every group size in the work-group form, and the chains live across it.
      barrier(CLK_LOCAL_MEM_FENCE);
      float2 x = (x0 + x1) + (x2 + x3);
      float4 y = y0 + y1;
      out[get_global_id(0)] = x.x + 2.0f * x.y + y.x + y.y + y.z + y.w;
    })");
  ASSERT_NE(exe, nullptr);
  const float a = 0.5f, b = 1.0f;
  auto expected = [&](size_t id) {
    auto chain = [&](float v, float add) {
      for (int i = 0; i < 5; ++i) v = v * a + add;
      return v;
    };
    const float g = float(id);
    float x = 0, x_second = 0, y = 0;
    for (int c = 0; c < 4; ++c) {
      x += chain(g + float(c), b);
      x_second += chain(1.0f + float(c), b);
    }
    for (int lane = 0; lane < 4; ++lane) {
      y += chain(g + float(lane), b);
      y += chain(2.0f * (g + float(lane)), -b);
    }
    return x + 2.0f * x_second + y;
  };
  for (size_t local : {1, 2, 3, 4, 5, 7, 8, 16, 33, 64, 256}) {
    const size_t n = local * 3;
    std::vector<float> out(n, -1.0f);
    void* p = out.data();
    const void* args[] = {&p, &a, &b};
    exe->run("chains", range_1d(n, local), args, nullptr);
    for (size_t i = 0; i < n; ++i)
      ASSERT_NEAR(out[i], expected(i), 1e-3f * std::max(1.0f, std::fabs(expected(i))))
          << "local size " << local << ", work-item " << i;
  }
}

// A loop every work-item runs the same number of times is unrolled (its iterations become
// regions of the work-group form): trip counts around and below the unroll count, and zero.
TEST(CpuRun, UniformLoopWithRuntimeTripCountInEveryGroupSize) {
  auto exe = build_and_load(R"(
    __kernel void chains(__global float* out, float a, float b, int n) {
      float x0 = get_global_id(0), x1 = x0 + 1.0f, x2 = x0 + 2.0f, x3 = x0 + 3.0f;
      for (int i = 0; i < n; ++i) {
        x0 = x0 * a + b; x1 = x1 * a + b; x2 = x2 * a - b; x3 = x3 * a - b;
      }
      out[get_global_id(0)] = (x0 + x1) + 2.0f * (x2 + x3);
    })");
  ASSERT_NE(exe, nullptr);
  const float a = 0.5f, b = 1.0f;
  for (int n : {0, 1, 3, 7, 8, 9, 17, 100}) {
    auto expected = [&](size_t id) {
      float x[4] = {float(id), float(id) + 1, float(id) + 2, float(id) + 3};
      for (int i = 0; i < n; ++i) {
        x[0] = x[0] * a + b;
        x[1] = x[1] * a + b;
        x[2] = x[2] * a - b;
        x[3] = x[3] * a - b;
      }
      return (x[0] + x[1]) + 2.0f * (x[2] + x[3]);
    };
    for (size_t local : {1, 3, 16, 64}) {
      const size_t items = local * 5;
      std::vector<float> out(items, -1.0f);
      void* p = out.data();
      const void* args[] = {&p, &a, &b, &n};
      exe->run("chains", range_1d(items, local), args, nullptr);
      for (size_t i = 0; i < items; ++i)
        ASSERT_NEAR(out[i], expected(i), 1e-4f * std::max(1.0f, std::fabs(expected(i))))
            << "n " << n << ", local size " << local << ", work-item " << i;
    }
  }
}

// A loop of a constant trip count beside barriers, as pyopencl's scan kernels have (256
// iterations whose index divides by the trip count): the step-loop unrolling must not leave it to
// be expanded whole, which made such kernels' code 60 times larger and their builds take minutes.
TEST(CpuRun, ConstantTripCountLoopsBesideBarriersStayLoops) {
  const char* source = R"(
    #define K 256
    #define WG 16
    struct item { int value; };
    __attribute__((reqd_work_group_size(WG, 1, 1)))
    kernel void scan_like(global const int* in, global int* out, long begin, long end) {
      local struct item ldata[K + 1][WG + 1];
      for (long base = begin; base + K * WG <= end; base += K * WG) {
        for (long k = 0; k < K; k++) {
          const long offset = k * WG + (long)get_local_id(0);
          ldata[offset % K][offset / K].value = in[base + offset];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        int sum = ldata[0][get_local_id(0)].value;
        for (long k = 1; k < K; k++) {
          sum += ldata[k][get_local_id(0)].value;
          ldata[k][get_local_id(0)].value = sum;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (long k = 0; k < K; k++) {
          const long offset = k * WG + (long)get_local_id(0);
          out[base + offset] = ldata[offset % K][offset / K].value;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
      }
    })";
  BuildOutput built = build(source, "", host());
  ASSERT_TRUE(built.success) << built.log;
  std::string error;
  std::optional<ProgramBinary> binary = deserialize(built.binary, &error);
  ASSERT_TRUE(binary) << error;
  EXPECT_LT(binary->object.size(), 64u * 1024) << "the loops were expanded";

  auto exe = build_and_load(source);
  ASSERT_NE(exe, nullptr);
  const size_t K = 256, WG = 16, units = 2, n = K * WG * units;
  std::vector<int32_t> in(n), out(n, -1);
  for (size_t i = 0; i < n; ++i) in[i] = int32_t(i % 7) - 3;
  void* pin = in.data();
  void* pout = out.data();
  const int64_t begin = 0, end = int64_t(n);
  const void* args[] = {&pin, &pout, &begin, &end};
  exe->run("scan_like", range_1d(WG, WG), args, nullptr);
  // The host model: ldata[offset % K][offset / K] = in[offset]; each column is a prefix sum
  // along k; the output reads ldata back at the same place.
  for (size_t unit = 0; unit < units; ++unit) {
    std::vector<int32_t> ldata((K + 1) * (WG + 1), 0);
    for (size_t offset = 0; offset < K * WG; ++offset)
      ldata[(offset % K) * (WG + 1) + offset / K] = in[unit * K * WG + offset];
    for (size_t column = 0; column < WG; ++column)
      for (size_t k = 1; k < K; ++k)
        ldata[k * (WG + 1) + column] += ldata[(k - 1) * (WG + 1) + column];
    for (size_t offset = 0; offset < K * WG; ++offset)
      ASSERT_EQ(out[unit * K * WG + offset], ldata[(offset % K) * (WG + 1) + offset / K])
          << "unit " << unit << ", offset " << offset;
  }
}

// Which kernels may run with groups the CPU device chooses (KernelExec::partition_independent)
// and, for groups of one work-item, what each computes either way.
TEST(CpuRun, GroupsOfOneWorkItem) {
  const char* source = R"(
    __kernel void global_only(__global uint* out, uint rounds) {
      uint x = get_global_id(0);
      for (uint i = 0; i < rounds; ++i) x = (x * 1664525u + 1013904223u) ^ (x >> 7);
      out[get_global_id(0) - get_global_offset(0)] = x + get_global_size(0) * get_work_dim();
    }
    __kernel void group_ids(__global uint* out) {
      out[get_global_id(0)] = get_group_id(0) * 10 + get_local_id(0) + 1000 * get_local_size(0) +
                              100000 * get_num_groups(0);
    }
    __kernel void local_argument(__global uint* out, __local uint* scratch) {
      scratch[0] = get_global_id(0);
      out[get_global_id(0)] = scratch[0];
    }
    __kernel void local_variable(__global uint* out) {
      __local uint shared;
      shared = get_global_id(0);
      out[get_global_id(0)] = shared;
    }
    __kernel void with_barrier(__global uint* out) {
      barrier(CLK_GLOBAL_MEM_FENCE);
      out[get_global_id(0)] = get_global_id(0);
    })";
  BuildOutput built = build(source, "", host());
  ASSERT_TRUE(built.success) << built.log;
  std::string error;
  std::optional<ProgramBinary> binary = deserialize(built.binary, &error);
  ASSERT_TRUE(binary) << error;
  for (size_t i = 0; i < binary->kernels.size(); ++i)
    EXPECT_EQ(binary->execs[i].partition_independent, binary->kernels[i].name == "global_only")
        << binary->kernels[i].name;

  auto exe = build_and_load(source);
  ASSERT_NE(exe, nullptr);
  const uint32_t rounds = 50;
  for (size_t items : {1, 15, 16, 17, 1000, 4099}) {
    for (size_t offset : {0, 5}) {
      NDRange range = range_1d(items, 1);
      range.global_offset[0] = offset;
      std::vector<uint32_t> out(items, 0);
      void* p = out.data();
      const void* args[] = {&p, &rounds};
      exe->run("global_only", range, args, nullptr);
      for (size_t i = 0; i < items; ++i) {
        uint32_t x = static_cast<uint32_t>(i + offset);
        for (uint32_t r = 0; r < rounds; ++r) x = (x * 1664525u + 1013904223u) ^ (x >> 7);
        ASSERT_EQ(out[i], x + static_cast<uint32_t>(items)) << items << " items, work-item " << i;
      }
    }
    std::vector<uint32_t> out(items, 0);
    void* p = out.data();
    const void* args[] = {&p};
    exe->run("group_ids", range_1d(items, 1), args, nullptr);
    for (size_t i = 0; i < items; ++i)
      ASSERT_EQ(out[i], i * 10 + 1000 + 100000 * items) << items << " items, work-item " << i;
  }
}

TEST(CpuRun, LocalReductionWithBarrierInLoop) {
  auto exe = build_and_load(R"(
    __kernel void reduce(__global const int* in, __global int* out, __local int* scratch) {
      size_t lid = get_local_id(0);
      scratch[lid] = in[get_global_id(0)];
      barrier(CLK_LOCAL_MEM_FENCE);
      for (size_t stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
        if (lid < stride) scratch[lid] += scratch[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      if (lid == 0) out[get_group_id(0)] = scratch[0];
    })");
  ASSERT_NE(exe, nullptr);
  const size_t n = 4096, local = 128, groups = n / local;
  std::vector<int> in(n), out(groups, 0);
  for (size_t i = 0; i < n; ++i) in[i] = int(i % 97) - 40;
  void* pin = in.data();
  void* pout = out.data();
  const void* args[] = {&pin, &pout, nullptr};
  const size_t local_sizes[] = {0, 0, local * sizeof(int)};
  exe->run("reduce", range_1d(n, local), args, local_sizes);
  for (size_t g = 0; g < groups; ++g) {
    int expected = std::accumulate(in.begin() + g * local, in.begin() + (g + 1) * local, 0);
    ASSERT_EQ(out[g], expected) << "group " << g;
  }
}

// A barrier inside an if whose condition is the same for the whole work-group, with private
// values live across it.
TEST(CpuRun, BarrierInUniformIf) {
  auto exe = build_and_load(R"(
    __kernel void k(__global int* data, int mode) {
      __local int tile[64];
      size_t lid = get_local_id(0);
      int mine = data[get_global_id(0)] * 3;
      if (mode > 0) {
        tile[lid] = mine;
        barrier(CLK_LOCAL_MEM_FENCE);
        mine = tile[63 - lid] + 1;
      } else {
        mine = -mine;
      }
      data[get_global_id(0)] = mine;
    })");
  ASSERT_NE(exe, nullptr);
  for (int mode : {1, 0}) {
    std::vector<int> data(256);
    std::iota(data.begin(), data.end(), 0);
    void* p = data.data();
    const void* args[] = {&p, &mode};
    exe->run("k", range_1d(256, 64), args, nullptr);
    for (int i = 0; i < 256; ++i) {
      int group = i / 64, lid = i % 64;
      int expected = mode > 0 ? (group * 64 + 63 - lid) * 3 + 1 : -i * 3;
      ASSERT_EQ(data[i], expected) << "mode " << mode << " item " << i;
    }
  }
}

// Hillis-Steele inclusive scan in local memory: barriers in a loop, a value read before and
// written after each barrier.
TEST(CpuRun, PrefixSum) {
  auto exe = build_and_load(R"(
    __kernel void scan(__global const uint* in, __global uint* out, __local uint* a,
                       __local uint* b) {
      uint lid = get_local_id(0), n = get_local_size(0);
      __local uint* src = a;
      __local uint* dst = b;
      src[lid] = in[get_global_id(0)];
      barrier(CLK_LOCAL_MEM_FENCE);
      for (uint offset = 1; offset < n; offset *= 2) {
        uint v = src[lid];
        if (lid >= offset) v += src[lid - offset];
        dst[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        __local uint* t = src; src = dst; dst = t;
      }
      out[get_global_id(0)] = src[lid];
    })");
  ASSERT_NE(exe, nullptr);
  const size_t n = 1024, local = 256;
  std::vector<uint32_t> in(n), out(n);
  for (size_t i = 0; i < n; ++i) in[i] = uint32_t(i * 7 % 13);
  void* pin = in.data();
  void* pout = out.data();
  const void* args[] = {&pin, &pout, nullptr, nullptr};
  const size_t local_sizes[] = {0, 0, local * 4, local * 4};
  exe->run("scan", range_1d(n, local), args, local_sizes);
  for (size_t g = 0; g < n / local; ++g) {
    uint32_t sum = 0;
    for (size_t i = 0; i < local; ++i) {
      sum += in[g * local + i];
      ASSERT_EQ(out[g * local + i], sum) << g << " " << i;
    }
  }
}

// 2D transpose through a padded __local tile.
TEST(CpuRun, MatrixTransposeThroughLocalMemory) {
  auto exe = build_and_load(R"(
    #define TILE 16
    __kernel void transpose(__global const float* in, __global float* out, int width, int height) {
      __local float tile[TILE][TILE + 1];
      int x = get_global_id(0), y = get_global_id(1);
      int lx = get_local_id(0), ly = get_local_id(1);
      if (x < width && y < height) tile[ly][lx] = in[y * width + x];
      barrier(CLK_LOCAL_MEM_FENCE);
      int tx = get_group_id(1) * TILE + lx, ty = get_group_id(0) * TILE + ly;
      if (tx < height && ty < width) out[ty * height + tx] = tile[lx][ly];
    })");
  ASSERT_NE(exe, nullptr);
  const int width = 80, height = 48;
  std::vector<float> in(width * height), out(width * height, -1);
  for (int i = 0; i < width * height; ++i) in[i] = float(i);
  void* pin = in.data();
  void* pout = out.data();
  const void* args[] = {&pin, &pout, &width, &height};
  NDRange r;
  r.work_dim = 2;
  r.global_size[0] = width;
  r.global_size[1] = height;
  r.local_size[0] = 16;
  r.local_size[1] = 16;
  exe->run("transpose", r, args, nullptr);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      ASSERT_EQ(out[x * height + y], in[y * width + x]) << x << "," << y;
}

TEST(CpuRun, AtomicsHistogram) {
  auto exe = build_and_load(R"(
    __kernel void histogram(__global const uchar* data, __global uint* bins, __local uint* local_bins) {
      uint lid = get_local_id(0);
      for (uint i = lid; i < 16; i += get_local_size(0)) local_bins[i] = 0;
      barrier(CLK_LOCAL_MEM_FENCE);
      atomic_inc(&local_bins[data[get_global_id(0)] % 16]);
      barrier(CLK_LOCAL_MEM_FENCE);
      for (uint i = lid; i < 16; i += get_local_size(0)) atomic_add(&bins[i], local_bins[i]);
    })");
  ASSERT_NE(exe, nullptr);
  const size_t n = 1 << 16;
  std::vector<uint8_t> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = uint8_t((i * 2654435761u) >> 13);
  std::vector<uint32_t> bins(16, 0), expected(16, 0);
  for (uint8_t v : data) ++expected[v % 16];
  void* pd = data.data();
  void* pb = bins.data();
  const void* args[] = {&pd, &pb, nullptr};
  const size_t local_sizes[] = {0, 0, 16 * sizeof(uint32_t)};
  exe->run("histogram", range_1d(n, 64), args, local_sizes);
  EXPECT_EQ(bins, expected);
}

// The work-items of a group contend on __local atomics (which the CPU runs as plain accesses, one
// work-item after another): every increment and every exchange counts, in every group size.
TEST(CpuRun, LocalAtomicsCountInEveryGroupSize) {
  auto exe = build_and_load(R"(
    __kernel void count(__global uint* out, __local atomic_uint* slots) {
      if (get_local_id(0) == 0) {
        atomic_init(&slots[0], 0);
        atomic_init(&slots[1], 0);
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int i = 0; i < 100; ++i) {
        atomic_fetch_add_explicit(&slots[0], 1, memory_order_relaxed, memory_scope_work_group);
        uint seen = atomic_load_explicit(&slots[1], memory_order_acquire, memory_scope_work_group);
        while (!atomic_compare_exchange_weak_explicit(&slots[1], &seen, seen + 2,
                                                      memory_order_acq_rel, memory_order_acquire,
                                                      memory_scope_work_group)) {
        }
      }
      atomic_inc((volatile __local uint*)&slots[1]);
      barrier(CLK_LOCAL_MEM_FENCE);
      if (get_local_id(0) == 0) {
        out[2 * get_group_id(0)] = atomic_load(&slots[0]);
        out[2 * get_group_id(0) + 1] = atomic_load(&slots[1]);
      }
    })",
                            "-cl-std=CL3.0");
  ASSERT_NE(exe, nullptr);
  for (size_t local : {1, 3, 16, 64, 256}) {
    const size_t groups = 4;
    std::vector<uint32_t> out(2 * groups, 0);
    void* po = out.data();
    const void* args[] = {&po, nullptr};
    const size_t local_sizes[] = {0, 2 * sizeof(uint32_t)};
    exe->run("count", range_1d(groups * local, local), args, local_sizes);
    for (size_t g = 0; g < groups; ++g) {
      EXPECT_EQ(out[2 * g], 100 * local) << local;
      EXPECT_EQ(out[2 * g + 1], 201 * local) << local;
    }
  }
}

TEST(CpuRun, C11AtomicsCounter) {
  auto exe = build_and_load(R"(
    __kernel void count(volatile __global atomic_int* counter, __global int* tickets) {
      tickets[get_global_id(0)] = atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
    })",
                            "-cl-std=CL3.0");
  ASSERT_NE(exe, nullptr);
  const size_t n = 10000;
  int counter = 0;
  std::vector<int> tickets(n, -1);
  void* pc = &counter;
  void* pt = tickets.data();
  const void* args[] = {&pc, &pt};
  exe->run("count", range_1d(n, 50), args, nullptr);
  EXPECT_EQ(counter, int(n));
  std::sort(tickets.begin(), tickets.end());
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(tickets[i], int(i));
}

TEST(CpuRun, Printf) {
  auto exe = build_and_load(R"(
    __kernel void hello(int value) {
      if (get_global_id(0) == 1)
        printf("item %d of %u: %5.2f %s %v4hlf %c|%%\n", (int)get_global_id(0),
               (uint)get_global_size(0), 3.14159f, "text", (float4)(1.0f, 2.5f, -3.0f, 4.0f), 'x');
      if (get_global_id(0) == 0) printf("value=%d hex=%#x long=%ld\n", value, value, (long)value * 1000000000L);
    })");
  ASSERT_NE(exe, nullptr);
  int value = 42;
  const void* args[] = {&value};
  testing::internal::CaptureStdout();
  exe->run("hello", range_1d(4, 2), args, nullptr);
  std::string output = testing::internal::GetCapturedStdout();
  EXPECT_NE(output.find("item 1 of 4:  3.14 text 1.000000,2.500000,-3.000000,4.000000 x|%\n"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("value=42 hex=0x2a long=42000000000\n"), std::string::npos) << output;
}

// CTS printf "vector": the x86-64 ABI passes small vectors as integers (uchar2 as an i16, uint2
// as an i64), 3-element ones padded, and wide ones through memory; %vN with its length modifier
// still prints every lane.
TEST(CpuRun, PrintfVectorsOfEveryWidthAndLength) {
  auto exe = build_and_load(R"(
    __kernel void vectors(void) {
      printf("A %#v2hhx\n", (uchar2)(0xFA, 0xFB));
      printf("B %#v2hx\n", (ushort2)(0x1234, 0x8765));
      printf("C %#v2hlx\n", (uint2)(0x12345678, 0x87654321));
      printf("D %v8hlg\n", (float8)(1.f, 2.f, 3.f, 4.f, 1.5f, 3.14f, 2.5f, 3.5f));
      printf("E %v16hlo\n", (uint16)(1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 32, 64, 128, 256, 512, 1024));
      printf("F %+v8hli\n", (int8)(1, -2, 3, -4, 5, -6, 7, -8));
      printf("G %v3hd|%v2ld\n", (short3)(-1, 2, -3), (long2)(12345678, -98765432));
      printf("H %v4hhu %v2lf\n", (uchar4)(1, 2, 3, 255), (double2)(0.5, -2.25));
    })");
  ASSERT_NE(exe, nullptr);
  testing::internal::CaptureStdout();
  exe->run("vectors", range_1d(1, 1), nullptr, nullptr);
  const std::string output = testing::internal::GetCapturedStdout();
  for (const char* line :
       {"A 0xfa,0xfb\n", "B 0x1234,0x8765\n", "C 0x12345678,0x87654321\n",
        "D 1,2,3,4,1.5,3.14,2.5,3.5\n", "E 1,2,3,4,5,6,7,10,11,0,40,100,200,400,1000,2000\n",
        "F +1,-2,+3,-4,+5,-6,+7,-8\n", "G -1,2,-3|12345678,-98765432\n",
        "H 1,2,3,255 0.500000,-2.250000\n"})
    EXPECT_NE(output.find(line), std::string::npos) << line << " in:\n" << output;
}

// Global size not a multiple of the local size (OpenCL 2.0+): the last group is smaller, and
// get_local_size / get_enqueued_local_size tell them apart.
TEST(CpuRun, NonUniformNDRange) {
  auto exe = build_and_load(R"(
    __kernel void sizes(__global uint* out) {
      size_t i = get_global_id(0) + get_global_id(1) * get_global_size(0);
      out[i * 4 + 0] = get_local_size(0);
      out[i * 4 + 1] = get_enqueued_local_size(0);
      out[i * 4 + 2] = get_local_size(1);
      out[i * 4 + 3] = get_global_linear_id() == i;
    })",
                            "-cl-std=CL3.0");
  ASSERT_NE(exe, nullptr);
  NDRange r;
  r.work_dim = 2;
  r.global_size[0] = 70;
  r.global_size[1] = 5;
  r.local_size[0] = 16;
  r.local_size[1] = 2;
  std::vector<uint32_t> out(70 * 5 * 4, 0);
  void* p = out.data();
  const void* args[] = {&p};
  exe->run("sizes", r, args, nullptr);
  for (size_t y = 0; y < 5; ++y) {
    for (size_t x = 0; x < 70; ++x) {
      size_t i = y * 70 + x;
      ASSERT_EQ(out[i * 4 + 0], x >= 64 ? 6u : 16u) << x;
      ASSERT_EQ(out[i * 4 + 1], 16u);
      ASSERT_EQ(out[i * 4 + 2], y >= 4 ? 1u : 2u) << y;
      ASSERT_EQ(out[i * 4 + 3], 1u);
    }
  }
}

// Work-group sub-range launches (NDRange::group_first/group_count): each launch runs only its
// groups, and the work-item queries answer for the whole NDRange.
constexpr const char* kIdsKernel = R"(
    __kernel void ids(__global uint* out) {
      size_t i = (get_global_id(1) - get_global_offset(1)) * get_global_size(0) +
                 get_global_id(0) - get_global_offset(0);
      out[i * 4 + 0] = get_global_id(0) + 1000 * get_global_id(1);
      out[i * 4 + 1] = get_group_id(0) + 1000 * get_group_id(1);
      out[i * 4 + 2] = get_num_groups(0) + 1000 * get_num_groups(1);
      out[i * 4 + 3] = get_local_size(0) + 1000 * get_local_size(1);
    })";

NDRange ids_range() {
  NDRange r;  // 5 x 4 groups, the last of each dimension smaller
  r.work_dim = 2;
  r.global_offset[0] = 3;
  r.global_offset[1] = 7;
  r.global_size[0] = 70;
  r.global_size[1] = 14;
  r.local_size[0] = 16;
  r.local_size[1] = 4;
  return r;
}

std::vector<uint32_t> run_ids(const CpuExecutable& exe, const std::vector<NDRange>& launches) {
  std::vector<uint32_t> out(70 * 14 * 4, 0xFFFFFFFFu);
  void* p = out.data();
  const void* args[] = {&p};
  for (const NDRange& launch : launches) exe.run("ids", launch, args, nullptr);
  return out;
}

TEST(CpuRun, SubRangeLaunchesCoveringTheNDRangeEqualOneLaunch) {
  auto exe = build_and_load(kIdsKernel, "-cl-std=CL3.0");
  ASSERT_NE(exe, nullptr);
  const std::vector<uint32_t> whole = run_ids(*exe, {ids_range()});
  ASSERT_EQ(whole[(13 * 70 + 69) * 4 + 1], 4u + 1000 * 3);  // the last item ran
  // Three launches split along y: rows of groups [0, 1), [1, 3), [3, end).
  std::vector<NDRange> by_rows(3, ids_range());
  by_rows[0].group_count[1] = 1;
  by_rows[1].group_first[1] = 1;
  by_rows[1].group_count[1] = 2;
  by_rows[2].group_first[1] = 3;
  EXPECT_EQ(run_ids(*exe, by_rows), whole);
  // Two launches split along x, each over every row.
  std::vector<NDRange> by_columns(2, ids_range());
  by_columns[0].group_count[0] = 2;
  by_columns[1].group_first[0] = 2;
  by_columns[1].group_count[0] = 3;
  EXPECT_EQ(run_ids(*exe, by_columns), whole);
}

TEST(CpuRun, SubRangeLaunchWritesOnlyItsGroups) {
  auto exe = build_and_load(kIdsKernel, "-cl-std=CL3.0");
  ASSERT_NE(exe, nullptr);
  const std::vector<uint32_t> whole = run_ids(*exe, {ids_range()});
  NDRange part = ids_range();  // groups x in [1, 3), y in [2, 4): the last row is smaller
  part.group_first[0] = 1;
  part.group_count[0] = 2;
  part.group_first[1] = 2;
  const std::vector<uint32_t> out = run_ids(*exe, {part});
  for (size_t y = 0; y < 14; ++y)
    for (size_t x = 0; x < 70; ++x) {
      const bool inside = x / 16 >= 1 && x / 16 < 3 && y / 4 >= 2;
      for (size_t k = 0; k < 4; ++k) {
        const size_t i = (y * 70 + x) * 4 + k;
        ASSERT_EQ(out[i], inside ? whole[i] : 0xFFFFFFFFu) << x << "," << y << " word " << k;
      }
    }
  // A range past the last group runs nothing.
  NDRange beyond = ids_range();
  beyond.group_first[0] = 5;
  EXPECT_EQ(run_ids(*exe, {beyond}), std::vector<uint32_t>(70 * 14 * 4, 0xFFFFFFFFu));
}

// Offsets, a 3D range, and every work-item query.
TEST(CpuRun, WorkItemQueries3D) {
  auto exe = build_and_load(R"(
    __kernel void q(__global int* out) {
      size_t lin = get_global_linear_id();
      __global int* o = out + lin * 8;
      o[0] = get_work_dim();
      o[1] = get_global_id(0) + 100 * get_global_id(1) + 10000 * get_global_id(2);
      o[2] = get_local_id(0) + 100 * get_local_id(1) + 10000 * get_local_id(2);
      o[3] = get_group_id(0) + 100 * get_group_id(1) + 10000 * get_group_id(2);
      o[4] = get_num_groups(0) + 100 * get_num_groups(1) + 10000 * get_num_groups(2);
      o[5] = get_global_offset(0) + 100 * get_global_offset(1) + 10000 * get_global_offset(2);
      o[6] = get_local_linear_id();
      o[7] = get_global_size(3) + get_local_size(7) * 10 + get_global_id(5) * 100;
    })",
                            "-cl-std=CL2.0");
  ASSERT_NE(exe, nullptr);
  NDRange r;
  r.work_dim = 3;
  size_t g[3] = {4, 6, 2}, l[3] = {2, 3, 1}, off[3] = {1, 2, 3};
  for (int d = 0; d < 3; ++d) {
    r.global_size[d] = g[d];
    r.local_size[d] = l[d];
    r.global_offset[d] = off[d];
  }
  std::vector<int> out(4 * 6 * 2 * 8, -1);
  void* p = out.data();
  const void* args[] = {&p};
  exe->run("q", r, args, nullptr);
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 6; ++y)
      for (size_t x = 0; x < 4; ++x) {
        const int* o = &out[((z * 6 + y) * 4 + x) * 8];
        ASSERT_EQ(o[0], 3);
        ASSERT_EQ(o[1], int((x + 1) + 100 * (y + 2) + 10000 * (z + 3)));
        ASSERT_EQ(o[2], int(x % 2 + 100 * (y % 3) + 10000 * 0));
        ASSERT_EQ(o[3], int(x / 2 + 100 * (y / 3) + 10000 * z));
        ASSERT_EQ(o[4], int(2 + 100 * 2 + 10000 * 2));
        ASSERT_EQ(o[5], int(1 + 200 + 30000));
        ASSERT_EQ(o[6], int((y % 3) * 2 + x % 2));
        ASSERT_EQ(o[7], 1 + 10 + 0);
      }
}

// A barrier inside a helper function (inlined into the kernel), private arrays and values
// that survive several barriers, nested loops with barriers, and a uniform early return.
TEST(CpuRun, BarrierShapes) {
  auto exe = build_and_load(R"(
    void exchange(__local int* tile, int* value) {
      size_t lid = get_local_id(0), n = get_local_size(0);
      tile[lid] = *value;
      barrier(CLK_LOCAL_MEM_FENCE);
      *value = tile[n - 1 - lid];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    __kernel void k(__global int* out, __local int* tile, int rounds) {
      if (get_group_id(0) == 3) return;  // uniform per group
      int history[4];
      int value = (int)get_global_id(0);
      for (int r = 0; r < rounds; ++r) {
        for (int inner = 0; inner < 2; ++inner) {
          exchange(tile, &value);
          value += inner;
        }
        history[r & 3] = value;
      }
      out[get_global_id(0)] = value * 1000 + history[0] + history[1];
    })");
  ASSERT_NE(exe, nullptr);
  const size_t n = 256, local = 32;
  int rounds = 3;
  std::vector<int> out(n, -7);
  void* p = out.data();
  const void* args[] = {&p, nullptr, &rounds};
  const size_t local_sizes[] = {0, local * sizeof(int), 0};
  exe->run("k", range_1d(n, local), args, local_sizes);
  for (size_t i = 0; i < n; ++i) {
    size_t group = i / local, lid = i % local;
    if (group == 3) {
      ASSERT_EQ(out[i], -7);
      continue;
    }
    // Simulate the group on the host.
    std::vector<int> value(local), h0(local), h1(local);
    for (size_t l = 0; l < local; ++l) value[l] = int(group * local + l);
    for (int r = 0; r < rounds; ++r) {
      for (int inner = 0; inner < 2; ++inner) {
        std::vector<int> before = value;
        for (size_t l = 0; l < local; ++l) value[l] = before[local - 1 - l] + inner;
      }
      for (size_t l = 0; l < local; ++l) {
        if ((r & 3) == 0) h0[l] = value[l];
        if ((r & 3) == 1) h1[l] = value[l];
      }
    }
    ASSERT_EQ(out[i], value[lid] * 1000 + h0[lid] + h1[lid]) << i;
  }
}

// No explicit barrier, but the innermost loops (uniform trip counts) become regions of their own
// (implicit loop barriers). The outer counter k is stored in the region that increments it and
// read in the next k iteration; between the two run passes of the j/i loops that never reach
// its definition and must keep its value. Reduced from CLBlast's Xgemm kernel (CGEMM, CHERK).
TEST(CpuRun, OuterLoopCounterAcrossInnerLoopRegions) {
  auto exe = build_and_load(R"(
    __kernel void k(__global const int* in, __global int* out) {
      int a[2];
      int sum = 0;
      for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 2; i++) a[i] = in[k * 64 + i + get_global_id(0) * 2];
        for (int j = 0; j < 2; j++)
          for (int i = 0; i < 2; i++) sum += a[i];
      }
      out[get_global_id(0)] = sum;
    })");
  ASSERT_NE(exe, nullptr);
  const size_t n = 32, local = 16;
  std::vector<int> in(256), out(n, -1);
  for (size_t i = 0; i < in.size(); ++i) in[i] = int(i) * 3 - 100;
  void* pin = in.data();
  void* pout = out.data();
  const void* args[] = {&pin, &pout};
  exe->run("k", range_1d(n, local), args, nullptr);
  for (size_t g = 0; g < n; ++g) {
    int expected = 0;
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 2; ++i) expected += 2 * in[k * 64 + i + g * 2];
    ASSERT_EQ(out[g], expected) << g;
  }
}

// A barrier as a kernel's first statement (piglit's atomic_cmpxchg tests): no work before it,
// so the region it ends is empty. Also two barriers with only a branch between them.
TEST(CpuRun, BarrierFirstAndBarrierAfterBarrier) {
  auto exe = build_and_load(R"(
    __kernel void first(__global int* out) {
      barrier(CLK_GLOBAL_MEM_FENCE);
      int lid = (int)get_local_id(0);
      for (int i = 0; i < (int)get_local_size(0); i++) {
        if (i == lid) atomic_cmpxchg(&out[get_group_id(0)], lid, lid + 1);
        barrier(CLK_GLOBAL_MEM_FENCE);
      }
    }
    __kernel void twice(__global int* out, int flag) {
      __local int tile[16];
      size_t lid = get_local_id(0);
      tile[lid] = (int)get_global_id(0);
      if (flag) barrier(CLK_LOCAL_MEM_FENCE);
      barrier(CLK_LOCAL_MEM_FENCE);
      out[get_global_id(0)] = tile[15 - lid];
    })");
  ASSERT_NE(exe, nullptr);
  const size_t groups = 4, local = 8;
  std::vector<int> counters(groups, 0);
  void* p = counters.data();
  const void* first_args[] = {&p};
  exe->run("first", range_1d(groups * local, local), first_args, nullptr);
  for (size_t g = 0; g < groups; ++g) EXPECT_EQ(counters[g], int(local)) << "group " << g;

  for (int flag : {0, 1}) {
    std::vector<int> out(64, -1);
    void* q = out.data();
    const void* twice_args[] = {&q, &flag};
    exe->run("twice", range_1d(64, 16), twice_args, nullptr);
    for (int i = 0; i < 64; ++i) ASSERT_EQ(out[i], i / 16 * 16 + 15 - i % 16) << "flag " << flag;
  }
}

// A path that ends in `unreachable` after a barrier (what the optimizer makes of undefined
// behaviour, e.g. a call with the wrong calling convention) ends its region for good: the build
// must still succeed, and the paths that do return run as written.
TEST(CpuRun, UnreachableAfterBarrier) {
  auto exe = build_and_load(R"(
    __kernel void never(__global int* out) {
      barrier(CLK_LOCAL_MEM_FENCE);
      __builtin_unreachable();
    }
    __kernel void sometimes(__global int* out, int poison) {
      if (poison == 7) {
        barrier(CLK_LOCAL_MEM_FENCE);
        __builtin_unreachable();
      }
      out[get_global_id(0)] = (int)get_global_id(0) * 3;
    })");
  ASSERT_NE(exe, nullptr);
  std::vector<int> out(32, -1);
  void* p = out.data();
  const int poison = 0;
  const void* args[] = {&p, &poison};
  exe->run("sometimes", range_1d(32, 8), args, nullptr);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], i * 3);
}

// -cl-denorms-are-zero: kernels run with denormals flushed (piglit's amdgcn-f32-inline-immediates
// adds a denormal to 0 and expects 0); without it they are kept. The thread's floating-point
// mode is restored afterwards.
TEST(CpuRun, DenormsAreZeroFlushesDenormals) {
  const std::string source = R"(
    __kernel void add(__global float* out, __global const float* in) {
      size_t i = get_global_id(0);
      out[i] = in[i] + as_float(64);
    })";
  for (bool flush : {true, false}) {
    auto exe = build_and_load(source, flush ? "-cl-denorms-are-zero" : "");
    ASSERT_NE(exe, nullptr);
    std::vector<float> in = {0.0f, 0.5f, -1.0f, 0.0f}, out(4, -1.0f);
    void* po = out.data();
    void* pi = in.data();
    const void* args[] = {&po, &pi};
    // MXCSR's control bits (its low 6 bits are sticky exception flags).
    const unsigned kControl = 0xffc0;
    const unsigned mode_before = _mm_getcsr() & kControl;
    exe->run("add", range_1d(4, 4), args, nullptr);
    EXPECT_EQ(_mm_getcsr() & kControl, mode_before);
    uint32_t bits;
    std::memcpy(&bits, &out[0], sizeof bits);
    EXPECT_EQ(bits, flush ? 0u : 64u) << (flush ? "flushed" : "kept");
    EXPECT_EQ(out[1], 0.5f);
    EXPECT_EQ(out[2], -1.0f);
  }
}

// Barriers in a kernel whose last work-group is smaller than the others.
TEST(CpuRun, BarrierWithNonUniformLastGroup) {
  auto exe = build_and_load(R"(
    __kernel void reverse_in_group(__global int* data) {
      __local int tile[64];
      size_t lid = get_local_id(0), n = get_local_size(0);
      tile[lid] = data[get_global_id(0)];
      barrier(CLK_LOCAL_MEM_FENCE);
      data[get_global_id(0)] = tile[n - 1 - lid];
    })",
                            "-cl-std=CL2.0");
  ASSERT_NE(exe, nullptr);
  const size_t n = 100, local = 64;
  std::vector<int> data(n);
  std::iota(data.begin(), data.end(), 0);
  void* p = data.data();
  const void* args[] = {&p};
  exe->run("reverse_in_group", range_1d(n, local), args, nullptr);
  for (size_t i = 0; i < 64; ++i) ASSERT_EQ(data[i], int(63 - i));
  for (size_t i = 64; i < n; ++i) ASSERT_EQ(data[i], int(64 + 99 - i)) << i;
}

TEST(CpuRun, StructAndVectorArgumentsByValue) {
  auto exe = build_and_load(R"(
    typedef struct { float scale; int offset; float4 bias; } Params;
    __kernel void k(__global float4* out, Params params, float3 extra, char c) {
      size_t i = get_global_id(0);
      out[i] = (float4)(i) * params.scale + params.offset + params.bias + (float4)(extra, c);
    })");
  ASSERT_NE(exe, nullptr);
  struct alignas(16) Params {
    float scale;
    int offset;
    float pad[2];
    float bias[4];
  } params{2.0f, 10, {0, 0}, {0.5f, 1.5f, 2.5f, 3.5f}};
  alignas(16) float extra[4] = {100, 200, 300, 0};
  char c = 5;
  std::vector<float> out(8 * 4);
  void* p = out.data();
  const void* args[] = {&p, &params, extra, &c};
  exe->run("k", range_1d(8, 4), args, nullptr);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(out[i * 4 + 0], i * 2.0f + 10 + 0.5f + 100);
    EXPECT_EQ(out[i * 4 + 1], i * 2.0f + 10 + 1.5f + 200);
    EXPECT_EQ(out[i * 4 + 2], i * 2.0f + 10 + 2.5f + 300);
    EXPECT_EQ(out[i * 4 + 3], i * 2.0f + 10 + 3.5f + 5);
  }
}

TEST(CpuRun, ProgramScopeGlobalsAndSeveralKernels) {
  auto exe = build_and_load(R"(
    __constant int table[4] = {10, 20, 30, 40};
    __global int counter = 5;
    __kernel void bump(__global int* out) { out[get_global_id(0)] = table[get_global_id(0) % 4] + counter; }
    __kernel void set(int v) { counter = v; })",
                            "-cl-std=CL2.0");
  ASSERT_NE(exe, nullptr);
  std::vector<int> out(8);
  void* p = out.data();
  const void* args[] = {&p};
  exe->run("bump", range_1d(8, 8), args, nullptr);
  EXPECT_EQ(out[5], 25);
  int v = 100;
  const void* set_args[] = {&v};
  exe->run("set", range_1d(1, 1), set_args, nullptr);
  exe->run("bump", range_1d(8, 8), args, nullptr);
  EXPECT_EQ(out[3], 140);
}

// Several application threads running the same executable at once, as queues on different
// threads do.
TEST(CpuRun, ConcurrentRuns) {
  auto exe = build_and_load(R"(
    __kernel void k(__global int* data, __local int* tile, int add) {
      size_t lid = get_local_id(0);
      tile[lid] = data[get_global_id(0)];
      barrier(CLK_LOCAL_MEM_FENCE);
      data[get_global_id(0)] = tile[get_local_size(0) - 1 - lid] + add;
    })");
  ASSERT_NE(exe, nullptr);
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<int> data(4096);
      std::iota(data.begin(), data.end(), 0);
      void* p = data.data();
      const void* args[] = {&p, nullptr, &t};
      const size_t local_sizes[] = {0, 16 * sizeof(int), 0};
      for (int rep = 0; rep < 10; ++rep) exe->run("k", range_1d(4096, 16), args, local_sizes);
      bool good = true;
      for (int i = 0; i < 4096; ++i) good &= data[i] == i + 10 * t;  // even number of reversals
      ok[t] = good;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(ok, std::vector<int>(4, 1));
}

// The same barrier kernel under the options that change the pipeline the most.
// CTS integer_ops quick_long_math: x86's div traps on a zero divisor and on MIN / -1 (SIGFPE).
// OpenCL C leaves those results undefined; the process must live, and every other lane of the
// vectorized division must still be right.
TEST(CpuRun, IntegerDivisionByZeroAndOverflowDoNotTrap) {
  auto exe = build_and_load(R"(
    __kernel void divide(__global const int* a, __global const int* b, __global int* q,
                         __global int* r, __global const ulong* c, __global const ulong* d,
                         __global ulong* uq, __global long4* vq) {
      size_t i = get_global_id(0);
      q[i] = a[i] / b[i];
      r[i] = a[i] % b[i];
      uq[i] = c[i] / d[i] + c[i] % d[i];
      long4 v = (long4)(a[i], b[i], -1, LONG_MIN);
      vq[i] = v / (long4)(b[i], a[i], 0, -1) + v % (long4)(b[i], 0, a[i], -1);
    })");
  ASSERT_NE(exe, nullptr);
  const size_t n = 256;
  std::vector<int32_t> a(n), b(n), q(n), r(n);
  std::vector<uint64_t> c(n), d(n), uq(n);
  std::vector<int64_t> vq(4 * n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = i % 7 == 0 ? INT32_MIN : int32_t(i * 37) - 2000;
    b[i] = i % 3 == 0 ? 0 : (i % 5 == 0 ? -1 : int32_t(i % 11) - 5);
    c[i] = i * 1000003u;
    d[i] = i % 4;
  }
  void* p[] = {a.data(), b.data(), q.data(), r.data(), c.data(), d.data(), uq.data(), vq.data()};
  const void* args[] = {&p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &p[6], &p[7]};
  exe->run("divide", range_1d(n, 64), args, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const bool traps = b[i] == 0 || (a[i] == INT32_MIN && b[i] == -1);
    if (!traps) {
      ASSERT_EQ(q[i], a[i] / b[i]) << i;
      ASSERT_EQ(r[i], a[i] % b[i]) << i;
    }
    if (d[i] != 0) {
      ASSERT_EQ(uq[i], c[i] / d[i] + c[i] % d[i]) << i;
    }
  }
}

// CTS generic_address_space: to_global/to_local/to_private of a generic pointer give it back
// only for its own address space, and get_fence names the fence it needs (both were undefined).
TEST(CpuRun, GenericPointersKnowTheirAddressSpace) {
  auto exe = build_and_load(R"(
    global int gint = 1;
    int check(generic int* p, int expected_space) {
      int space = to_global(p) ? 1 : to_local(p) ? 2 : to_private(p) ? 3 : 0;
      cl_mem_fence_flags fence = get_fence(p);
      int fence_ok = expected_space == 1 ? fence == CLK_GLOBAL_MEM_FENCE
                   : expected_space == 2 ? fence == CLK_LOCAL_MEM_FENCE : fence == 0;
      return (space == expected_space) + 2 * fence_ok;
    }
    kernel void k(global int* out, global int* buffer, local int* scratch) {
      local int lint;
      private int pint = 3;
      int parr[4] = {1, 2, 3, 4};
      size_t i = get_global_id(0);
      lint = 2;
      scratch[get_local_id(0)] = 5;
      struct { global int* g; local int* l; private int* p; } s = {&gint, &lint, &pint};
      out[6 * i + 0] = check(s.g, 1);
      out[6 * i + 1] = check(buffer + i, 1);
      out[6 * i + 2] = check(s.l, 2);
      out[6 * i + 3] = check(scratch + get_local_id(0), 2);
      out[6 * i + 4] = check(s.p, 3);
      out[6 * i + 5] = check(&parr[i % 4], 3) + parr[(i + 1) % 4] * 0;
    })",
                            "-cl-std=CL3.0");
  ASSERT_NE(exe, nullptr);
  const size_t n = 256;
  std::vector<int> out(6 * n, -1), buffer(n, 0);
  void* po = out.data();
  void* pb = buffer.data();
  const void* args[] = {&po, &pb, nullptr};
  const size_t local_sizes[] = {0, 0, 64 * sizeof(int)};
  exe->run("k", range_1d(n, 64), args, local_sizes);
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(3, out[i]) << "item " << i / 6 << " check " << i % 6;
}

// CTS math_brute_force -w on the CPU: the special values and range ends where SLEEF's forms
// were wrong (overflow before the result does, signs of zero, huge exponents, x^1).
TEST(CpuRun, MathAtTheEndsOfTheRange) {
  auto exe = build_and_load(R"(
    kernel void k(global float* f, global double* d) {
      f[0] = cosh(89.0f);            f[1] = sinh(-89.0f);
      f[2] = powr(-0.0f, -3.0f);     f[3] = powr(-0.0f, 1.0f);
      f[4] = rootn(-0.0f, -2);       f[5] = rootn(-0.0f, 2);
      f[6] = tgamma(-34.99f);        f[7] = half_powr(-0.0f, -3.0f);
      int q;
      f[8] = remquo(-0x1.96788cp+73f, 0x1.097bbp-98f, &q);
      d[0] = cosh(710.0);            d[1] = sinh(-710.0);
      d[2] = pow(-DBL_MAX, 1.0);     d[3] = pown(-DBL_MAX, 1);
      d[4] = rootn(-DBL_MAX, 3);     d[5] = pow(DBL_MAX, 0x1.fffffffffffffp-1);
      d[6] = rootn(0x1.0000000000001p-1022, 2);
      d[7] = tgamma(-172.0000000001);
      d[8] = remquo(0x1.00ffffffff86dp+849, 0x1.9a00000000550p-287, &q);
      int qf, qd;
      f[9] = remquo(0x1.659a12p-54f, -0x1.229572p-108f, &qf);
      d[9] = remquo(0x1.d6000000003c1p-370, 0x1.94ffffffffb16p-1010, &qd);
      f[10] = qf;
      d[10] = qd;
    })",
                            "-cl-std=CL3.0");
  ASSERT_NE(exe, nullptr);
  std::vector<float> f(11, 0);
  std::vector<double> d(11, 0);
  void* pf = f.data();
  void* pd = d.data();
  const void* args[] = {&pf, &pd};
  exe->run("k", range_1d(1, 1), args, nullptr);
  EXPECT_FLOAT_EQ(std::cosh(89.0f), f[0]);
  EXPECT_FLOAT_EQ(std::sinh(-89.0f), f[1]);
  EXPECT_EQ(INFINITY, f[2]);
  EXPECT_EQ(0.0f, f[3]);
  EXPECT_FALSE(std::signbit(f[3]));
  EXPECT_EQ(INFINITY, f[4]);
  EXPECT_FALSE(std::signbit(f[5]));
  const double g = std::tgamma(double(-34.99f));
  EXPECT_NEAR(g, f[6], std::fabs(g) * 1e-5);
  EXPECT_EQ(INFINITY, f[7]);
  EXPECT_FALSE(std::isnan(f[8]));
  EXPECT_DOUBLE_EQ(std::cosh(710.0), d[0]);
  EXPECT_DOUBLE_EQ(std::sinh(-710.0), d[1]);
  EXPECT_EQ(-DBL_MAX, d[2]);
  EXPECT_EQ(-DBL_MAX, d[3]);
  EXPECT_DOUBLE_EQ(std::cbrt(-DBL_MAX), d[4]);
  EXPECT_DOUBLE_EQ(std::pow(DBL_MAX, 0x1.fffffffffffffp-1), d[5]);
  EXPECT_DOUBLE_EQ(std::sqrt(0x1.0000000000001p-1022), d[6]);
  EXPECT_NEAR(std::tgamma(-172.0000000001), d[7], std::fabs(std::tgamma(-172.0000000001)) * 1e-12);
  EXPECT_FALSE(std::isnan(d[8]));
  // The quotient's low 7 bits where y is tiny (a division was off by one): CTS's references.
  EXPECT_EQ(-0x1.467aap-110f, f[9]);
  EXPECT_EQ(-116, int(f[10]));
  EXPECT_EQ(-0x1.ca79b57de2608p-1012, d[9]);
  EXPECT_EQ(99, int(d[10]));
}

TEST(CpuRun, OptimizationAndMathOptions) {
  const char* source = R"(
    __kernel void k(__global float* data, __local float* tile) {
      size_t lid = get_local_id(0), n = get_local_size(0);
      float values[4];
      for (int j = 0; j < 4; ++j) values[j] = data[get_global_id(0)] * (j + 1);
      tile[lid] = values[lid % 4];
      barrier(CLK_LOCAL_MEM_FENCE);
      data[get_global_id(0)] = tile[n - 1 - lid] + values[3] + sqrt(16.0f);
    })";
  for (const char* options : {"-cl-opt-disable", "-cl-fast-relaxed-math", "-cl-mad-enable",
                              "-cl-denorms-are-zero -cl-no-signed-zeros"}) {
    auto exe = build_and_load(source, options);
    ASSERT_NE(exe, nullptr) << options;
    std::vector<float> data(64);
    std::iota(data.begin(), data.end(), 0.0f);
    std::vector<float> expected(64);
    for (size_t i = 0; i < 64; ++i) {
      size_t group = i / 16, lid = i % 16, mirror = group * 16 + 15 - lid;
      expected[i] = data[mirror] * float(mirror % 16 % 4 + 1) + data[i] * 4 + 4;
    }
    void* p = data.data();
    const void* args[] = {&p, nullptr};
    const size_t local_sizes[] = {0, 16 * sizeof(float)};
    exe->run("k", range_1d(64, 16), args, local_sizes);
    for (size_t i = 0; i < 64; ++i) ASSERT_EQ(data[i], expected[i]) << options << " " << i;
  }
}

// Wide vectors compiled for the host's real CPU features: no -Wpsabi warning ("AVX vector
// argument ... without 'avx' enabled changes the ABI") in the build log, and calls between
// the program's functions and the builtin library (compiled for the baseline ABI, adapted at
// link time) pass the vectors correctly.
TEST(CpuRun, WideVectorsBuildWithoutAbiWarnings) {
  const char* source = R"(
    long4 scaled(long4 v, long s) { return v * s; }
    double8 shifted(double8 v) { return v + (double8)(0.5); }
    __kernel void wide(__global long4* l, __global double8* d, __global long16* w) {
      size_t i = get_global_id(0);
      l[i] = max(scaled(l[i], 3), (long4)(10));
      d[i] = fmax(shifted(d[i]), (double8)(2.0));
      w[i] = clamp(w[i], (long16)(-5), (long16)(5)) + (long)abs_diff(w[i], (long16)(0)).s0;
    })";
  BuildOutput out = build(source, "", host());
  ASSERT_TRUE(out.success) << out.log;
  EXPECT_EQ(out.log.find("-Wpsabi"), std::string::npos) << out.log;
  EXPECT_EQ(out.log.find("changes the ABI"), std::string::npos) << out.log;
  std::string error;
  auto exe = CpuExecutable::load(out.binary, host(), &error);
  ASSERT_NE(exe, nullptr) << error;
  // OpenCL buffers are aligned to their largest vector type: the kernel may use aligned loads.
  const size_t n = 37;
  auto aligned = [](size_t bytes) {  // aligned_alloc wants a size that is a multiple of 128
    return std::unique_ptr<void, decltype(&std::free)>(
        std::aligned_alloc(128, (bytes + 127) / 128 * 128), &std::free);
  };
  auto l_memory = aligned(4 * n * 8), d_memory = aligned(8 * n * 8), w_memory = aligned(16 * n * 8);
  std::span<int64_t> l(static_cast<int64_t*>(l_memory.get()), 4 * n);
  std::span<double> d(static_cast<double*>(d_memory.get()), 8 * n);
  std::span<int64_t> w(static_cast<int64_t*>(w_memory.get()), 16 * n);
  for (size_t i = 0; i < l.size(); ++i) l[i] = int64_t(i % 9) - 3;
  for (size_t i = 0; i < d.size(); ++i) d[i] = double(i % 5) * 0.75;
  for (size_t i = 0; i < w.size(); ++i) w[i] = int64_t(i % 23) - 11;
  const std::vector<int64_t> l0(l.begin(), l.end()), w0(w.begin(), w.end());
  const std::vector<double> d0(d.begin(), d.end());
  void* pl = l.data();
  void* pd = d.data();
  void* pw = w.data();
  const void* args[] = {&pl, &pd, &pw};
  for (size_t local : {size_t{1}, size_t{37}}) {
    std::copy(l0.begin(), l0.end(), l.begin());
    std::copy(d0.begin(), d0.end(), d.begin());
    std::copy(w0.begin(), w0.end(), w.begin());
    exe->run("wide", range_1d(n, local), args, nullptr);
    for (size_t i = 0; i < l.size(); ++i)
      ASSERT_EQ(l[i], std::max<int64_t>(l0[i] * 3, 10)) << "long4 " << i << " local " << local;
    for (size_t i = 0; i < d.size(); ++i)
      ASSERT_EQ(d[i], std::max(d0[i] + 0.5, 2.0)) << "double8 " << i << " local " << local;
    for (size_t i = 0; i < w.size(); ++i) {
      const int64_t first = w0[i / 16 * 16];
      ASSERT_EQ(w[i], std::clamp<int64_t>(w0[i], -5, 5) + (first < 0 ? -first : first))
          << "long16 " << i << " local " << local;
    }
  }
}

// Groups of one work-item, small groups and kernels written in wide vectors run in the
// item-loop form (one work-item after another, the kernel's vectors kept); the rest in the
// work-group form. Both must compute the same: a uint16 loop (prefers the item loop at any
// group size), a scalar kernel with a private array, and a kernel with __local memory and
// barriers (the item loop only for groups of one, where its barriers have nothing to wait
// for), at group sizes that pick either form.
TEST(CpuRun, ItemLoopAndWorkGroupFormsAgree) {
  auto exe = build_and_load(R"(
    __kernel void wide(__global uint16* out, uint iterations) {
      uint16 x = (uint16)(get_global_id(0) * 16) + (uint16)(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15);
      uint16 y = x * 3u + 1u, z = x ^ 0x5bd1e995u;
      for (uint i = 0; i < iterations; ++i) {
        x += y;
        y ^= z;
        z += x;
      }
      out[get_global_id(0)] = x ^ y ^ z;
    }
    __kernel void scalar(__global int* out) {
      int table[8];
      for (int i = 0; i < 8; ++i) table[i] = (int)get_global_id(0) * i;
      out[get_global_id(0)] = table[get_global_id(0) % 8] + (int)get_local_id(0) * 1000 +
                              (int)get_local_size(0) * 100000;
    }
    __kernel void shared(__global int* out, __local int* scratch) {
      local int total;
      size_t lid = get_local_id(0);
      scratch[lid] = (int)get_global_id(0);
      if (lid == 0) total = 0;
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid == 0)
        for (size_t i = 0; i < get_local_size(0); ++i) total += scratch[i];
      barrier(CLK_LOCAL_MEM_FENCE);
      out[get_global_id(0)] = total;
    })");
  ASSERT_NE(exe, nullptr);
  const size_t n = 48;
  const uint32_t iterations = 100;
  for (size_t local : {size_t{1}, size_t{3}, size_t{16}, size_t{48}}) {
    alignas(64) uint32_t wide[n * 16];
    void* p = wide;
    const void* wide_args[] = {&p, &iterations};
    exe->run("wide", range_1d(n, local), wide_args, nullptr);
    for (size_t lane = 0; lane < n * 16; ++lane) {
      uint32_t x = uint32_t(lane), y = x * 3u + 1u, z = x ^ 0x5bd1e995u;
      for (uint32_t i = 0; i < iterations; ++i) {
        x += y;
        y ^= z;
        z += x;
      }
      ASSERT_EQ(wide[lane], x ^ y ^ z) << "lane " << lane << " local " << local;
    }
    std::vector<int> out(n, -1);
    void* q = out.data();
    const void* scalar_args[] = {&q};
    exe->run("scalar", range_1d(n, local), scalar_args, nullptr);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(out[i], int(i * (i % 8) + (i % local) * 1000 + local * 100000))
          << "item " << i << " local " << local;
    const void* shared_args[] = {&q, nullptr};
    const size_t local_sizes[] = {0, local * sizeof(int)};
    exe->run("shared", range_1d(n, local), shared_args, local_sizes);
    for (size_t i = 0; i < n; ++i) {
      const size_t first = i / local * local;
      ASSERT_EQ(out[i], int(local * first + local * (local - 1) / 2))
          << "item " << i << " local " << local;
    }
  }
}

// Math builtins on wide vectors in one program, as piglit's generated tests have them: the
// program calls sinpi on float8 and on float16, and the library's float16 sinpi calls its
// float8 sinpi. The program passes float8 in a register, the library (baseline ABI) in memory:
// the library's own call must keep its signature while the program's goes through the adapter.
// Groups of one work-item keep the vectors (the item-loop form); groups of four vectorize
// across work-items.
TEST(CpuRun, SixteenWideMathInGroupsOfOneItem) {
  auto exe = build_and_load(R"(
    __kernel void math16(__global const float* in, __global float* out) {
      size_t i = get_global_id(0);
      float16 x = vload16(i, in);
      vstore16(sinpi(x), 3 * i, out);
      vstore16(cospi(x), 3 * i + 1, out);
      vstore16(acosh(x + (float16)(1.0f)), 3 * i + 2, out);
    }
    __kernel void math8(__global const float* in, __global float* out) {
      size_t i = get_global_id(0);
      float8 x = vload8(i, in);
      vstore8(sinpi(x), 3 * i, out);
      vstore8(cospi(x), 3 * i + 1, out);
      vstore8(acosh(x + (float8)(1.0f)), 3 * i + 2, out);
    })");
  ASSERT_NE(exe, nullptr);
  const size_t n = 4;
  alignas(64) float in[16 * n], out[3 * 16 * n];
  for (size_t i = 0; i < 16 * n; ++i) in[i] = 0.125f * float(i) - 3.0f;
  void* pin = in;
  void* pout = out;
  const void* args[] = {&pin, &pout};
  for (size_t width : {size_t{8}, size_t{16}})
    for (size_t local : {size_t{1}, size_t{4}}) {
      std::fill(std::begin(out), std::end(out), -1.0f);
      const size_t items = 16 * n / width;
      exe->run(width == 8 ? "math8" : "math16", range_1d(items, local), args, nullptr);
      for (size_t i = 0; i < items; ++i)
        for (size_t lane = 0; lane < width; ++lane) {
          const double x = in[width * i + lane];
          const double expected[3] = {std::sin(M_PI * x), std::cos(M_PI * x),
                                      x >= 0 ? std::acosh(x + 1.0) : 0.0};
          for (size_t f = 0; f < 3; ++f) {
            if (f == 2 && x < 0) continue;  // acosh below 1: NaN
            ASSERT_NEAR(out[width * (3 * i + f) + lane], expected[f], 1e-5)
                << "float" << width << " function " << f << " lane " << width * i + lane
                << " local " << local;
          }
        }
    }
}

}  // namespace
}  // namespace manifold::compiler
