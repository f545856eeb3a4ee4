// Bad input: syntax errors, unknown functions and many mutated kernel sources. The compiler must
// answer every one with success or a failure and a log: no crash, no hang.
//
// The fuzz loop is deterministic (fixed seed) and bounded in time: MANIFOLD_FUZZ_SECONDS
// (default 20) and MANIFOLD_FUZZ_ITERATIONS (default 400), whichever ends first. A watchdog
// aborts the process, naming the source, when one build takes longer than 60 s.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/compiler.h"

namespace manifold::compiler {
namespace {

using cpu::CpuExecutable;

const Target& host() {
  static const Target target = host_cpu_target();
  return target;
}

class NoCache : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("MANIFOLD_CACHE_DIR", "off", 1); }
  void TearDown() override { ::unsetenv("MANIFOLD_CACHE_DIR"); }
};

using BadInput = NoCache;

TEST_F(BadInput, SyntaxErrorNamesTheLine) {
  BuildOutput out = build("__kernel void k(__global int* a) {\n  a[0] = 1\n}\n", "", host());
  EXPECT_FALSE(out.success);
  EXPECT_NE(out.log.find("error"), std::string::npos) << out.log;
  EXPECT_NE(out.log.find(":2:"), std::string::npos) << "the log should point at line 2:\n"
                                                    << out.log;
}

TEST_F(BadInput, UnknownFunctionIsNamed) {
  BuildOutput out =
      build("__kernel void k(__global float* a) { a[0] = no_such_builtin(a[1]); }", "", host());
  EXPECT_FALSE(out.success);
  EXPECT_NE(out.log.find("no_such_builtin"), std::string::npos) << out.log;
}

TEST_F(BadInput, UndefinedExternalFunctionFailsTheLink) {
  // Declared but defined nowhere: compiles, but the executable cannot be linked.
  BuildOutput out =
      build("float helper(float);\n__kernel void k(__global float* a) { a[0] = helper(a[1]); }", "",
            host());
  EXPECT_FALSE(out.success);
  EXPECT_NE(out.log.find("helper"), std::string::npos) << out.log;
}

TEST_F(BadInput, HugeLocalArrayIsReportedInKernelInfo) {
  // 1 MiB of __local memory compiles; the runtime compares local_mem_size with the device's
  // CL_DEVICE_LOCAL_MEM_SIZE and refuses the launch with CL_OUT_OF_RESOURCES.
  BuildOutput out = build(R"(
    __kernel void k(__global float* a) {
      __local float big[262144];
      big[get_local_id(0)] = a[get_global_id(0)];
      barrier(CLK_LOCAL_MEM_FENCE);
      a[get_global_id(0)] = big[get_local_size(0) - 1 - get_local_id(0)];
    })",
                          "", host());
  ASSERT_TRUE(out.success) << out.log;
  ASSERT_EQ(out.kernels.size(), 1u);
  EXPECT_GE(out.kernels[0].local_mem_size, 262144u * 4);
}

TEST_F(BadInput, EmptyAndBinaryGarbageSources) {
  EXPECT_TRUE(build("", "", host()).success);  // a program with no kernels is valid
  std::string garbage;
  std::mt19937 engine(7);
  for (int i = 0; i < 4096; ++i) garbage += char(engine() % 256);
  BuildOutput out = build(garbage, "", host());
  EXPECT_FALSE(out.success);
  EXPECT_FALSE(out.log.empty());
}

// ---- The fuzz loop ----

const char* const kSeeds[] = {
    R"(__kernel void vadd(__global const float* a, __global const float* b, __global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
})",
    R"(__kernel void reduce(__global const int* in, __global int* out, __local int* s) {
  uint l = get_local_id(0);
  s[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = get_local_size(0) / 2; k > 0; k >>= 1) {
    if (l < k) s[l] += s[l + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = s[0];
})",
    R"(typedef struct { float4 p; int n; } Item;
float helper(float x) { return sin(x) * cos(x) + native_exp(x); }
__constant float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__kernel void shapes(__global Item* items, float scale, int count) {
  int i = get_global_id(0);
  if (i >= count) return;
  Item it = items[i];
  for (int k = 0; k < it.n && k < 8; ++k) it.p = mad(it.p, (float4)(scale), (float4)(table[k & 3]));
  it.p.x = helper(it.p.y);
  items[i] = it;
})",
    R"(__kernel void hist(__global const uchar* d, __global volatile uint* bins, uint n) {
  __local uint local_bins[16];
  if (get_local_id(0) < 16) local_bins[get_local_id(0)] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint i = get_global_id(0); i < n; i += get_global_size(0)) atomic_inc(&local_bins[d[i] & 15]);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) < 16) atomic_add(&bins[get_local_id(0)], local_bins[get_local_id(0)]);
})",
    R"(__kernel void conv(__global const int* a, __global float* f, __global uchar4* u) {
  int i = get_global_id(0);
  f[i] = convert_float_rtz(a[i]) + as_float(a[i] & 0x3f800000);
  u[i] = convert_uchar4_sat(vload4(i, a));
  vstore_half_rte(f[i], i, (__global half*)f);
  printf("%d %f\n", i, f[i]);
})",
};

