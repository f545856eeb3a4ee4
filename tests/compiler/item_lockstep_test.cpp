// Work-items in lockstep in the item loop (compiler/item_lockstep.h): kernels whose uint8/double4
// (four work-items per two AVX-512 registers), uint4 (eight) and float2 (sixteen) values fill
// the registers together, run in every group shape against host references, the kernels the
// lockstep loop must leave alone, and which loads and stores become one access for all
// work-items.
#include "compiler/item_lockstep.h"

#include <gtest/gtest.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/binary_format.h"
#include "jit_test_util.h"

namespace manifold::compiler {
namespace {

using jit_test::build_and_load;

// Kernels load whole vectors: buffers aligned as the vector types are.
struct alignas(32) Uint8Lanes {
  uint32_t lane[8];
};
struct alignas(32) Double4Lanes {
  double lane[4];
};
struct alignas(64) Uint16Lanes {
  uint32_t lane[16];
};
using jit_test::host;

// Per kernel, the work-items the lockstep loop runs together ("" where it left the kernel alone)
// and whether the kernel runs in the item loop where it can.
struct Lockstep {
  std::string ways;
  KernelExec exec;
};
// The build's optimized bitcode (null on failure, reported).
std::unique_ptr<llvm::Module> built_module(const std::string& source, const Target& target,
                                           llvm::LLVMContext& context,
                                           std::optional<ProgramBinary>* binary_out = nullptr) {
  BuildOutput out = build(source, "", target);
  EXPECT_TRUE(out.success) << out.log;
  std::string error;
  auto binary = deserialize(out.binary, &error);
  EXPECT_TRUE(binary) << error;
  if (!binary) return nullptr;
  auto module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(reinterpret_cast<const char*>(binary->bitcode.data()),
                                            binary->bitcode.size()),
                            "program"),
      context);
  EXPECT_TRUE(static_cast<bool>(module));
  if (!module) {
    llvm::consumeError(module.takeError());
    return nullptr;
  }
  if (binary_out) *binary_out = std::move(binary);
  return std::move(*module);
}

std::map<std::string, Lockstep> lockstep_kernels(const std::string& source, const Target& target) {
  llvm::LLVMContext context;
  std::optional<ProgramBinary> binary;
  std::unique_ptr<llvm::Module> module = built_module(source, target, context, &binary);
  std::map<std::string, Lockstep> kernels;
  if (!module) return kernels;
  for (size_t i = 0; i < binary->kernels.size(); ++i) {
    const std::string& name = binary->kernels[i].name;
    const llvm::Function* items = module->getFunction(name + ".items");
    kernels[name] = {
        items ? items->getFnAttribute(kItemLockstepAttribute).getValueAsString().str() : "missing",
        binary->execs.at(i)};
  }
  return kernels;
}

bool host_has_avx512() {
  const std::string& f = host().features;
  const size_t last = f.rfind("avx512f,");
  return last != std::string::npos && last > 0 && f[last - 1] == '+';
}

// Every kind of value the lockstep loop handles: shared (the loop counter, `a`), per work-item
// (the ids, a private array, an atomic counter's result), and uint8 values joined four per
// two registers (arithmetic, shuffles, compares and selects, element reads and writes, element-wise
// builtins).
constexpr const char* kPairsSource = R"(
  __kernel void mix(__global const uint8* in, __global uint8* out, __global uint* ticket,
                    uint a, uint n) {
    size_t g = get_global_id(0) + get_global_size(0) * get_global_id(1);
    uint8 x = in[g];
    uint8 y = x * 3u + (uint8)((uint)get_local_id(0));
    uint table[4];
    for (int i = 0; i < 4; ++i) table[i] = (uint)g * (uint)(i + 1);
    for (uint i = 0; i < n; ++i) {
      x = rotate(x + y, (uint8)(5u)) ^ y.s12345670;
      y = max(y ^ (x >> 3), x) + a;
      if (a > 7u) y += x.s0;
    }
    int8 greater = x > y;
    uint8 r = select(x, y, greater) + popcount(x) + clz(y);
    r.s3 = (uint)g;
    r += (uint8)(table[g % 4]);
    uint mine = atomic_inc(ticket);
    out[g] = r + (uint8)(mine < 1000000u ? 0u : 1u);
  }
  __kernel void fma4(__global const double4* in, __global double4* out, double a, uint n) {
    size_t g = get_global_id(0);
    double4 x = in[g], y = x * 0.5, z = x + 1.0, w = y - 2.0;
    for (uint i = 0; i < n; ++i) {
      x = fma(x, (double4)(a), y);
      y = fmax(y, x.wzyx);
      z = fma(z, (double4)(a), w);
      w = fmin(w, z.yxwz);
    }
    out[g] = (x + y) + (z + w);
  }
  // The trip count differs between neighbours: the work-items cannot run in lockstep.
  __kernel void ragged(__global uint8* out) {
    size_t g = get_global_id(0);
    uint8 x = (uint8)((uint)g), y = x + 1u;
    for (size_t i = 0; i < g % 5; ++i) {
      x += y;
      y ^= x;
    }
    out[g] = x + y;
  })";

