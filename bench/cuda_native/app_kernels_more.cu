// The native CUDA twins of `manifold bench`'s further application-shaped kernels
// (tools/bench_app_kernels_more.h): a histogram with shared-memory atomics, a CSR SpMV, a float4
// 5x5 convolution with the filter in constant memory and a radix-4 Stockham FFT; the same
// algorithms, GPU sizes, checks and figures as the OpenCL worker's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "app_common.cuh"
#include "bench_app_kernels_more.h"

namespace {

namespace mt = manifold_tool;

int timed_samples(bool quick) { return quick ? 3 : 5; }

// A device copy of a host vector, freed with the object.
template <class T>
struct DeviceArray {
  T* data = nullptr;
  size_t count = 0;
  explicit DeviceArray(size_t n) : count(n) { ok(cudaMalloc(&data, n * sizeof(T)), "cudaMalloc"); }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) {
    cudaMemcpy(data, host.data(), count * sizeof(T), cudaMemcpyHostToDevice);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(data); }
  std::vector<T> read() const {
    std::vector<T> host(count);
    cudaMemcpy(host.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost);
    return host;
  }
};

// ---- Histogram ----

__global__ void histogram256(const unsigned* data, unsigned* bins, unsigned n) {
  __shared__ unsigned counts[256];
  for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) counts[b] = 0;
  __syncthreads();
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(&counts[data[i] & 255u], 1u);
  __syncthreads();
  for (unsigned b = threadIdx.x; b < 256; b += blockDim.x)
    if (counts[b] != 0) atomicAdd(&bins[b], counts[b]);
}

void measure_histogram(bool quick) {
  const char* metric = "histogram_local_gbs";
  const size_t n = mt::histogram_elements(true, quick);
  const std::vector<uint32_t> data = mt::histogram_input(n);
  const std::vector<uint32_t> once = mt::histogram_reference(data);
  DeviceArray<uint32_t> d_data(data), d_bins(std::vector<uint32_t>(mt::kHistogramBins, 0));
  const unsigned blocks = static_cast<unsigned>(n / mt::kHistogramPerItem / mt::kHistogramGroup);
  uint32_t launches = 0;
  const double seconds = median_time(timed_samples(quick), [&] {
    for (unsigned r = 0; r < mt::kHistogramLaunches; ++r)
      histogram256<<<blocks, mt::kHistogramGroup>>>(d_data.data, d_bins.data,
                                                    static_cast<unsigned>(n));
    launches += mt::kHistogramLaunches;
  });
  if (!ok(cudaDeviceSynchronize(), "histogram256"))
    return emit_failure(metric, "GB/s", "launch failed");
  const std::vector<uint32_t> bins = d_bins.read();
  for (unsigned b = 0; b < mt::kHistogramBins; ++b)
    if (bins[b] != launches * once[b]) return emit_failure(metric, "GB/s", "wrong counts");
  emit(metric, double(n) * sizeof(uint32_t) * mt::kHistogramLaunches / seconds / 1e9, "GB/s");
}

// ---- SpMV ----

__global__ void spmv_csr(const unsigned* row_start, const unsigned* columns, const float* values,
                         const float* x, float* y, unsigned rows) {
  const unsigned r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const unsigned end = row_start[r + 1];
  float sum = 0.0f;
  for (unsigned k = row_start[r]; k < end; ++k) sum += values[k] * x[columns[k]];
  y[r] = sum;
}

