// Two work-items per item-loop iteration (compiler/item_pairs.h): kernels whose uint8/double4
// values fill half an AVX-512 register, run in every group shape against host references, and
// the kernels the pairing must leave alone.
#include "compiler/item_pairs.h"

#include <gtest/gtest.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

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
using jit_test::host;

// Lane counts the pairing chose per kernel ("" where it left the kernel alone).
std::map<std::string, std::string> paired_kernels(const std::string& source, const Target& target) {
  BuildOutput out = build(source, "", target);
  EXPECT_TRUE(out.success) << out.log;
  std::string error;
  auto binary = deserialize(out.binary, &error);
  EXPECT_TRUE(binary) << error;
  std::map<std::string, std::string> lanes;
  if (!binary) return lanes;
  llvm::LLVMContext context;
  auto module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(reinterpret_cast<const char*>(binary->bitcode.data()),
                                            binary->bitcode.size()),
                            "program"),
      context);
  EXPECT_TRUE(static_cast<bool>(module));
  if (!module) {
    llvm::consumeError(module.takeError());
    return lanes;
  }
  for (const KernelInfo& kernel : binary->kernels) {
    const llvm::Function* items = (*module)->getFunction(kernel.name + ".items");
    lanes[kernel.name] =
        items ? items->getFnAttribute(kItemPairsAttribute).getValueAsString().str() : "missing";
  }
  return lanes;
}

bool host_has_avx512() {
  const std::string& f = host().features;
  const size_t last = f.rfind("avx512f,");
  return last != std::string::npos && last > 0 && f[last - 1] == '+';
}

// Every kind of value the pairing handles: shared (the loop counter, `a`), per work-item (the
// ids, a private array, an atomic counter's result), and uint8 values joined two per register
// (arithmetic, shuffles, compares and selects, element reads and writes, element-wise builtins).
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

TEST(ItemPairs, PairsHalfRegisterVectorsOnAvx512AndLeavesRaggedLoopsAlone) {
  Target avx512 = host();
  avx512.cpu = "skylake-avx512";
  avx512.features = "+avx512f,+avx512dq,+avx512bw,+avx512vl,+avx2,+avx,+fma,+f16c";
  const auto lanes = paired_kernels(kPairsSource, avx512);
  EXPECT_EQ(lanes.at("mix"), "8");
  EXPECT_EQ(lanes.at("fma4"), "4");
  EXPECT_EQ(lanes.at("ragged"), "");
  // AVX2: uint8 and double4 fill a register, nothing to pair.
  Target avx2 = host();
  avx2.cpu = "haswell";
  avx2.features = "+avx2,+avx,+fma,+f16c,-avx512f";
  for (const auto& [kernel, count] : paired_kernels(kPairsSource, avx2))
    EXPECT_EQ(count, "") << kernel;
}

TEST(ItemPairs, PairedKernelsMatchTheHostInEveryGroupShape) {
  if (host_has_avx512()) {
    const auto lanes = paired_kernels(kPairsSource, host());
    EXPECT_EQ(lanes.at("mix"), "8") << "the host's build should pair";
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

}  // namespace
}  // namespace manifold::compiler
