// The host reference: the triad a streaming kernel can approach, and the compute kernels' work in
// plain C++ on 64-byte vectors (GCC/Clang vector extensions, compiled for the widest vectors the
// CPU has), so that a CPU platform's mad and loop figures show next to the machine's ceiling.
#include "bench_host.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "bench_kernel_shapes.h"

namespace manifold_tool {
namespace {

// Each compute loop comes in one variant per vector ISA (AVX-512, AVX2 with FMA, baseline), picked
// at run time. Not GCC's target_clones: its ifunc resolvers run while the program is being
// relocated, before a sanitizer's runtime is up (ThreadSanitizer builds crashed there).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MANIFOLD_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")))
#define MANIFOLD_AVX2 __attribute__((target("avx2,fma")))
enum class VectorIsa { kBaseline, kAvx2, kAvx512 };
VectorIsa widest_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return VectorIsa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::kAvx2;
  return VectorIsa::kBaseline;
}
#else
#define MANIFOLD_AVX512
#define MANIFOLD_AVX2
enum class VectorIsa { kBaseline, kAvx2, kAvx512 };
VectorIsa widest_isa() { return VectorIsa::kBaseline; }
#endif

// name_avx512, name_avx2 and name_baseline, each running `call` (inlined: the work is in
// always-inline functions) compiled for its ISA; MANIFOLD_WIDEST(name) picks the one this CPU runs.
#define MANIFOLD_ISA_VARIANTS(name, params, call)     \
  MANIFOLD_AVX512 void name##_avx512 params { call; } \
  MANIFOLD_AVX2 void name##_avx2 params { call; }     \
  void name##_baseline params { call; }
#define MANIFOLD_WIDEST(name) pick_variant(name##_avx512, name##_avx2, name##_baseline)

template <typename Function>
Function* pick_variant(Function* avx512, Function* avx2, Function* baseline) {
  static const VectorIsa isa = widest_isa();
  return isa == VectorIsa::kAvx512 ? avx512 : isa == VectorIsa::kAvx2 ? avx2 : baseline;
}

// 64-byte vectors, a zmm register with AVX-512 (larger ones GCC keeps in memory). Narrower ISAs
// split them into registers of their own width.
typedef float Float16 __attribute__((vector_size(64)));
typedef double Double8 __attribute__((vector_size(64)));
typedef uint32_t Uint16 __attribute__((vector_size(64)));

// Timings per compute figure (the median is reported), at least: single passes are short.
constexpr int kComputeTimings = 9;

unsigned thread_count() { return std::max(1u, std::thread::hardware_concurrency()); }

// body(begin, end) on every thread, over [0, count) in contiguous slices.
template <typename Body>
void parallel(size_t count, Body&& body) {
  const unsigned threads = thread_count();
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back([&, t] { body(count * t / threads, count * (t + 1) / threads); });
  for (auto& worker : workers) worker.join();
}

template <typename Run>
double seconds_of(Run&& run) {
  auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The median time of `run` after a warm-up (page faults, clocks).
template <typename Run>
double median_seconds(int repeats, Run&& run) {
  run();
  std::vector<double> times;
  for (int r = 0; r < std::max(1, repeats); ++r) times.push_back(seconds_of(run));
  return median_of(times);
}

// Threads that stay up between timings: a compute timing covers one pass of the kernel's work
// as a launch does, a burst of a few milliseconds, neither starting threads nor a sustained load
// that the clocks would settle under. Idle threads spin a while before they sleep, so a pass
// starts at once, and take the work in chunks, so that a core another process shares does not
// hold up the pass (what an OpenCL platform's scheduler does too).
class ThreadTeam {
 public:
  ThreadTeam() : threads_(thread_count()) {
    for (unsigned t = 1; t < threads_; ++t)
      workers_.emplace_back([this] {
        uint64_t seen = 0;
        for (;;) {
          seen = wait_for_change(pass_, seen);
          if (stop_.load(std::memory_order_acquire)) return;
          take_chunks();
          if (busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) busy_.notify_one();
        }
      });
  }
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;
  ~ThreadTeam() {
    stop_.store(true, std::memory_order_release);
    pass_.fetch_add(1, std::memory_order_acq_rel);
    pass_.notify_all();
    for (auto& worker : workers_) worker.join();
  }
  // body(begin, end) over [0, count), in chunks, on every thread (this one too).
  template <typename Body>
  void run(size_t count, Body&& body) {
    const std::function<void(size_t, size_t)> chunk_body = std::forward<Body>(body);
    body_ = &chunk_body;
    count_ = count;
    chunk_ = std::max<size_t>(1, count / (size_t{threads_} * 16));
    next_.store(0, std::memory_order_relaxed);
    busy_.store(threads_ - 1, std::memory_order_relaxed);
    pass_.fetch_add(1, std::memory_order_acq_rel);  // publishes the fields above
    pass_.notify_all();
    take_chunks();
    for (unsigned left; (left = busy_.load(std::memory_order_acquire)) != 0;) busy_.wait(left);
  }

 private:
  static uint64_t wait_for_change(const std::atomic<uint64_t>& value, uint64_t seen) {
    for (int spin = 0; spin < (1 << 20); ++spin)
      if (const uint64_t now = value.load(std::memory_order_acquire); now != seen) return now;
    value.wait(seen, std::memory_order_acquire);
    return value.load(std::memory_order_acquire);
  }
  void take_chunks() {
    for (size_t begin; (begin = next_.fetch_add(chunk_, std::memory_order_relaxed)) < count_;)
      (*body_)(begin, std::min(count_, begin + chunk_));
  }

  const unsigned threads_;
  const std::function<void(size_t, size_t)>* body_ = nullptr;
  size_t count_ = 0, chunk_ = 1;
  std::atomic<size_t> next_{0};
  std::atomic<unsigned> busy_{0};
  std::atomic<uint64_t> pass_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

Cell value_cell(double value) {
  Cell cell;
  cell.state = CellState::kValue;
  cell.value = value;
  return cell;
}

Cell fail_cell(const char* what, size_t index) {
  Cell cell;
  cell.state = CellState::kFail;
  cell.note = std::string("host ") + what + " mismatch at " + std::to_string(index);
  return cell;
}

// A plain multi-threaded C++ triad over the same bytes as the OpenCL triad. Each thread touches
// its own slice first, so pages land where that thread runs.
Cell measure_triad(const BenchSizes& sizes) {
  const size_t count = sizes.stream_bytes / sizeof(float);
  std::unique_ptr<float[]> a_data(new float[count]), b_data(new float[count]),
      c_data(new float[count]);
  float* pa = a_data.get();
  float* pb = b_data.get();
  float* pc = c_data.get();
  parallel(count, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      pa[i] = 0;
      pb[i] = static_cast<float>(i % 1000) * 0.5f;
      pc[i] = static_cast<float>(i % 7) + 0.25f;
    }
  });
  const float scale = 3.0f;
  double seconds = median_seconds(sizes.stream_repeats, [&] {
    parallel(count, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) pa[i] = pb[i] + scale * pc[i];
    });
  });
  for (size_t i = 0; i < count; i += 4099)
    if (pa[i] != pb[i] + scale * pc[i]) return fail_cell("triad", i);
  return value_cell(3.0 * static_cast<double>(sizes.stream_bytes) / seconds / 1e9);
}

