#include "bench_app_kernels_more.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace manifold_tool {

namespace {

// splitmix64: cheap enough for the GPU sizes' inputs (mt19937 would dominate the run).
struct Random {
  uint64_t state;
  explicit Random(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), without a division.
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(((next() >> 32) * n) >> 32); }
  // Uniform in [lo, hi).
  float uniform(float lo, float hi) {
    return lo + (hi - lo) * static_cast<float>(next() >> 40) * (1.0f / 16777216.0f);
  }
};

constexpr double kPi = 3.14159265358979323846;

}  // namespace

// ---- Histogram ----

size_t histogram_elements(bool gpu, bool quick) {
  return (size_t{gpu ? 64u : 4u} << 20) / (quick ? 4 : 1);
}

const char* histogram_source() {
  return R"CLC(
kernel void histogram256(global const uint* data, global uint* bins, uint n) {
  local uint counts[256];
  const uint lid = get_local_id(0), group_size = get_local_size(0);
  for (uint b = lid; b < 256; b += group_size) counts[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint stride = get_global_size(0);
  for (uint i = get_global_id(0); i < n; i += stride) atomic_inc(&counts[data[i] & 255u]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint b = lid; b < 256; b += group_size)
    if (counts[b] != 0) atomic_add(&bins[b], counts[b]);
}
)CLC";
}

std::vector<uint32_t> histogram_input(size_t n) {
  std::vector<uint32_t> data(n);
  Random random(21);
  for (uint32_t& v : data) {
    const uint64_t h = random.next();
    v = static_cast<uint32_t>((h >> 32) & 0xffffff00u) |
        static_cast<uint32_t>(((h & 255) + ((h >> 8) & 255)) >> 1);
  }
  return data;
}

std::vector<uint32_t> histogram_reference(const std::vector<uint32_t>& data) {
  std::vector<uint32_t> bins(kHistogramBins, 0);
  for (uint32_t v : data) ++bins[v & 255u];
  return bins;
}

// ---- SpMV ----

unsigned spmv_rows(bool gpu, bool quick) { return (gpu ? 4u << 20 : 256u << 10) / (quick ? 4 : 1); }

const char* spmv_source() {
  return R"CLC(
kernel void spmv_csr(global const uint* row_start, global const uint* columns,
                     global const float* values, global const float* x, global float* y,
                     uint rows) {
  const uint r = get_global_id(0);
  if (r >= rows) return;
  const uint end = row_start[r + 1];
  float sum = 0.0f;
  for (uint k = row_start[r]; k < end; ++k) sum += values[k] * x[columns[k]];
  y[r] = sum;
}
)CLC";
}

CsrMatrix spmv_matrix(unsigned rows) {
  CsrMatrix a;
  a.rows = rows;
  a.row_start.resize(size_t{rows} + 1);
  a.columns.reserve(size_t{rows} * 24);
  a.values.reserve(size_t{rows} * 24);
  Random random(31);
  for (unsigned r = 0; r < rows; ++r) {
    a.row_start[r] = static_cast<uint32_t>(a.columns.size());
    const unsigned count = 16 + random.below(17);
    // One random column in each of `count` equal slices of the row: sorted, as CSR matrices
    // store them, without sorting millions of rows.
    const uint32_t slice = rows / count;
    for (unsigned k = 0; k < count; ++k) {
      a.columns.push_back(static_cast<uint32_t>(uint64_t{k} * rows / count) + random.below(slice));
      a.values.push_back(random.uniform(-1.0f, 1.0f));
    }
  }
  a.row_start[rows] = static_cast<uint32_t>(a.columns.size());
  return a;
}

std::vector<float> spmv_vector(unsigned rows) {
  std::vector<float> x(rows);
  Random random(41);
  for (float& v : x) v = random.uniform(-1.0f, 1.0f);
  return x;
}

double spmv_reference(const CsrMatrix& a, const std::vector<float>& x, unsigned r,
                      double* magnitude) {
  double sum = 0, size = 0;
  for (uint32_t k = a.row_start[r]; k < a.row_start[r + 1]; ++k) {
    const double term = double{a.values[k]} * x[a.columns[k]];
    sum += term;
    size += std::fabs(term);
  }
  *magnitude = size;
  return sum;
}

// ---- 2D convolution ----

unsigned conv_side(bool gpu, bool quick) { return (gpu ? 4096u : 1024u) / (quick ? 2 : 1); }

const char* conv_source() {
  return R"CLC(
kernel void conv2d_float4(global float4* out, global const float4* in, constant float* filter,
                          int width, int height) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  float4 sum = (float4)(0.0f);
  for (int dy = -2; dy <= 2; ++dy) {
    const size_t row = (size_t)clamp(y + dy, 0, height - 1) * width;
    for (int dx = -2; dx <= 2; ++dx)
      sum += filter[(dy + 2) * 5 + dx + 2] * in[row + clamp(x + dx, 0, width - 1)];
  }
  out[(size_t)y * width + x] = sum;
}
)CLC";
}

std::vector<float> conv_filter() {
  // Neither symmetric nor separable: a filter applied transposed or mirrored gives other pixels.
  std::vector<float> filter(kConvTaps);
  for (int t = 0; t < kConvTaps; ++t) filter[t] = static_cast<float>(1 + (t * 7) % 11) / 100.0f;
  return filter;
}