// Vectors of a whole AVX-512 register (two per iteration), narrower ones (eight and sixteen per
// two registers), scalars (thirty-two), and a kernel whose work is its loads and stores (one
// wide load or store for all work-items in lockstep).
constexpr const char* kChainsSource = R"(
  __kernel void chain2(__global const float2* in, __global float2* out, float a, uint n) {
    size_t g = get_global_id(0);
    float2 x = in[g], y = x * 0.5f;
    for (uint i = 0; i < n; ++i) {
      x = fma(x, (float2)(a), y);
      y = fmax(y, x.yx) - 0.25f;
    }
    out[g] = x + y;
  }
  __kernel void chain4(__global const uint4* in, __global uint4* out, uint n) {
    size_t g = get_global_id(0);
    uint4 x = in[g], y = x ^ 0x9e3779b9u;
    for (uint i = 0; i < n; ++i) {
      x = rotate(x + y, (uint4)(7u));
      y ^= x.wxyz;
      y.s2 += (uint)g;
    }
    out[g] = x + y;
  }
  __kernel void chain16(__global const uint16* in, __global uint16* out, uint n) {
    size_t g = get_global_id(0);
    uint16 x = in[g], y = x * 3u;
    for (uint i = 0; i < n; ++i) {
      x = x * 5u + y;
      y ^= x.sfedcba9876543210 >> 2;
    }
    out[g] = x + y;
  }
  __kernel void saxpy(__global const float* x, __global float* y, float a) {
    size_t g = get_global_id(0);
    y[g] = a * x[g] + y[g];
  }
  __kernel void scalar(__global const float* in, __global float* out, float a, uint n) {
    size_t g = get_global_id(0);
    float x = in[g], y = x * 0.5f, z = x + 1.0f;
    uint bits = (uint)g;
    for (uint i = 0; i < n; ++i) {
      x = fma(x, a, y);
      y = fmax(y, x) - 0.25f;
      z = z > x ? z * a : z + (float)(bits & 7u);
      bits = rotate(bits * 5u + 1u, 3u);
    }
    out[g] = x + y + z;
  })";

std::array<uint32_t, 8> host_mix(const std::array<uint32_t, 8>& in, uint32_t g, uint32_t lx,
                                 uint32_t a, uint32_t n) {
  std::array<uint32_t, 8> x = in, y, t;
  for (int l = 0; l < 8; ++l) y[l] = x[l] * 3u + lx;
  for (uint32_t i = 0; i < n; ++i) {
    for (int l = 0; l < 8; ++l) t[l] = std::rotl(x[l] + y[l], 5) ^ y[(l + 1) % 8];
    x = t;
    for (int l = 0; l < 8; ++l) y[l] = std::max(y[l] ^ (x[l] >> 3), x[l]) + a;
    if (a > 7u)
      for (int l = 0; l < 8; ++l) y[l] += x[0];
  }
  std::array<uint32_t, 8> r;
  for (int l = 0; l < 8; ++l)
    r[l] = (x[l] > y[l] ? y[l] : x[l]) + std::popcount(x[l]) + std::countl_zero(y[l]);
  r[3] = g;
  for (int l = 0; l < 8; ++l) r[l] += g * (g % 4 + 1);
  return r;
}

