// Half precision on x86 CPUs with and without F16C: with it the code converts to float and back in
// registers, without it (and for doubles without AVX512-FP16, which the CPU target leaves off) it
// calls the compiler runtime's conversions (__extendhfsf2, __truncsfhf2, __truncdfhf2), which the
// JIT must resolve. The same kernel built for each must give the same bits as a model of binary16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/compiler.h"
#include "every_half_builtin.h"
#include "jit_test_util.h"

namespace manifold::compiler {
namespace {

using cpu::CpuExecutable;
using jit_test::host;
using jit_test::range_1d;

const char* kSource = R"(
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF
__kernel void halves(__global const ushort* bits, __global const double* d,
                     __global const int* n, __global ushort* out) {
  size_t i = get_global_id(0);
  half x = as_half(bits[i]), y = as_half(bits[(i * 7919) % get_global_size(0)]);
  half4 v = (half4)(x, y, -x, 2.0h) * (half4)(y);
  out[i * 8 + 0] = as_ushort(x + y);
  out[i * 8 + 1] = as_ushort(x / y);
  out[i * 8 + 2] = as_ushort((half)d[i]);
  out[i * 8 + 3] = as_ushort((half)(float)d[i]);
  out[i * 8 + 4] = as_ushort((half)n[i]);
  out[i * 8 + 5] = as_ushort(v.z);
  out[i * 8 + 6] = as_ushort(convert_half_rtn(d[i]));
  out[i * 8 + 7] = (ushort)convert_int_rte(x * (half)4);
}
)";

// The binary16 value of `bits`, and `x` rounded to nearest even (x exact in a double).
double value_of(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double v = exponent == 0    ? std::ldexp(double(mantissa), -24)
             : exponent == 31 ? (mantissa ? NAN : INFINITY)
                              : std::ldexp(double(mantissa + 1024), exponent - 25);
  return (bits & 0x8000) ? -v : v;
}
bool is_nan(uint16_t bits) { return (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff); }

std::vector<uint16_t> run_on(const Target& target, const std::vector<uint16_t>& bits,
                             const std::vector<double>& d, const std::vector<int32_t>& n) {
  BuildOutput out = build(kSource, "", target);
  EXPECT_TRUE(out.success) << out.log;
  if (!out.success) return {};
  std::string error;
  auto exe = CpuExecutable::load(out.binary, target, &error);
  EXPECT_NE(exe, nullptr) << error;
  if (!exe) return {};
  std::vector<uint16_t> result(bits.size() * 8, 0xdead);
  const void* pb = bits.data();
  const void* pd = d.data();
  const void* pn = n.data();
  void* po = result.data();
  const void* args[] = {&pb, &pd, &pn, &po};
  exe->run("halves", range_1d(bits.size(), 64), args, nullptr);
  return result;
}

TEST(HalfTargets, SameBitsWithAndWithoutHalfHardware) {
  const size_t count = 65536;
  std::vector<uint16_t> bits(count);
  std::vector<double> d(count);
  std::vector<int32_t> n(count);
  std::mt19937_64 engine(31);
  for (size_t i = 0; i < count; ++i) {
    bits[i] = uint16_t(i);
    // Doubles between halves (and between floats), over half's range and past it.
    d[i] = std::ldexp(1.0 + double(engine() >> 11) * 0x1p-53, int(engine() % 48) - 30) *
           ((engine() & 1) ? -1 : 1);
    n[i] = int32_t(engine() >> 40) - (1 << 23);
  }
  Target no_f16c = host();
  // Also clears what implies F16C (AVX-512...).
  no_f16c.features += no_f16c.features.empty() ? "-f16c" : ",-f16c";
  const std::vector<uint16_t> native = run_on(host(), bits, d, n);
  ASSERT_EQ(native.size(), count * 8);
  for (const Target* target : {&no_f16c}) {
    SCOPED_TRACE("features " + target->features.substr(target->features.size() - 30));
    const std::vector<uint16_t> other = run_on(*target, bits, d, n);
    ASSERT_EQ(other.size(), native.size());
    int failures = 0;
    for (size_t i = 0; i < native.size() && failures < 20; ++i) {
      const bool same = is_nan(native[i]) ? is_nan(other[i]) : native[i] == other[i];
      if (!same) {
        ++failures;
        ADD_FAILURE() << "output " << i % 8 << " of item " << i / 8 << ": 0x" << std::hex
                      << other[i] << " where the host's CPU gives 0x" << native[i];
      }
    }
  }
  // The host's results against the exact values rounded to nearest even (the C++ compiler's
  // _Float16 conversions round a double once).
  auto nearest = [](double v) {
    const _Float16 h = static_cast<_Float16>(v);
    uint16_t out;
    std::memcpy(&out, &h, 2);
    return out;
  };
  int failures = 0;
  for (size_t i = 0; i < count && failures < 20; ++i) {
    const uint16_t y = bits[(i * 7919) % count];
    const uint16_t want[4] = {nearest(value_of(bits[i]) + value_of(y)), 0, nearest(d[i]),
                              nearest(double(float(d[i])))};
    for (size_t k : {0, 2, 3}) {
      const uint16_t got = native[i * 8 + k];
      if (is_nan(want[k]) ? is_nan(got) : got == want[k]) continue;
      ++failures;
      ADD_FAILURE() << "output " << k << " of item " << i << ": 0x" << std::hex << got
                    << ", want 0x" << want[k];
    }
    if (native[i * 8 + 4] != nearest(double(n[i]))) {
      ++failures;
      ADD_FAILURE() << "(half)" << n[i] << ": 0x" << std::hex << native[i * 8 + 4];
    }
    // convert_int_rte of 4x (exact in half where it does not overflow).
    const double four_x = value_of(nearest(value_of(bits[i]) * 4));
    if (std::isfinite(four_x) && native[i * 8 + 7] != uint16_t(int32_t(std::nearbyint(four_x)))) {
      ++failures;
      ADD_FAILURE() << "convert_int_rte(" << four_x << ") = " << native[i * 8 + 7];
    }
  }
}

// The host target leaves AVX512-FP16 off: LLVM 22 lowers lrint of half (which it makes of
// fptosi(rint(half)), convert_int_rte's pattern) to the truncating vcvttsh2si.
TEST(HalfTargets, HostTargetLeavesAvx512Fp16Off) {
  const std::string& features = host().features;
  const size_t last = features.rfind("avx512fp16");  // the last mention decides
  ASSERT_NE(last, std::string::npos) << features;
  EXPECT_EQ(features.substr(last - 1), "-avx512fp16") << features;
}

// Every builtin of half links, and the JIT finds everything the code calls, with and without the
// half hardware.
TEST(HalfTargets, EveryHalfBuiltinBuildsAndLoads) {
  Target no_f16c = host();
  no_f16c.features += no_f16c.features.empty() ? "-avx512fp16,-f16c" : ",-avx512fp16,-f16c";
  for (const Target* target : {&host(), static_cast<const Target*>(&no_f16c)}) {
    // Unoptimized: the calls stay calls, and the build takes half the time.
    BuildOutput out = build(kEveryHalfBuiltin, "-cl-std=CL3.0 -cl-opt-disable", *target);
    ASSERT_TRUE(out.success) << out.log;
    std::string error;
    EXPECT_NE(CpuExecutable::load(out.binary, *target, &error), nullptr) << error;
  }
}

}  // namespace
}  // namespace manifold::compiler
