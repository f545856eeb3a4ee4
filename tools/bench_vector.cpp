// Vector-typed kernels of the bench worker: the same computations at every vector width, so that a
// platform's handling of OpenCL's vector types shows next to its scalar figures.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "bench_kernel_shapes.h"
#include "bench_measurements.h"
#include "bench_metrics.h"

namespace manifold_tool {
namespace {

constexpr unsigned kVectorWidths[] = {1, 2, 4, 8, 16};
constexpr unsigned kReadFetches = 16;  // loads per work-item in the streaming read
constexpr size_t kHashLanes = size_t{1} << 20;
constexpr size_t kGroupsOfOne = 2048;
// Long enough, even on a many-core host, that the 1 ms polling interval of groups_of_one_poll_ms
// is not what it measures: whether the kernel uses every core is.
constexpr unsigned kGroupsOfOneIterations = 2000000;

std::string vector_type(const char* scalar, unsigned width) {
  return width == 1 ? scalar : scalar + std::to_string(width);
}

// (T)(0, 1, ..., width - 1): each lane's index.
std::string lane_indices(const char* scalar, unsigned width) {
  if (width == 1) return "0";
  std::string text = "(";
  text += vector_type(scalar, width);
  text += ")(";
  for (unsigned lane = 0; lane < width; ++lane) {
    if (lane) text += ',';
    text += std::to_string(lane);
  }
  return text + ")";
}

// MD5's 64 steps: round functions, message word order, rotations and constants.
struct Md5Step {
  unsigned round, word, shift;
  uint32_t constant;
};
std::vector<Md5Step> md5_steps() {
  static const unsigned shifts[4][4] = {
      {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};
  std::vector<Md5Step> steps;
  for (unsigned i = 0; i < 64; ++i) {
    const unsigned round = i / 16;
    const unsigned word = round == 0   ? i
                          : round == 1 ? (5 * i + 1) % 16
                          : round == 2 ? (3 * i + 5) % 16
                                       : (7 * i) % 16;
    const auto constant =
        static_cast<uint32_t>(std::floor(std::fabs(std::sin(double(i + 1))) * 4294967296.0));
    steps.push_back({round, word, shifts[round][i % 4], constant});
  }
  return steps;
}

std::string vector_bench_source() {
  std::string s = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  for (unsigned w : kVectorWidths) {
    const std::string f = vector_type("float", w), n = std::to_string(w);
    // Work-item i of a group reads its block's elements i, i + local size, ... (clpeak's
    // pattern: consecutive work-items read consecutive elements).
    s += "kernel void read_" + f + "(global const " + f + "* in, global " + f +
         "* out) {\n"
         "  size_t base = get_group_id(0) * get_local_size(0) * " +
         std::to_string(kReadFetches) +
         " + get_local_id(0);\n"
         "  " +
         f +
         " sum = 0;\n"
         "  for (int k = 0; k < " +
         std::to_string(kReadFetches) +
         "; ++k) sum += in[base + k * get_local_size(0)];\n"
         "  out[get_global_id(0)] = sum;\n}\n";
    for (const char* scalar : {"float", "uint", "double"}) {
      const std::string t = vector_type(scalar, w);
      s += "kernel void mad_" + t + "(global " + t + "* out, " + scalar + " a, " + scalar +
           " b) {\n  " + t + " x0 = (" + t + ")(get_global_id(0) * " + n + ") + " +
           lane_indices(scalar, w) + ";\n";
      for (int c = 1; c < 8; ++c)
        s += "  " + t + " x" + std::to_string(c) + " = x0 + (" + t + ")(" + std::to_string(c) +
             ");\n";
      s += "  for (int i = 0; i < " + std::to_string(kMadIterations) + "; ++i) {\n";
      for (int c = 0; c < 8; ++c)
        s += "    x" + std::to_string(c) + " = x" + std::to_string(c) + " * a + b;\n";
      s += "  }\n  out[get_global_id(0)] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));\n}\n";
    }
    const std::string u = vector_type("uint", w);
    s += "kernel void hash_" + u + "(global " + u + "* out, uint seed) {\n  " + u + " lane = (" +
         u + ")(get_global_id(0) * " + n + ") + " + lane_indices("uint", w) + ";\n";
    for (int m = 0; m < 16; ++m)
      s += "  " + u + " m" + std::to_string(m) + " = lane * " + std::to_string(2 * m + 1) +
           "u + seed;\n";
    s += "  " + u + " a = 0x67452301u, b = 0xefcdab89u, c = 0x98badcfeu, d = 0x10325476u;\n";
    // The variables rotate through the roles (a, b, c, d) instead of being moved.
    const char* names = "abcd";
    unsigned first = 0;
    for (const Md5Step& step : md5_steps()) {
      const char A = names[first % 4], B = names[(first + 1) % 4], C = names[(first + 2) % 4],
                 D = names[(first + 3) % 4];
      std::string f;
      switch (step.round) {
        case 0:
          f = std::string("bitselect(") + D + ", " + C + ", " + B + ")";
          break;
        case 1:
          f = std::string("bitselect(") + C + ", " + B + ", " + D + ")";
          break;
        case 2:
          f = std::string("(") + B + " ^ " + C + " ^ " + D + ")";
          break;
        default:
          f = std::string("(") + C + " ^ (" + B + " | ~" + D + "))";
          break;
      }
      s += std::string("  ") + A + " = " + B + " + rotate(" + A + " + " + f + " + m" +
           std::to_string(step.word) + " + " + std::to_string(step.constant) + "u, (" + u + ")" +
           std::to_string(step.shift) + ");\n";
      first = (first + 3) % 4;  // the next step's a is this step's d
    }
    s += "  out[get_global_id(0)] = (a + 0x67452301u) ^ (b + 0xefcdab89u) ^ (c + 0x98badcfeu) ^ "
         "(d + 0x10325476u);\n}\n";
  }
  s += R"CLC(
kernel void loop_uint16(global uint16* out, uint iterations) {
  uint16 x = (uint16)(get_global_id(0) * 16) + (uint16)(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15);
  uint16 y = x * 3u + 1u, z = x ^ 0x5bd1e995u;
  for (uint i = 0; i < iterations; ++i) {
    x += y;
    y ^= z;
    z += x;
  }
  out[get_global_id(0)] = x ^ y ^ z;
}

kernel void groups_of_one(global uint* out, uint iterations) {
  uint x = get_global_id(0);
  for (uint i = 0; i < iterations; ++i) x = (x * 1664525u + 1013904223u) ^ (x >> 7);
  out[get_global_id(0)] = x;
}
)CLC";
  return s;
}

// Host references, lane by lane.
uint32_t rotate_left(uint32_t x, unsigned s) { return (x << s) | (x >> (32 - s)); }

uint32_t md5_style_hash(uint32_t lane, uint32_t seed) {
  uint32_t m[16];
  for (uint32_t j = 0; j < 16; ++j) m[j] = lane * (2 * j + 1) + seed;
  uint32_t v[4] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
  unsigned first = 0;
  for (const Md5Step& step : md5_steps()) {
    uint32_t &a = v[first % 4], b = v[(first + 1) % 4], c = v[(first + 2) % 4],
             d = v[(first + 3) % 4];
    uint32_t f = step.round == 0   ? (b & c) | (~b & d)
                 : step.round == 1 ? (d & b) | (~d & c)
                 : step.round == 2 ? b ^ c ^ d
                                   : c ^ (b | ~d);
    a = b + rotate_left(a + f + m[step.word] + step.constant, step.shift);
    first = (first + 3) % 4;
  }
  return (v[0] + 0x67452301u) ^ (v[1] + 0xefcdab89u) ^ (v[2] + 0x98badcfeu) ^ (v[3] + 0x10325476u);
}

Outcome measure_read(const Device& device, cl_program program, unsigned width,
                     const BenchSizes& sizes) {
  const size_t bytes = sizes.stream_bytes, count = bytes / sizeof(float);
  const size_t items = count / width / kReadFetches;
  std::vector<float> in(count), out(items * width);
  for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>(i % 7);
  Buffer in_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in.data());
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, out.size() * sizeof(float));
  Kernel kernel = make_kernel(program, ("read_" + vector_type("float", width)).c_str());
  set_arg(kernel, 0, in_buffer.get());
  set_arg(kernel, 1, out_buffer.get());
  size_t global = items;
  double seconds = timed_median(device, sizes.stream_repeats,
                                [&] { run_ndrange(device, kernel, 1, &global, nullptr); });
  read_buffer(device, out_buffer, out.size() * sizeof(float), out.data());
  // The local size the platform chose is not known here: check against every group size that
  // divides the range would be costly, so check what does not depend on it, the total.
  double expected = 0, got = 0;
  for (size_t i = 0; i < count && i < items * width * kReadFetches; ++i) expected += in[i];
  for (float value : out) got += value;
  if (!close_enough(expected, got, 1e-9)) return {0, mismatch("sum of out", 0, expected, got)};
  return {static_cast<double>(items * width * kReadFetches * sizeof(float)) / seconds / 1e9, {}};
}