Target avx512_target() {
  Target t = host();
  t.cpu = "skylake-avx512";
  t.features = "+avx512f,+avx512dq,+avx512bw,+avx512vl,+avx2,+avx,+fma,+f16c";
  return t;
}

Target avx2_target() {
  Target t = host();
  t.cpu = "haswell";
  t.features = "+avx2,+avx,+fma,+f16c,-avx512f";
  return t;
}

TEST(ItemLockstep, FillsAvx512RegistersAndLeavesRaggedLoopsAlone) {
  const auto kernels = lockstep_kernels(kPairsSource, avx512_target());
  EXPECT_EQ(kernels.at("mix").ways, "4");
  EXPECT_EQ(kernels.at("fma4").ways, "4");
  EXPECT_EQ(kernels.at("ragged").ways, "");
  EXPECT_EQ(kernels.at("mix").exec.item_loop_lockstep_items, 4u);
  EXPECT_EQ(kernels.at("fma4").exec.item_loop_lockstep_items, 4u);
  // AVX2: uint8 and double4 fill a register, nothing to join.
  for (const auto& [kernel, lockstep] : lockstep_kernels(kPairsSource, avx2_target()))
    EXPECT_EQ(lockstep.ways, "") << kernel;
}

TEST(ItemLockstep, WorkItemsPerIterationFollowTheTypeAndTheRegisters) {
  const auto avx512 = lockstep_kernels(kChainsSource, avx512_target());
  EXPECT_EQ(avx512.at("chain2").ways, "16");
  EXPECT_EQ(avx512.at("chain4").ways, "8");
  EXPECT_EQ(avx512.at("chain16").ways, "2");
  EXPECT_EQ(avx512.at("scalar").ways, "32");
  EXPECT_EQ(avx512.at("saxpy").ways, "32");
  // The scalar kernel's loop carries four chains: its groups run in lockstep where they have
  // 32 work-items. chain2's loop is one chain (x and y feed each other): the work-group form,
  // which interleaves vectors of work-items, keeps groups of any size.
  EXPECT_EQ(avx512.at("scalar").exec.item_loop_lockstep_items, 32u);
  EXPECT_EQ(avx512.at("chain2").exec.item_loop_lockstep_items, 0u);
  EXPECT_FALSE(avx512.at("chain2").exec.item_loop_preferred);
  // Groups of one work-item of a kernel that runs in lockstep become groups the device chooses,
  // large enough for the lockstep loop.
  ASSERT_TRUE(avx512.at("scalar").exec.partition_independent);
  EXPECT_GE(cpu::regrouped_local_size(avx512.at("scalar").exec, jit_test::range_1d(4096, 1)), 32u);
  KernelExec one_at_a_time = avx512.at("scalar").exec;
  one_at_a_time.item_loop_lockstep_items = 0;
  one_at_a_time.item_loop_preferred = true;
  EXPECT_EQ(cpu::regrouped_local_size(one_at_a_time, jit_test::range_1d(4096, 1)), 0u);
  const auto avx2 = lockstep_kernels(kChainsSource, avx2_target());
  EXPECT_EQ(avx2.at("chain2").ways, "4");
  EXPECT_EQ(avx2.at("chain4").ways, "2");
  EXPECT_EQ(avx2.at("chain16").ways, "");
  EXPECT_EQ(avx2.at("scalar").ways, "8");
  EXPECT_EQ(avx2.at("saxpy").ways, "8");
  // One AVX2 register per iteration: the kernels keep the work-group form for their groups.
  EXPECT_EQ(avx2.at("scalar").exec.item_loop_lockstep_items, 0u);
}

