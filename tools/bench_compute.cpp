// Compute kernel figures of the bench worker: triad, reduction, SGEMM (naive and tiled), n-body.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "bench_measurements.h"
#include "bench_metrics.h"

namespace manifold_tool {

Outcome measure_triad(const Device& device, cl_program program, const BenchSizes& sizes) {
  size_t bytes = sizes.stream_bytes, count = bytes / sizeof(float);
  std::vector<float> b(count), c(count), a(count);
  for (size_t i = 0; i < count; ++i) {
    b[i] = static_cast<float>(i % 1000) * 0.5f;
    c[i] = static_cast<float>(i % 7) + 0.25f;
  }
  Buffer a_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, bytes);
  Buffer b_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b.data());
  Buffer c_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, c.data());
  Kernel kernel = make_kernel(program, "triad");
  const float scale = 3.0f;
  set_arg(kernel, 0, a_buffer.get());
  set_arg(kernel, 1, b_buffer.get());
  set_arg(kernel, 2, c_buffer.get());
  set_arg(kernel, 3, scale);
  size_t global = count / 4;
  double seconds = timed_median(device, sizes.stream_repeats,
                                [&] { run_ndrange(device, kernel, 1, &global, nullptr); });
  read_buffer(device, a_buffer, bytes, a.data());
  for (size_t i = 0; i < count; ++i) {
    float expected = b[i] + scale * c[i];
    if (!close_enough(expected, a[i], 1e-6)) return {0, mismatch("a", i, expected, a[i])};
  }
  return {3.0 * static_cast<double>(bytes) / seconds / 1e9, {}};
}

Outcome measure_reduce(const Device& device, cl_program program, const BenchSizes& sizes) {
  const size_t group = 256;
  size_t count = sizes.stream_bytes / sizeof(float), groups = count / group;
  // Multiples of 1/4 below 5: every partial sum of 256 of them is exact in float.
  std::vector<float> input(count), partial(groups);
  for (size_t i = 0; i < count; ++i) input[i] = static_cast<float>(i % 17) * 0.25f;
  Buffer in_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                 count * sizeof(float), input.data());
  Buffer partial_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, groups * sizeof(float));
  Kernel kernel = make_kernel(program, "reduce");
  set_arg(kernel, 0, in_buffer.get());
  set_arg(kernel, 1, partial_buffer.get());
  cl_check(clSetKernelArg(kernel, 2, group * sizeof(float), nullptr), "clSetKernelArg(local)");
  double seconds = timed_median(device, sizes.stream_repeats,
                                [&] { run_ndrange(device, kernel, 1, &count, &group); });
  read_buffer(device, partial_buffer, groups * sizeof(float), partial.data());
  for (size_t g = 0; g < groups; ++g) {
    double expected = 0;
    for (size_t i = g * group; i < (g + 1) * group; ++i) expected += input[i];
    if (!close_enough(expected, partial[g], 1e-6))
      return {0, mismatch("partial", g, expected, partial[g])};
  }
  return {static_cast<double>(count * sizeof(float)) / seconds / 1e9, {}};
}

Outcome measure_sgemm(const Device& device, cl_program program, const char* kernel_name,
                      const BenchSizes& sizes) {
  const int n = sizes.sgemm_n;
  size_t elements = static_cast<size_t>(n) * n, bytes = elements * sizeof(float);
  std::mt19937 random(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(elements), b(elements), c(elements);
  for (auto& x : a) x = uniform(random);
  for (auto& x : b) x = uniform(random);
  Buffer a_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a.data());
  Buffer b_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b.data());
  Buffer c_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, bytes);
  Kernel kernel = make_kernel(program, kernel_name);
  set_arg(kernel, 0, n);
  set_arg(kernel, 1, a_buffer.get());
  set_arg(kernel, 2, b_buffer.get());
  set_arg(kernel, 3, c_buffer.get());
  size_t global[2] = {static_cast<size_t>(n), static_cast<size_t>(n)}, local[2] = {16, 16};
  double seconds = timed_median(device, sizes.sgemm_repeats,
                                [&] { run_ndrange(device, kernel, 2, global, local); });
  read_buffer(device, c_buffer, bytes, c.data());
  std::uniform_int_distribution<int> pick(0, n - 1);
  for (int sample = 0; sample < 256; ++sample) {
    int row = pick(random), col = pick(random);
    double expected = 0;
    for (int k = 0; k < n; ++k) expected += static_cast<double>(a[row * n + k]) * b[k * n + col];
    size_t index = static_cast<size_t>(row) * n + col;
    // Sums of n products of magnitude < 1: allow float rounding over n terms.
    if (std::fabs(expected - c[index]) > 1e-5 * n)
      return {0, mismatch("c", index, expected, c[index])};
  }
  return {2.0 * n * n * static_cast<double>(n) / seconds / 1e9, {}};
}

Outcome measure_nbody(const Device& device, cl_program program, const BenchSizes& sizes) {
  const int n = sizes.nbody_bodies;
  const float softening = 0.01f;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> coordinate(-1.0f, 1.0f), mass(0.5f, 1.0f);
  std::vector<float> positions(4 * static_cast<size_t>(n)), accel(4 * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) positions[4 * i + k] = coordinate(random);
    positions[4 * i + 3] = mass(random);
  }
  size_t bytes = positions.size() * sizeof(float);
  Buffer pos_buffer =
      make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, positions.data());
  Buffer accel_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, bytes);
  Kernel kernel = make_kernel(program, "nbody");
  set_arg(kernel, 0, n);
  set_arg(kernel, 1, softening);
  set_arg(kernel, 2, pos_buffer.get());
  set_arg(kernel, 3, accel_buffer.get());
  size_t global = static_cast<size_t>(n);
  double seconds = timed_median(device, sizes.nbody_repeats,
                                [&] { run_ndrange(device, kernel, 1, &global, nullptr); });
  read_buffer(device, accel_buffer, bytes, accel.data());
  for (int sample = 0; sample < 64; ++sample) {
    int i = (sample * 7919) % n;
    double expected[3] = {0, 0, 0};
    for (int j = 0; j < n; ++j) {
      double d[3], r2 = softening;
      for (int k = 0; k < 3; ++k) {
        d[k] = static_cast<double>(positions[4 * j + k]) - positions[4 * i + k];
        r2 += d[k] * d[k];
      }
      double inv = 1.0 / std::sqrt(r2);
      for (int k = 0; k < 3; ++k) expected[k] += d[k] * positions[4 * j + 3] * inv * inv * inv;
    }
    double magnitude = std::sqrt(expected[0] * expected[0] + expected[1] * expected[1] +
                                 expected[2] * expected[2]);
    for (int k = 0; k < 3; ++k)
      if (std::fabs(expected[k] - accel[4 * i + k]) > 1e-3 * std::max(1.0, magnitude))
        return {0,
                mismatch("accel", static_cast<size_t>(4 * i + k), expected[k], accel[4 * i + k])};
  }
  return {20.0 * n * static_cast<double>(n) / seconds / 1e9, {}};
}

}  // namespace manifold_tool
