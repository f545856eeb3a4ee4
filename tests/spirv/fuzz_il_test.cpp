// Mutated SPIR-V modules (truncated, words overwritten with huge or foreign values, word counts
// and ids changed, instructions repeated or swapped) must never crash, hang or leak the compiler:
// clCreateProgramWithIL's check refuses them, or the build succeeds and the result loads, or the
// build fails with a log. Seeds are clang's SPIR-V for kernels touching each part of the reader
// and the modules of other producers (llvm_spirv/: the translator's and hand-written forms).
//
// Deterministic (fixed seed) and bounded in time: MANIFOLD_FUZZ_SECONDS (default 20) and
// MANIFOLD_FUZZ_ITERATIONS (default 600), whichever ends first; under ctest's timeout a hang
// fails the test. MANIFOLD_FUZZ_DUMP=<file>: each module is written there before its build, and
// its iteration printed (what crashed is then the file's module).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/compiler.h"
#include "spirv_tools.h"

namespace manifold::compiler {
namespace {

const char* const kSeedSources[] = {
    R"(typedef struct { int a; float b; } pair_t;
kernel void mix(global pair_t* p, global float4* v, constant int* table, local float* tmp, int n) {
  size_t i = get_global_id(0);
  tmp[get_local_id(0)] = v[i].x;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = 0; k < n; ++k) p[i].b += sin(tmp[k % get_local_size(0)]) * table[k & 3];
  switch (p[i].a) { case 0: p[i].a = 3; break; case 7: p[i].a = convert_int_sat(v[i].y); break; }
  v[i] = fma(v[i], (float4)(2.0f), (float4)(1, 2, 3, 4));
})",
    R"(kernel void atomics(global int* counter, global uint* bits, global long* wide) {
  atomic_inc(counter);
  atomic_or(bits + (get_global_id(0) & 3), 1u << (get_global_id(0) & 31));
  wide[get_global_id(0)] = as_long((double)get_global_id(0)) >> 3;
  printf("%d %f\n", (int)get_global_id(0), 1.5f);
})",
    R"(kernel void groups(global const int* in, global int* out, local int* tile) {
  const size_t n = get_local_size(0), i = get_local_id(0);
  event_t e = async_work_group_copy(tile, in + get_group_id(0) * n, n, 0);
  wait_group_events(1, &e);
  out[get_global_id(0)] = work_group_reduce_add(tile[n - 1 - i]) + work_group_all(tile[i] > 0);
})",
    R"(kernel void images(read_only image2d_t src, sampler_t s, write_only image2d_t dst) {
  const int2 c = (int2)(get_global_id(0), get_global_id(1));
  write_imagef(dst, c, read_imagef(src, s, (float2)(c.x, c.y)) + (float4)(get_image_width(src)));
})",
};

std::vector<std::vector<uint32_t>> seed_modules() {
  std::vector<std::vector<uint32_t>> seeds;
  for (const char* source : kSeedSources) {
    std::string log;
    std::vector<uint8_t> il = spirv_test::clang_spirv(source, &log);
    EXPECT_FALSE(il.empty()) << log;
    std::vector<uint32_t> words(il.size() / 4);
    std::memcpy(words.data(), il.data(), words.size() * 4);
    if (!words.empty()) seeds.push_back(std::move(words));
  }
  for (const auto& entry : std::filesystem::directory_iterator(MANIFOLD_PRODUCERS_CORPUS)) {
    if (entry.path().extension() != ".spv") continue;
    std::vector<uint8_t> il = spirv_test::read_file(entry.path().string());
    std::vector<uint32_t> words(il.size() / 4);
    std::memcpy(words.data(), il.data(), words.size() * 4);
    if (!words.empty()) seeds.push_back(std::move(words));
  }
  // Sorted: the directory's order is the file system's, and the fuzzing is deterministic.
  std::sort(seeds.begin() + static_cast<long>(std::size(kSeedSources)), seeds.end());
  return seeds;
}