TEST(ItemLockstep, ChainKernelsMatchTheHostInEveryGroupSize) {
  if (host_has_avx512()) {
    const auto kernels = lockstep_kernels(kChainsSource, host());
    EXPECT_EQ(kernels.at("chain2").ways, "16") << "the host's build should run items in lockstep";
  }
  auto exe = build_and_load(kChainsSource);
  ASSERT_NE(exe, nullptr);
  const size_t items = 60;
  const uint32_t iterations = 13;
  const float a = 0.875f;
  std::vector<float> fin(2 * items);
  for (size_t i = 0; i < fin.size(); ++i) fin[i] = 0.125f * float(i % 11) - 0.5f;
  std::vector<uint32_t> uin(4 * items);
  std::vector<Uint16Lanes> win(items);
  for (size_t i = 0; i < uin.size(); ++i) uin[i] = static_cast<uint32_t>(i * 2654435761u);
  for (size_t i = 0; i < 16 * items; ++i)
    win[i / 16].lane[i % 16] = static_cast<uint32_t>(i * 40503u + 7u);
  // Group sizes below, at and past 8 and 16 work-items, with and without a remainder.
  for (size_t local : {size_t{1}, size_t{3}, size_t{8}, size_t{12}, size_t{15}, size_t{20},
                       size_t{30}, size_t{60}}) {
    SCOPED_TRACE("local " + std::to_string(local));
    std::vector<float> fout(2 * items), sout(items);
    std::vector<uint32_t> uout(4 * items);
    const void* fin_p = fin.data();
    void* fout_p = fout.data();
    const void* chain2_args[] = {&fin_p, &fout_p, &a, &iterations};
    exe->run("chain2", jit_test::range_1d(items, local), chain2_args, nullptr);
    const void* uin_p = uin.data();
    void* uout_p = uout.data();
    const void* chain4_args[] = {&uin_p, &uout_p, &iterations};
    exe->run("chain4", jit_test::range_1d(items, local), chain4_args, nullptr);
    std::vector<Uint16Lanes> wout(items);
    const void* win_p = win.data();
    void* wout_p = wout.data();
    const void* chain16_args[] = {&win_p, &wout_p, &iterations};
    exe->run("chain16", jit_test::range_1d(items, local), chain16_args, nullptr);
    void* sout_p = sout.data();
    const void* scalar_args[] = {&fin_p, &sout_p, &a, &iterations};
    exe->run("scalar", jit_test::range_1d(items, local), scalar_args, nullptr);
    for (size_t g = 0; g < items; ++g) {
      float x[2] = {fin[2 * g], fin[2 * g + 1]}, y[2] = {x[0] * 0.5f, x[1] * 0.5f};
      for (uint32_t i = 0; i < iterations; ++i) {
        for (int l = 0; l < 2; ++l) x[l] = std::fma(x[l], a, y[l]);
        const float t[2] = {std::fmax(y[0], x[1]) - 0.25f, std::fmax(y[1], x[0]) - 0.25f};
        y[0] = t[0], y[1] = t[1];
      }
      for (int l = 0; l < 2; ++l) ASSERT_EQ(fout[2 * g + l], x[l] + y[l]) << "chain2 " << g;
      float sx = fin[g], sy = sx * 0.5f, sz = sx + 1.0f;
      uint32_t bits = static_cast<uint32_t>(g);
      for (uint32_t i = 0; i < iterations; ++i) {
        sx = std::fma(sx, a, sy);
        sy = std::fmax(sy, sx) - 0.25f;
        sz = sz > sx ? sz * a : sz + static_cast<float>(bits & 7u);
        bits = std::rotl(bits * 5u + 1u, 3);
      }
      ASSERT_EQ(sout[g], sx + sy + sz) << "scalar " << g;
      uint32_t ux[4], uy[4];
      for (int l = 0; l < 4; ++l) ux[l] = uin[4 * g + l], uy[l] = ux[l] ^ 0x9e3779b9u;
      for (uint32_t i = 0; i < iterations; ++i) {
        for (int l = 0; l < 4; ++l) ux[l] = std::rotl(ux[l] + uy[l], 7);
        for (int l = 0; l < 4; ++l) uy[l] ^= ux[(l + 3) % 4];
        uy[2] += static_cast<uint32_t>(g);
      }
      for (int l = 0; l < 4; ++l) ASSERT_EQ(uout[4 * g + l], ux[l] + uy[l]) << "chain4 " << g;
      uint32_t wx[16], wy[16];
      for (int l = 0; l < 16; ++l) wx[l] = win[g].lane[l], wy[l] = wx[l] * 3u;
      for (uint32_t i = 0; i < iterations; ++i) {
        for (int l = 0; l < 16; ++l) wx[l] = wx[l] * 5u + wy[l];
        for (int l = 0; l < 16; ++l) wy[l] ^= wx[15 - l] >> 2;
      }
      for (int l = 0; l < 16; ++l)
        ASSERT_EQ(wout[g].lane[l], wx[l] + wy[l]) << "chain16 " << g << " lane " << l;
    }
  }
}