template <typename T>
Outcome measure_mad(const Device& device, cl_program program, const char* scalar, unsigned width,
                    const BenchSizes& sizes) {
  const size_t items = kMadLanes / width;
  const T a = std::is_floating_point_v<T> ? T(0.999) : T(1664525u);
  const T b = std::is_floating_point_v<T> ? T(0.001) : T(1013904223u);
  std::vector<T> out(kMadLanes);
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, out.size() * sizeof(T));
  Kernel kernel = make_kernel(program, ("mad_" + vector_type(scalar, width)).c_str());
  set_arg(kernel, 0, out_buffer.get());
  set_arg(kernel, 1, a);
  set_arg(kernel, 2, b);
  size_t global = items;
  double seconds = timed_median(device, sizes.vector_repeats,
                                [&] { run_ndrange(device, kernel, 1, &global, nullptr); });
  read_buffer(device, out_buffer, out.size() * sizeof(T), out.data());
  for (size_t lane = 0; lane < kMadLanes; lane += 997) {
    const T expected = mad_chains<T>(static_cast<T>(static_cast<uint32_t>(lane)), a, b);
    const double relative = std::is_floating_point_v<T> ? 1e-4 : 0;
    if (!close_enough(static_cast<double>(expected), static_cast<double>(out[lane]), relative))
      return {0,
              mismatch("out", lane, static_cast<double>(expected), static_cast<double>(out[lane]))};
  }
  return {2.0 * 8 * kMadIterations * static_cast<double>(kMadLanes) / seconds / 1e9, {}};
}