void measure_spmv(bool quick) {
  const char* metric = "spmv_csr_gflops";
  const unsigned rows = mt::spmv_rows(true, quick);
  const mt::CsrMatrix a = mt::spmv_matrix(rows);
  const std::vector<float> x = mt::spmv_vector(rows);
  DeviceArray<uint32_t> d_starts(a.row_start), d_columns(a.columns);
  DeviceArray<float> d_values(a.values), d_x(x), d_y(rows);
  const unsigned blocks = (rows + mt::kSpmvGroup - 1) / mt::kSpmvGroup;
  const double seconds = median_time(timed_samples(quick), [&] {
    for (unsigned r = 0; r < mt::kSpmvLaunches; ++r)
      spmv_csr<<<blocks, mt::kSpmvGroup>>>(d_starts.data, d_columns.data, d_values.data, d_x.data,
                                           d_y.data, rows);
  });
  if (!ok(cudaDeviceSynchronize(), "spmv_csr"))
    return emit_failure(metric, "GFLOP/s", "launch failed");
  const std::vector<float> y = d_y.read();
  for (unsigned r = 0; r < rows; ++r) {
    double magnitude = 0;
    const double expected = mt::spmv_reference(a, x, r, &magnitude);
    if (!(std::fabs(expected - y[r]) <= 1e-5 * std::max(1.0, magnitude)))
      return emit_failure(metric, "GFLOP/s", "wrong result");
  }
  emit(metric, 2.0 * double(a.nonzeros()) * mt::kSpmvLaunches / seconds / 1e9, "GFLOP/s");
}

// ---- 2D convolution ----

__constant__ float conv_weights[mt::kConvTaps];

__global__ void conv2d_float4(float4* out, const float4* in, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (int dy = -2; dy <= 2; ++dy) {
    const size_t row = (size_t)min(max(y + dy, 0), height - 1) * width;
    for (int dx = -2; dx <= 2; ++dx) {
      const float w = conv_weights[(dy + 2) * 5 + dx + 2];
      const float4 p = in[row + min(max(x + dx, 0), width - 1)];
      sum.x += w * p.x;
      sum.y += w * p.y;
      sum.z += w * p.z;
      sum.w += w * p.w;
    }
  }
  out[(size_t)y * width + x] = sum;
}

void measure_conv2d(bool quick) {
  const char* metric = "conv2d_float4_gpixels";
  const int side = static_cast<int>(mt::conv_side(true, quick));
  const size_t pixels = size_t(side) * side;
  const std::vector<float> image = mt::conv_input(pixels), filter = mt::conv_filter();
  cudaMemcpyToSymbol(conv_weights, filter.data(), filter.size() * sizeof(float));
  DeviceArray<float> d_in(image), d_out(pixels * 4);
  const dim3 block(mt::kConvGroup, mt::kConvGroup),
      grid((side + mt::kConvGroup - 1) / mt::kConvGroup,
           (side + mt::kConvGroup - 1) / mt::kConvGroup);
  const double seconds = median_time(timed_samples(quick), [&] {
    for (unsigned r = 0; r < mt::kConvLaunches; ++r)
      conv2d_float4<<<grid, block>>>(reinterpret_cast<float4*>(d_out.data),
                                     reinterpret_cast<const float4*>(d_in.data), side, side);
  });
  if (!ok(cudaDeviceSynchronize(), "conv2d_float4"))
    return emit_failure(metric, "Gpixel/s", "launch failed");
  const std::vector<float> out = d_out.read();
  for (int y = 0; y < side; ++y) {
    if (!mt::conv_checked_row(y, side)) continue;
    for (int x = 0; x < side; ++x)
      for (int c = 0; c < 4; ++c) {
        double magnitude = 0;
        const double expected = mt::conv_reference(image, filter, side, side, x, y, c, &magnitude);
        const float got = out[(size_t(y) * side + x) * 4 + c];
        if (!(std::fabs(expected - got) <= 1e-5 * std::max(1.0, magnitude)))
          return emit_failure(metric, "Gpixel/s", "wrong result");
      }
  }
  emit(metric, double(pixels) * mt::kConvLaunches / seconds / 1e9, "Gpixel/s");
}

// ---- FFT ----

__device__ float2 twiddled(float2 v, float angle) {
  float s, c;
  sincosf(angle, &s, &c);
  return make_float2(v.x * c - v.y * s, v.x * s + v.y * c);
}