TEST(ItemLockstep, MixedKernelsMatchTheHostInEveryGroupShape) {
  if (host_has_avx512()) {
    const auto kernels = lockstep_kernels(kPairsSource, host());
    EXPECT_EQ(kernels.at("mix").ways, "4") << "the host's build should run items in lockstep";
  }
  auto exe = build_and_load(kPairsSource);
  ASSERT_NE(exe, nullptr);
  const size_t width = 34, height = 3, n = width * height;
  std::vector<Uint8Lanes> in(n);
  for (size_t i = 0; i < 8 * n; ++i) in[i / 8].lane[i % 8] = static_cast<uint32_t>(i * 2654435761u);
  struct Shape {
    size_t x, y;
  };
  for (const Shape local : {Shape{1, 1}, Shape{2, 1}, Shape{17, 1}, Shape{34, 1}, Shape{2, 3},
                            Shape{17, 3}, Shape{1, 3}}) {
    for (uint32_t a : {3u, 9u}) {
      SCOPED_TRACE("local " + std::to_string(local.x) + "x" + std::to_string(local.y) + " a " +
                   std::to_string(a));
      std::vector<Uint8Lanes> out(n);
      uint32_t ticket = 0, iterations = 21;
      const void* in_p = in.data();
      void* out_p = out.data();
      void* ticket_p = &ticket;
      const void* args[] = {&in_p, &out_p, &ticket_p, &a, &iterations};
      NDRange range;
      range.work_dim = 2;
      range.global_size[0] = width;
      range.global_size[1] = height;
      range.local_size[0] = local.x;
      range.local_size[1] = local.y;
      exe->run("mix", range, args, nullptr);
      EXPECT_EQ(ticket, n) << "every work-item's atomic_inc";
      for (size_t g = 0; g < n; ++g) {
        std::array<uint32_t, 8> lane_in;
        std::copy_n(in[g].lane, 8, lane_in.begin());
        const auto want =
            host_mix(lane_in, uint32_t(g), uint32_t(g % width % local.x), a, iterations);
        for (int l = 0; l < 8; ++l)
          ASSERT_EQ(out[g].lane[l], want[l]) << "item " << g << " lane " << l;
      }
    }
  }
  for (size_t local : {size_t{1}, size_t{3}, size_t{16}, size_t{25}}) {
    const size_t items = 50;
    std::vector<Double4Lanes> din(items), dout(items);
    for (size_t i = 0; i < 4 * items; ++i) din[i / 4].lane[i % 4] = 0.25 * double(i % 13) - 1.0;
    const double a = 0.75;
    const uint32_t iterations = 9;
    const void* in_p = din.data();
    void* out_p = dout.data();
    const void* args[] = {&in_p, &out_p, &a, &iterations};
    exe->run("fma4", jit_test::range_1d(items, local), args, nullptr);
    for (size_t g = 0; g < items; ++g) {
      double x[4], y[4], z[4], w[4], t[4];
      for (int l = 0; l < 4; ++l) {
        x[l] = din[g].lane[l];
        y[l] = x[l] * 0.5;
        z[l] = x[l] + 1.0;
        w[l] = y[l] - 2.0;
      }
      for (uint32_t i = 0; i < iterations; ++i) {
        for (int l = 0; l < 4; ++l) x[l] = std::fma(x[l], a, y[l]);
        for (int l = 0; l < 4; ++l) t[l] = std::fmax(y[l], x[3 - l]);
        std::copy_n(t, 4, y);
        for (int l = 0; l < 4; ++l) z[l] = std::fma(z[l], a, w[l]);
        const int swap[4] = {1, 0, 3, 2};
        for (int l = 0; l < 4; ++l) t[l] = std::fmin(w[l], z[swap[l]]);
        std::copy_n(t, 4, w);
      }
      for (int l = 0; l < 4; ++l)
        ASSERT_EQ(dout[g].lane[l], (x[l] + y[l]) + (z[l] + w[l]))
            << "local " << local << " item " << g << " lane " << l;
    }
    std::vector<Uint8Lanes> ragged(items);
    void* ragged_p = ragged.data();
    const void* ragged_args[] = {&ragged_p};
    exe->run("ragged", jit_test::range_1d(items, local), ragged_args, nullptr);
    for (size_t g = 0; g < items; ++g) {
      uint32_t x = uint32_t(g), y = x + 1;
      for (size_t i = 0; i < g % 5; ++i) x += y, y ^= x;
      ASSERT_EQ(ragged[g].lane[0], x + y) << "local " << local << " item " << g;
    }
  }
}