Outcome measure_hash(const Device& device, cl_program program, unsigned width,
                     const BenchSizes& sizes) {
  const uint32_t seed = 0x9e3779b9u;
  std::vector<uint32_t> out(kHashLanes);
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, out.size() * sizeof(uint32_t));
  Kernel kernel = make_kernel(program, ("hash_" + vector_type("uint", width)).c_str());
  set_arg(kernel, 0, out_buffer.get());
  set_arg(kernel, 1, seed);
  size_t global = kHashLanes / width;
  double seconds = timed_median(device, sizes.vector_repeats,
                                [&] { run_ndrange(device, kernel, 1, &global, nullptr); });
  read_buffer(device, out_buffer, out.size() * sizeof(uint32_t), out.data());
  for (size_t lane = 0; lane < kHashLanes; lane += 101) {
    const uint32_t expected = md5_style_hash(static_cast<uint32_t>(lane), seed);
    if (out[lane] != expected) return {0, mismatch("out", lane, expected, out[lane])};
  }
  return {static_cast<double>(kHashLanes) / seconds / 1e6, {}};
}

Outcome measure_loop_local1(const Device& device, cl_program program, const BenchSizes& sizes) {
  std::vector<uint32_t> out(kLoopItems * kLoopLanesPerItem);
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, out.size() * sizeof(uint32_t));
  Kernel kernel = make_kernel(program, "loop_uint16");
  set_arg(kernel, 0, out_buffer.get());
  set_arg(kernel, 1, kLoopIterations);
  size_t global = kLoopItems, local = 1;
  double seconds = timed_median(device, sizes.vector_repeats,
                                [&] { run_ndrange(device, kernel, 1, &global, &local); });
  read_buffer(device, out_buffer, out.size() * sizeof(uint32_t), out.data());
  for (size_t lane = 0; lane < out.size(); lane += 61) {
    const uint32_t expected = loop_lane(static_cast<uint32_t>(lane));
    if (out[lane] != expected) return {0, mismatch("out", lane, expected, out[lane])};
  }
  return {static_cast<double>(out.size()) * kLoopIterations / seconds / 1e6, {}};
}