std::vector<float> conv_input(size_t pixels) {
  std::vector<float> image(pixels * 4);
  Random random(51);
  for (float& v : image) v = random.uniform(0.0f, 1.0f);
  return image;
}

double conv_reference(const std::vector<float>& image, const std::vector<float>& filter, int width,
                      int height, int x, int y, int channel, double* magnitude) {
  double sum = 0, size = 0;
  for (int dy = -kConvRadius; dy <= kConvRadius; ++dy)
    for (int dx = -kConvRadius; dx <= kConvRadius; ++dx) {
      const int yy = std::clamp(y + dy, 0, height - 1), xx = std::clamp(x + dx, 0, width - 1);
      const double term =
          double{filter[(dy + kConvRadius) * (2 * kConvRadius + 1) + dx + kConvRadius]} *
          image[(size_t(yy) * width + xx) * 4 + channel];
      sum += term;
      size += std::fabs(term);
    }
  *magnitude = size;
  return sum;
}

// ---- FFT ----

size_t fft_points(bool gpu, bool quick) { return (size_t{1} << (gpu ? 24 : 20)) / (quick ? 4 : 1); }

unsigned fft_transforms(bool gpu) { return gpu ? 10 : 3; }

const char* fft_source() {
  return R"CLC(
float2 complex_mul(float2 a, float2 b) {
  return (float2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

float2 twiddled(float2 v, float angle) {
  float c;
  const float s = sincos(angle, &c);
  return complex_mul(v, (float2)(c, s));
}

// Stage p of a Stockham FFT: the butterfly of element k of sub-transforms of size p, outputs in
// sub-transforms of size 4p.
kernel void fft_radix4(global const float2* in, global float2* out, uint p) {
  const uint i = get_global_id(0), t = get_global_size(0);
  const uint k = i & (p - 1);
  const float angle = -1.57079632679489662f * (float)k / (float)p;
  const float2 u0 = in[i];
  const float2 u1 = twiddled(in[i + t], angle);
  const float2 u2 = twiddled(in[i + 2 * t], 2.0f * angle);
  const float2 u3 = twiddled(in[i + 3 * t], 3.0f * angle);
  const float2 v0 = u0 + u2, v1 = u0 - u2, v2 = u1 + u3;
  const float2 d = u1 - u3, v3 = (float2)(d.y, -d.x);  // -i * (u1 - u3)
  const uint j = ((i - k) << 2) + k;
  out[j] = v0 + v2;
  out[j + p] = v1 + v3;
  out[j + 2 * p] = v0 - v2;
  out[j + 3 * p] = v1 - v3;
}
)CLC";
}

std::vector<float> fft_input(size_t points) {
  std::vector<float> data(points * 2);
  Random random(61);
  for (float& v : data) v = random.uniform(-1.0f, 1.0f);
  return data;
}

void dft_bin(const std::vector<float>& data, size_t k, double* re, double* im) {
  const size_t n = data.size() / 2;
  double sum_re = 0, sum_im = 0, w_re = 1, w_im = 0;
  const double step = -2.0 * kPi * static_cast<double>(k) / static_cast<double>(n);
  const double step_re = std::cos(step), step_im = std::sin(step);
  for (size_t m = 0; m < n; ++m) {
    // The rotation recomputed now and then, so that rounding does not pile up over 2^24 steps.
    if (m % 4096 == 0) {
      const double angle = -2.0 * kPi * static_cast<double>((m * k) % n) / static_cast<double>(n);
      w_re = std::cos(angle);
      w_im = std::sin(angle);
    }
    const double x_re = data[2 * m], x_im = data[2 * m + 1];
    sum_re += x_re * w_re - x_im * w_im;
    sum_im += x_re * w_im + x_im * w_re;
    const double next_re = w_re * step_re - w_im * step_im;
    w_im = w_re * step_im + w_im * step_re;
    w_re = next_re;
  }
  *re = sum_re;
  *im = sum_im;
}

bool fft_matches(const std::vector<float>& data, const std::vector<float>& got, size_t bins,
                 std::string* why) {
  const size_t n = data.size() / 2;
  double energy = 0;
  for (float v : data) energy += double{v} * v;
  // A float FFT's error grows with the signal's norm (and slowly with the stage count); an index
  // mistake moves whole bins, errors of the norm's order.
  const double tolerance = 2e-5 * std::sqrt(energy);
  const size_t count = std::min(bins, n);
  for (size_t b = 0; b < count; ++b) {
    const size_t k = count == n ? b : (b * (n / count) + b * 7919 + 1) % n;
    double re = 0, im = 0;
    dft_bin(data, k, &re, &im);
    const double error = std::hypot(re - got[2 * k], im - got[2 * k + 1]);
    if (!(error <= tolerance)) {
      char text[160];
      std::snprintf(text, sizeof text, "bin %zu = (%.7g, %.7g), expected (%.7g, %.7g)", k,
                    got[2 * k], got[2 * k + 1], re, im);
      *why = text;
      return false;
    }
  }
  return true;
}

}  // namespace manifold_tool