// Loads and stores of consecutive elements (work-item x + 1 at x's address plus the element's
// size, also through an int index) become one access in lockstep; every other kind keeps one
// access per work-item: private memory indexed by the local id (each work-item has its own
// array), strided and reversed elements.
constexpr const char* kAccessSource = R"(
  __kernel void stream(__global const float* in, __global float* out) {
    size_t base = get_group_id(0) * get_local_size(0) * 4 + get_local_id(0);
    float sum = 0.0f;
    for (int k = 0; k < 4; ++k) sum += in[base + k * get_local_size(0)];
    out[get_global_id(0)] = sum;
  }
  __kernel void stream2(__global const float2* in, __global float2* out) {
    size_t base = get_group_id(0) * get_local_size(0) * 4 + get_local_id(0);
    float2 sum = 0.0f;
    for (int k = 0; k < 4; ++k) sum += in[base + k * get_local_size(0)];
    out[get_global_id(0)] = sum;
  }
  __kernel void access16(__global const float16* in, __global float16* out, float a, uint n,
                         uint own_count) {
    size_t g = get_global_id(0);
    int i = (int)g;
    float16 own[160];
    for (uint k = 0; k < own_count; ++k) own[k] = in[g + (k & 1)] * a;
    float16 x = own[get_local_id(0)] + in[2 * g] + in[n - 1 - g] + in[i + 1];
    for (uint k = 0; k < 3; ++k) x = x * a + in[g + k];
    out[g] = x;
    out[n + 2 * g] = x + 1.0f;
  })";

struct alignas(64) Float16Lanes {
  float lane[16];
};

// Whether `function` of the build's bitcode loads or stores a vector of `lanes` floats.
bool accesses_float_vector(const std::string& source, const Target& target,
                           const std::string& function, unsigned lanes) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = built_module(source, target, context);
  const llvm::Function* f = module ? module->getFunction(function) : nullptr;
  if (!f) return false;
  for (const llvm::BasicBlock& block : *f)
    for (const llvm::Instruction& inst : block) {
      const llvm::Type* type = nullptr;
      if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst)) type = load->getType();
      if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst))
        type = store->getValueOperand()->getType();
      auto* vector = llvm::dyn_cast_or_null<llvm::FixedVectorType>(type);
      if (vector && vector->getNumElements() == lanes && vector->getElementType()->isFloatTy())
        return true;
    }
  return false;
}