// One mutation of `words` (header left alone but for rare cases), chosen by `engine`.
void mutate_once(std::vector<uint32_t>& words, std::mt19937& engine) {
  if (words.size() <= 6) return;
  auto pick = [&](size_t low, size_t high) {  // [low, high)
    return low + engine() % (high - low);
  };
  const size_t body = pick(5, words.size());
  static const uint32_t kOdd[] = {
      0, 1, 2, 3, 0xffffffffu, 0x7fffffffu, 0x80000000u, 0xffff0000u, 0x00010000u, 64, 1000000};
  switch (engine() % 9) {
    case 0:  // truncated
      words.resize(pick(5, words.size()));
      break;
    case 1:  // an odd value anywhere in the body
      words[body] = kOdd[engine() % std::size(kOdd)];
      break;
    case 2:  // a random word
      words[body] = engine();
      break;
    case 3:  // a word's high half: the word count where an instruction starts there
      words[body] = (words[body] & 0xffffu) | (uint32_t(engine() % 12) << 16);
      break;
    case 4:  // an id replaced by another id below the bound (wrong ids, wrong types)
      words[body] = 1 + engine() % std::max<uint32_t>(1, words[3]);
      break;
    case 5: {  // a run of words repeated
      const size_t length = 1 + engine() % 8;
      if (body + length <= words.size())
        words.insert(words.begin() + static_cast<long>(body),
                     words.begin() + static_cast<long>(body),
                     words.begin() + static_cast<long>(body + length));
      break;
    }
    case 6:  // two words swapped
      std::swap(words[body], words[pick(5, words.size())]);
      break;
    case 7:  // a run of words removed
      words.erase(
          words.begin() + static_cast<long>(body),
          words.begin() + static_cast<long>(std::min(words.size(), body + 1 + engine() % 6)));
      break;
    default:  // the header's bound or version
      words[engine() % 2 ? 3 : 1] = kOdd[engine() % std::size(kOdd)];
      break;
  }
}

long env_or(const char* name, long fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::strtol(value, nullptr, 10) : fallback;
}

class SpirvFuzz : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("MANIFOLD_CACHE_DIR", "off", 1); }
  void TearDown() override { ::unsetenv("MANIFOLD_CACHE_DIR"); }
};

TEST_F(SpirvFuzz, MutatedModulesNeverCrashOrHang) {
  const std::vector<std::vector<uint32_t>> seeds = seed_modules();
  ASSERT_GT(seeds.size(), std::size(kSeedSources)) << "no modules at " << MANIFOLD_PRODUCERS_CORPUS;
  const Target cpu = host_cpu_target(), nvptx = nvptx_target(9, 0),
               spirv = spirv_target({.fp16 = false, .fp64 = true, .int64_atomics = true});
  const auto budget = std::chrono::seconds(env_or("MANIFOLD_FUZZ_SECONDS", 20));
  const long iterations = env_or("MANIFOLD_FUZZ_ITERATIONS", 600);
  const auto start = std::chrono::steady_clock::now();
  std::mt19937 engine(20261125);
  long done = 0, accepted = 0, built = 0;
  for (; done < iterations && std::chrono::steady_clock::now() - start < budget; ++done) {
    std::vector<uint32_t> words = seeds[engine() % seeds.size()];
    for (unsigned m = 1 + engine() % 3; m > 0; --m) mutate_once(words, engine);
    std::vector<uint8_t> bytes(words.size() * 4);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    if (engine() % 16 == 0 && !bytes.empty()) bytes.pop_back();  // not a whole number of words
    std::string why;
    if (!il_valid(bytes, &why)) {
      EXPECT_FALSE(why.empty());
      continue;
    }
    ++accepted;
    // Mostly the CPU (built and loaded); every fourth for NVPTX (PTX out, no GPU needed), every
    // eighth of those for Level Zero's SPIR-V target instead.
    const bool for_cpu = done % 4 != 0;
    const Target& other = done % 32 == 0 ? spirv : nvptx;
    if (const char* dump = std::getenv("MANIFOLD_FUZZ_DUMP")) {
      FILE* f = std::fopen(dump, "wb");
      std::fwrite(bytes.data(), 1, bytes.size(), f);
      std::fclose(f);
      std::fprintf(stderr, "iteration %ld %s\n", done, for_cpu ? "cpu" : other.triple.c_str());
    }
    BuildOutput out = build_il(bytes, "", for_cpu ? cpu : other, {});
    if (out.success) {
      ++built;
      if (for_cpu) {
        std::string error;
        EXPECT_NE(cpu::CpuExecutable::load(out.binary, cpu, &error), nullptr) << error;
      }
    } else {
      EXPECT_FALSE(out.log.empty()) << "a failed build needs a log (iteration " << done << ")";
    }
  }
  std::printf("SPIR-V fuzz: %ld modules, %ld well-formed, %ld built\n", done, accepted, built);
  EXPECT_GE(done, 3);
}

}  // namespace
}  // namespace manifold::compiler