// The mad kernels' eight chains for two vectors of lanes from `lane`: sixteen independent chains,
// enough to fill the multiply pipes whatever their latency (the OpenCL kernels get the same from
// platforms that run work-items in lockstep). Inlined into each ISA's clone.
template <typename Vector, typename Scalar>
__attribute__((always_inline)) inline void mad_lanes(Scalar* out, size_t lane, Scalar a, Scalar b) {
  constexpr unsigned kLanes = sizeof(Vector) / sizeof(Scalar);
  Vector lane_index = {};  // (0, 1, 2, ...): a constant once unrolled
#pragma GCC unroll 16
  for (unsigned l = 0; l < kLanes; ++l) lane_index[l] = static_cast<Scalar>(l);
  Vector x[2][8];
#pragma GCC unroll 2
  for (unsigned v = 0; v < 2; ++v) {
    x[v][0] = static_cast<Scalar>(static_cast<uint32_t>(lane + v * kLanes)) + lane_index;
#pragma GCC unroll 8
    for (unsigned c = 1; c < 8; ++c) x[v][c] = x[v][0] + static_cast<Scalar>(c);
  }
  for (unsigned i = 0; i < kMadIterations; ++i) {
#pragma GCC unroll 2
    for (unsigned v = 0; v < 2; ++v)
#pragma GCC unroll 8
      for (unsigned c = 0; c < 8; ++c) x[v][c] = x[v][c] * a + b;
  }
#pragma GCC unroll 2
  for (unsigned v = 0; v < 2; ++v) {
    Vector sum =
        ((x[v][0] + x[v][1]) + (x[v][2] + x[v][3])) + ((x[v][4] + x[v][5]) + (x[v][6] + x[v][7]));
    std::memcpy(out + lane + v * kLanes, &sum, sizeof sum);
  }
}

// [begin, end) are multiples of kMadBlock lanes.
constexpr size_t kMadBlock = 32;

template <typename Vector, typename Scalar>
__attribute__((always_inline)) inline void mad_range(Scalar* out, size_t begin, size_t end,
                                                     Scalar a, Scalar b) {
  constexpr size_t kStep = 2 * sizeof(Vector) / sizeof(Scalar);
  for (size_t lane = begin; lane < end; lane += kStep) mad_lanes<Vector>(out, lane, a, b);
}
MANIFOLD_ISA_VARIANTS(mad_float, (float* out, size_t begin, size_t end, float a, float b),
                      (mad_range<Float16>(out, begin, end, a, b)))