TEST(ItemLockstep, ConsecutiveLoadsAndStoresAreOneAccessForAllWorkItems) {
  const auto kernels = lockstep_kernels(kAccessSource, avx512_target());
  EXPECT_EQ(kernels.at("stream").ways, "32");
  EXPECT_EQ(kernels.at("stream2").ways, "16");
  EXPECT_EQ(kernels.at("access16").ways, "2");
  // A streaming read runs in lockstep for groups that fill it.
  EXPECT_EQ(kernels.at("stream2").exec.item_loop_lockstep_items, 16u);
  for (const char* items : {"stream.items", "stream2.items", "access16.items"})
    EXPECT_TRUE(accesses_float_vector(kAccessSource, avx512_target(), items, 32)) << items;

  auto exe = build_and_load(kAccessSource);
  ASSERT_NE(exe, nullptr);
  const size_t items = 480;
  std::vector<float> in(8 * items);
  for (size_t i = 0; i < in.size(); ++i) in[i] = float(i % 13) - 0.25f * float(i % 5);
  std::vector<Float16Lanes> in16(3 * items);
  for (size_t i = 0; i < 16 * in16.size(); ++i)
    in16[i / 16].lane[i % 16] = 0.125f * float(i % 29) - 1.0f;
  const float a = 0.75f;
  const uint32_t n = items, own_count = 160;
  // Groups below, at and past 16 and 32 work-items, with and without a remainder (480 items).
  for (size_t local : {size_t{1}, size_t{3}, size_t{16}, size_t{20}, size_t{32}, size_t{40},
                       size_t{96}, size_t{160}}) {
    SCOPED_TRACE("local " + std::to_string(local));
    std::vector<float> out(items), out2(2 * items);
    const void* in_p = in.data();
    void* out_p = out.data();
    void* out2_p = out2.data();
    const void* stream_args[] = {&in_p, &out_p};
    exe->run("stream", jit_test::range_1d(items, local), stream_args, nullptr);
    const void* stream2_args[] = {&in_p, &out2_p};
    exe->run("stream2", jit_test::range_1d(items, local), stream2_args, nullptr);
    std::vector<Float16Lanes> out16(3 * items);
    const void* in16_p = in16.data();
    void* out16_p = out16.data();
    const void* access_args[] = {&in16_p, &out16_p, &a, &n, &own_count};
    exe->run("access16", jit_test::range_1d(items, local), access_args, nullptr);
    for (size_t g = 0; g < items; ++g) {
      const size_t group = g / local, base = group * local * 4 + g % local;
      float sum = 0.0f, sum2[2] = {0.0f, 0.0f};
      for (size_t k = 0; k < 4; ++k) {
        sum += in[base + k * local];
        for (int l = 0; l < 2; ++l) sum2[l] += in[2 * (base + k * local) + l];
      }
      ASSERT_EQ(out[g], sum) << "stream " << g;
      for (int l = 0; l < 2; ++l) ASSERT_EQ(out2[2 * g + l], sum2[l]) << "stream2 " << g;
      for (int l = 0; l < 16; ++l) {
        const size_t own = g + (g % local & 1);
        float x = in16[own].lane[l] * a + in16[2 * g].lane[l] + in16[n - 1 - g].lane[l] +
                  in16[g + 1].lane[l];
        for (size_t k = 0; k < 3; ++k) x = x * a + in16[g + k].lane[l];
        ASSERT_EQ(out16[g].lane[l], x) << "access16 " << g << " lane " << l;
        ASSERT_EQ(out16[n + 2 * g].lane[l], x + 1.0f) << "access16 strided " << g;
      }
    }
  }
}

// A uint index of ids past 2^32 - 16 wraps to 0 inside the first group: there the work-items'
// elements are not consecutive, and that group runs them one by one.
constexpr const char* kWrapSource = R"(
  __kernel void by_uint(__global const float* in, __global float* out) {
    uint i = (uint)get_global_id(0);
    float x = in[i];
    out[get_global_id(0) - get_global_offset(0)] = (x * 2.0f + 1.0f) * x - 3.0f;
  })";