const char* const kTokens[] = {
    "{",
    "}",
    "(",
    ")",
    ";",
    ",",
    "barrier(CLK_LOCAL_MEM_FENCE);",
    "__local",
    "__global",
    "int",
    "float4",
    "return",
    "for",
    "while(1)",
    "if",
    "else",
    "get_local_id(0)",
    "0x7fffffff",
    "-1",
    "1.0e39f",
    "[",
    "]",
    "*",
    "&",
    "#define X",
    "#if 0",
    "\"",
    "'",
    "/*",
    "//",
    "\\",
    "__kernel",
    "void",
    "goto l;",
    "l:",
    "work_group_reduce_add(1)",
    "atomic_inc(0)",
    "sizeof",
    "typedef",
    "struct S",
    "...",
    "?:",
};

std::string mutate(const std::string& seed, std::mt19937& engine) {
  std::string out = seed;
  const int edits = 1 + int(engine() % 4);
  for (int e = 0; e < edits && !out.empty(); ++e) {
    const size_t at = engine() % out.size();
    switch (engine() % 6) {
      case 0:  // delete a span
        out.erase(at, 1 + engine() % 12);
        break;
      case 1:  // insert a token
        out.insert(at, std::string(" ") + kTokens[engine() % std::size(kTokens)] + " ");
        break;
      case 2:  // replace one character with any byte
        out[at] = char(engine() % 256);
        break;
      case 3: {  // duplicate a span elsewhere
        const size_t length = std::min<size_t>(1 + engine() % 40, out.size() - at);
        const std::string span = out.substr(at, length);
        out.insert(engine() % out.size(), span);
        break;
      }
      case 4: {  // swap two spans' characters
        const size_t other = engine() % out.size();
        std::swap(out[at], out[other]);
        break;
      }
      default:  // splice in the tail of another seed
        out = out.substr(0, at) + std::string(kSeeds[engine() % std::size(kSeeds)]).substr(at % 50);
        break;
    }
  }
  return out;
}

// Aborts the process when one build runs longer than its deadline: a hang must fail visibly.
class BuildWatchdog {
 public:
  BuildWatchdog() : thread_([this] { watch(); }) {}
  ~BuildWatchdog() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void arm(const std::string* source) {
    std::lock_guard lock(mutex_);
    source_ = source;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    wake_.notify_all();
  }
  void disarm() {
    std::lock_guard lock(mutex_);
    source_ = nullptr;
  }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      if (!source_) {
        wake_.wait(lock);
        continue;
      }
      if (std::chrono::steady_clock::now() >= deadline_) {
        std::fprintf(stderr, "fuzz: a build did not finish within 60 s; source:\n%s\n",
                     source_->c_str());
        std::fflush(stderr);
        std::abort();
      }
      wake_.wait_until(lock, deadline_);
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  const std::string* source_ = nullptr;
  std::chrono::steady_clock::time_point deadline_;
  bool stop_ = false;
  std::thread thread_;
};

long env_or(const char* name, long fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::strtol(value, nullptr, 10) : fallback;
}

using Fuzz = NoCache;

TEST_F(Fuzz, MutatedSourcesNeverCrashOrHang) {
  const auto budget = std::chrono::seconds(env_or("MANIFOLD_FUZZ_SECONDS", 20));
  const long iterations = env_or("MANIFOLD_FUZZ_ITERATIONS", 400);
  const auto start = std::chrono::steady_clock::now();
  std::mt19937 engine(20261122);
  BuildWatchdog watchdog;
  long done = 0, succeeded = 0;
  for (; done < iterations && std::chrono::steady_clock::now() - start < budget; ++done) {
    const std::string source = mutate(kSeeds[engine() % std::size(kSeeds)], engine);
    // Some builds with options too: they travel other paths (no optimization, fast math).
    const char* options = (done % 3 == 0)   ? "-cl-opt-disable"
                          : (done % 3 == 1) ? "-cl-fast-relaxed-math -cl-std=CL3.0"
                                            : "";
    watchdog.arm(&source);
    BuildOutput out = build(source, options, host());
    watchdog.disarm();
    if (out.success) {
      ++succeeded;
      // A successful build must also load.
      std::string error;
      EXPECT_NE(CpuExecutable::load(out.binary, host(), &error), nullptr) << error << "\n"
                                                                          << source;
    } else {
      EXPECT_FALSE(out.log.empty()) << "a failed build needs a log; source:\n" << source;
    }
  }
  std::printf("fuzz: %ld sources, %ld built\n", done, succeeded);
  EXPECT_GE(done, 3);  // even a slow sanitizer build gets through a few
}

}  // namespace
}  // namespace manifold::compiler