MANIFOLD_ISA_VARIANTS(mad_double, (double* out, size_t begin, size_t end, double a, double b),
                      (mad_range<Double8>(out, begin, end, a, b)))
MANIFOLD_ISA_VARIANTS(mad_uint, (uint32_t * out, size_t begin, size_t end, uint32_t a, uint32_t b),
                      (mad_range<Uint16>(out, begin, end, a, b)))

// The uint16 loop for work-items [begin, end), two at a time and unrolled: one item's add/xor
// chain is as long as its work (1.5 cycles per iteration either way), two give the scheduler
// slack, and unrolling takes the loop's own compare and branch off the vector ports.
__attribute__((always_inline)) inline void loop_range(uint32_t* out, size_t begin, size_t end) {
  for (size_t item = begin; item < end; item += 2) {
    constexpr Uint16 kLaneIndex = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    Uint16 x[2], y[2], z[2];
    for (size_t k = 0; k < 2; ++k) {
      x[k] = kLaneIndex + static_cast<uint32_t>((item + k) * 16);
      y[k] = x[k] * 3u + 1u;
      z[k] = x[k] ^ 0x5bd1e995u;
    }
#pragma GCC unroll 8
    for (unsigned i = 0; i < kLoopIterations; ++i) {
      x[0] += y[0];
      x[1] += y[1];
      y[0] ^= z[0];
      y[1] ^= z[1];
      z[0] += x[0];
      z[1] += x[1];
    }
    for (size_t k = 0; k < 2; ++k) {
      Uint16 result = x[k] ^ y[k] ^ z[k];
      std::memcpy(out + (item + k) * 16, &result, sizeof result);
    }
  }
}

MANIFOLD_ISA_VARIANTS(loop_uint16, (uint32_t * out, size_t begin, size_t end),
                      (loop_range(out, begin, end)))

// The same lanes as the mad kernels; the figure is the same work at every OpenCL vector width.
template <typename T, typename Run>
Cell measure_mad(ThreadTeam& team, Run&& run) {
  const T a = std::is_floating_point_v<T> ? T(0.999) : T(1664525u);
  const T b = std::is_floating_point_v<T> ? T(0.001) : T(1013904223u);
  std::vector<T> out(kMadLanes);
  const double seconds = median_seconds(kComputeTimings, [&] {
    team.run(kMadLanes / kMadBlock, [&](size_t begin, size_t end) {
      run(out.data(), begin * kMadBlock, end * kMadBlock, a, b);
    });
  });
  for (size_t lane = 0; lane < kMadLanes; lane += 997) {
    const T expected = mad_chains<T>(static_cast<T>(static_cast<uint32_t>(lane)), a, b);
    const double relative = std::is_floating_point_v<T> ? 1e-4 : 0;
    if (!close_enough(static_cast<double>(expected), static_cast<double>(out[lane]), relative))
      return fail_cell("mad", lane);
  }
  return value_cell(2.0 * 8 * kMadIterations * static_cast<double>(kMadLanes) / seconds / 1e9);
}

Cell measure_loop(ThreadTeam& team) {
  std::vector<uint32_t> out(kLoopItems * kLoopLanesPerItem);
  const double seconds = median_seconds(kComputeTimings, [&] {
    team.run(kLoopItems / 2, [&](size_t begin, size_t end) {
      MANIFOLD_WIDEST(loop_uint16)(out.data(), begin * 2, end * 2);
    });
  });
  for (size_t lane = 0; lane < out.size(); lane += 61)
    if (out[lane] != loop_lane(static_cast<uint32_t>(lane))) return fail_cell("loop", lane);
  return value_cell(static_cast<double>(out.size()) * kLoopIterations / seconds / 1e6);
}

}  // namespace

void run_host_subject(bool quick, Subject& subject) {
  const BenchSizes sizes = bench_sizes(quick);
  subject.description = "plain C++ on " + std::to_string(thread_count()) +
                        " threads (std::thread), no OpenCL; compute on 64-byte vectors";
  subject.cells["triad_gbs"] = measure_triad(sizes);
  // One figure per element type, shown in every width's row: the work is the same lanes.
  ThreadTeam team;
  const Cell float_cell = measure_mad<float>(team, MANIFOLD_WIDEST(mad_float));
  const Cell uint_cell = measure_mad<uint32_t>(team, MANIFOLD_WIDEST(mad_uint));
  const Cell double_cell = measure_mad<double>(team, MANIFOLD_WIDEST(mad_double));
  for (const char* width : {"", "2", "4", "8", "16"}) {
    subject.cells[std::string("mad_float") + width + "_gflops"] = float_cell;
    subject.cells[std::string("mad_uint") + width + "_gops"] = uint_cell;
    subject.cells[std::string("mad_double") + width + "_gflops"] = double_cell;
  }
  subject.cells["loop_uint16_local1_melems"] = measure_loop(team);
}

}  // namespace manifold_tool