TEST(ItemLockstep, ExtendedIndicesAreOneAccessOnlyWhereTheyDoNotWrap) {
  EXPECT_EQ(lockstep_kernels(kWrapSource, avx512_target()).at("by_uint").ways, "32");
  EXPECT_TRUE(accesses_float_vector(kWrapSource, avx512_target(), "by_uint.items", 32));
  // The kernel reads in[2^32 - 16 ..] and in[0 ..]: reserve the 16 GiB between them unbacked.
  constexpr size_t kElements = (size_t{1} << 32) + 1024;
  void* reserved = mmap(nullptr, kElements * sizeof(float), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) GTEST_SKIP() << "cannot reserve 16 GiB of address space";
  auto* in = static_cast<float*>(reserved);
  const size_t first = (size_t{1} << 32) - 16, items = 96;
  for (size_t k = 0; k < 16; ++k) in[first + k] = float(k) + 0.5f;
  for (size_t k = 0; k < items; ++k) in[k] = 100.0f + float(k);
  auto exe = build_and_load(kWrapSource);
  ASSERT_NE(exe, nullptr);
  for (size_t local : {size_t{32}, size_t{48}, size_t{96}}) {
    std::vector<float> out(items);
    const void* in_p = in;
    void* out_p = out.data();
    const void* args[] = {&in_p, &out_p};
    NDRange range = jit_test::range_1d(items, local);
    range.global_offset[0] = first;
    exe->run("by_uint", range, args, nullptr);
    for (size_t k = 0; k < items; ++k) {
      const float element = k < 16 ? in[first + k] : in[k - 16];
      ASSERT_FLOAT_EQ(out[k], (element * 2.0f + 1.0f) * element - 3.0f)
          << "local " << local << " item " << k;
    }
  }
  munmap(reserved, kElements * sizeof(float));
}

// A kernel's loop with a trip count known only at run time (every work-item runs it alike) is
// unrolled with one exit test per unrolled body and the remainder in an epilogue; a loop tested
// at its top kept a compare and branch in every unrolled copy, next to three vector operations.
constexpr const char* kRuntimeLoopSource = R"(
  kernel void loop_uint16(global uint16* out, uint iterations) {
    uint16 x = (uint16)(get_global_id(0) * 16) + (uint16)(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15);
    uint16 y = x * 3u + 1u, z = x ^ 0x5bd1e995u;
    for (uint i = 0; i < iterations; ++i) {
      x += y;
      y ^= z;
      z += x;
    }
    out[get_global_id(0)] = x ^ y ^ z;
  })";

TEST(ItemLockstep, RuntimeTripCountLoopsTestTheirExitOncePerUnrolledBody) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = built_module(kRuntimeLoopSource, avx512_target(), context);
  ASSERT_NE(module, nullptr);
  size_t unrolled_loops = 0;
  for (llvm::Function& function : *module) {
    if (function.isDeclaration()) continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo loops(dominators);
    for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
      size_t xors = 0;
      for (llvm::BasicBlock* block : loop->blocks())
        for (llvm::Instruction& inst : *block)
          xors += inst.getOpcode() == llvm::Instruction::Xor && inst.getType()->isVectorTy();
      if (!loop->isInnermost() || xors < 8) continue;
      ++unrolled_loops;
      llvm::SmallVector<llvm::BasicBlock*, 8> exiting;
      loop->getExitingBlocks(exiting);
      EXPECT_EQ(exiting.size(), 1u)
          << function.getName().str() << ", a loop of " << xors << " vector xors";
    }
  }
  EXPECT_GT(unrolled_loops, 0u) << "no unrolled loop found";

  auto exe = build_and_load(kRuntimeLoopSource);
  ASSERT_NE(exe, nullptr);
  for (uint32_t iterations : {0u, 1u, 7u, 8u, 9u, 23u}) {
    for (size_t local : {size_t{1}, size_t{3}, size_t{8}}) {
      const size_t items = 24;
      std::vector<Uint16Lanes> out(items);
      void* out_p = out.data();
      const void* args[] = {&out_p, &iterations};
      exe->run("loop_uint16", jit_test::range_1d(items, local), args, nullptr);
      for (size_t lane = 0; lane < items * 16; ++lane) {
        uint32_t x = uint32_t(lane), y = x * 3u + 1u, z = x ^ 0x5bd1e995u;
        for (uint32_t i = 0; i < iterations; ++i) {
          x += y;
          y ^= z;
          z += x;
        }
        ASSERT_EQ(out[lane / 16].lane[lane % 16], x ^ y ^ z)
            << "iterations " << iterations << ", local " << local << ", lane " << lane;
      }
    }
  }
}

}  // namespace
}  // namespace manifold::compiler