// 2048 work-groups of one work-item; the host waits in clFinish, or polls the event's status
// with 1 ms sleeps as many applications do (then no application thread works inside the
// platform).
Outcome measure_groups_of_one(const Device& device, cl_program program, bool poll,
                              const BenchSizes& sizes) {
  std::vector<uint32_t> out(kGroupsOfOne);
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, out.size() * sizeof(uint32_t));
  Kernel kernel = make_kernel(program, "groups_of_one");
  set_arg(kernel, 0, out_buffer.get());
  set_arg(kernel, 1, kGroupsOfOneIterations);
  size_t global = kGroupsOfOne, local = 1;
  auto run_once = [&] {
    cl_event done = nullptr;
    cl_check(clEnqueueNDRangeKernel(device.queue, kernel, 1, nullptr, &global, &local, 0, nullptr,
                                    &done),
             "clEnqueueNDRangeKernel");
    note_launch(device, kernel, 1, &global, &local);
    if (!poll) {
      finish(device);
    } else {
      cl_check(clFlush(device.queue), "clFlush");
      for (;;) {
        cl_int status = CL_QUEUED;
        cl_check(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                nullptr),
                 "clGetEventInfo");
        if (status < 0) throw ClError("the kernel's event", status);
        if (status == CL_COMPLETE) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    clReleaseEvent(done);
  };
  run_once();
  std::vector<double> times;
  for (int r = 0; r < sizes.vector_repeats; ++r) {
    auto start = Clock::now();
    run_once();
    times.push_back(seconds_between(start, Clock::now()));
  }
  read_buffer(device, out_buffer, out.size() * sizeof(uint32_t), out.data());
  for (size_t i = 0; i < out.size(); i += 97) {
    uint32_t x = static_cast<uint32_t>(i);
    for (unsigned k = 0; k < kGroupsOfOneIterations; ++k)
      x = (x * 1664525u + 1013904223u) ^ (x >> 7);
    if (out[i] != x) return {0, mismatch("out", i, x, out[i])};
  }
  return {median_of(times) * 1e3, {}};
}

}  // namespace

void measure_vector_kernels(const Device& device, const BenchSizes& sizes) {
  Program program;
  std::string build_failure;
  try {
    program = build_program(device, vector_bench_source());
  } catch (const std::exception& error) {
    build_failure = std::string("building the vector benchmark program: ") + error.what();
  }
  auto run = [&](const std::string& metric, const std::function<Outcome()>& body) {
    measure(metric.c_str(), [&]() -> Outcome {
      if (!build_failure.empty()) throw std::runtime_error(build_failure);
      return body();
    });
  };
  for (unsigned w : kVectorWidths)
    run("read_" + vector_type("float", w) + "_gbs",
        [&] { return measure_read(device, program, w, sizes); });
  for (unsigned w : kVectorWidths)
    run("mad_" + vector_type("float", w) + "_gflops",
        [&] { return measure_mad<float>(device, program, "float", w, sizes); });
  for (unsigned w : kVectorWidths)
    run("mad_" + vector_type("uint", w) + "_gops",
        [&] { return measure_mad<uint32_t>(device, program, "uint", w, sizes); });
  for (unsigned w : kVectorWidths)
    run("mad_" + vector_type("double", w) + "_gflops",
        [&] { return measure_mad<double>(device, program, "double", w, sizes); });
  for (unsigned w : kVectorWidths)
    if (w != 2)
      run("hash_" + vector_type("uint", w) + "_mlanes",
          [&] { return measure_hash(device, program, w, sizes); });
  run("loop_uint16_local1_melems", [&] { return measure_loop_local1(device, program, sizes); });
  run("groups_of_one_finish_ms",
      [&] { return measure_groups_of_one(device, program, false, sizes); });
  run("groups_of_one_poll_ms", [&] { return measure_groups_of_one(device, program, true, sizes); });
}

}  // namespace manifold_tool