__global__ void fft_radix4(const float2* in, float2* out, unsigned p) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x, t = gridDim.x * blockDim.x;
  const unsigned k = i & (p - 1);
  const float angle = -1.57079632679489662f * (float)k / (float)p;
  const float2 u0 = in[i];
  const float2 u1 = twiddled(in[i + t], angle);
  const float2 u2 = twiddled(in[i + 2 * t], 2.0f * angle);
  const float2 u3 = twiddled(in[i + 3 * t], 3.0f * angle);
  const float2 v0 = make_float2(u0.x + u2.x, u0.y + u2.y),
               v1 = make_float2(u0.x - u2.x, u0.y - u2.y);
  const float2 v2 = make_float2(u1.x + u3.x, u1.y + u3.y);
  const float2 v3 = make_float2(u1.y - u3.y, u3.x - u1.x);  // -i * (u1 - u3)
  const unsigned j = ((i - k) << 2) + k;
  out[j] = make_float2(v0.x + v2.x, v0.y + v2.y);
  out[j + p] = make_float2(v1.x + v3.x, v1.y + v3.y);
  out[j + 2 * p] = make_float2(v0.x - v2.x, v0.y - v2.y);
  out[j + 3 * p] = make_float2(v1.x - v3.x, v1.y - v3.y);
}

// The stages of an n-point FFT of `in` through `a` and `b`; the array that holds the result.
float2* fft_run(const float2* in, float2* a, float2* b, size_t n) {
  const unsigned threads = static_cast<unsigned>(n / 4);
  const unsigned block = std::min(mt::kFftGroup, threads);
  const float2* from = in;
  float2* to = a;
  for (unsigned p = 1; p < n; p *= 4) {
    fft_radix4<<<threads / block, block>>>(from, to, p);
    from = to;
    to = to == a ? b : a;
  }
  return const_cast<float2*>(from);
}

struct FftRun {
  DeviceArray<float> in, a, b;
  size_t n;
  explicit FftRun(const std::vector<float>& data)
      : in(data), a(data.size()), b(data.size()), n(data.size() / 2) {}
  float2* run() {
    return fft_run(reinterpret_cast<const float2*>(in.data), reinterpret_cast<float2*>(a.data),
                   reinterpret_cast<float2*>(b.data), n);
  }
  std::vector<float> result() {
    std::vector<float> out(2 * n);
    cudaMemcpy(out.data(), run(), out.size() * sizeof(float), cudaMemcpyDeviceToHost);
    return out;
  }
};

void measure_fft(bool quick) {
  const char* metric = "fft_radix4_gflops";
  std::string why;
  {
    const std::vector<float> data = mt::fft_input(mt::kFftCheckPoints);
    FftRun check(data);
    if (!mt::fft_matches(data, check.result(), mt::kFftCheckPoints, &why))
      return emit_failure(metric, "GFLOP/s", why.c_str());
  }
  const size_t n = mt::fft_points(true, quick);
  const unsigned transforms = mt::fft_transforms(true);
  const std::vector<float> data = mt::fft_input(n);
  FftRun run(data);
  const double seconds = median_time(timed_samples(quick), [&] {
    for (unsigned r = 0; r < transforms; ++r) run.run();
  });
  if (!ok(cudaDeviceSynchronize(), "fft_radix4"))
    return emit_failure(metric, "GFLOP/s", "launch failed");
  if (!mt::fft_matches(data, run.result(), 8, &why))
    return emit_failure(metric, "GFLOP/s", why.c_str());
  emit(metric, 5.0 * double(n) * std::log2(double(n)) * transforms / seconds / 1e9, "GFLOP/s");
}

}  // namespace

// Called by app_kernels.cu's run_app_kernels.
void run_more_app_kernels(bool quick) {
  measure_histogram(quick);
  measure_spmv(quick);
  measure_conv2d(quick);
  measure_fft(quick);
}
