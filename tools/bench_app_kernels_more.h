// More kernels of the shapes real applications run, for `manifold bench`: a 256-bin histogram
// with local atomics, a CSR sparse matrix-vector product, a 5x5 convolution of a float4 image
// and a radix-4 Stockham FFT. Their OpenCL C sources, problem sizes, inputs and plain C++
// references; bench/cuda_native/app_kernels_more.cu has the CUDA twins.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace manifold_tool {

// ---- Histogram, 256 bins ----
// kernel histogram256(global const uint* data, global uint* bins, uint n): work-groups of 256
// count into a local histogram with atomic_inc, then atomic_add it to the global one; each
// work-item takes kHistogramPerItem elements at a stride of the global size. The bin of a value
// is its low byte. Launches accumulate into `bins` (unsigned, wrapping).
inline constexpr unsigned kHistogramBins = 256, kHistogramGroup = 256, kHistogramPerItem = 64;
inline constexpr unsigned kHistogramLaunches = 20;  // per timed sample
// 64M elements on GPUs, 4M elsewhere (--quick: a quarter); a multiple of the work per group.
size_t histogram_elements(bool gpu, bool quick);
const char* histogram_source();
// Values whose low bytes follow a triangular distribution, as pixel values crowd the middle.
std::vector<uint32_t> histogram_input(size_t n);
std::vector<uint32_t> histogram_reference(const std::vector<uint32_t>& data);

// ---- Sparse matrix-vector product, CSR, one row per work-item ----
// kernel spmv_csr(global const uint* row_start, global const uint* columns,
//                 global const float* values, global const float* x, global float* y, uint rows)
// A square matrix with 16 to 32 non-zeros per row, one at a random column of each of as many
// equal slices of the row (fixed seed).
inline constexpr unsigned kSpmvGroup = 128, kSpmvLaunches = 10;
struct CsrMatrix {
  unsigned rows = 0;
  std::vector<uint32_t> row_start, columns;  // rows + 1, non-zeros
  std::vector<float> values;
  size_t nonzeros() const { return values.size(); }
};
// 4M rows on GPUs, 256K elsewhere (--quick: a quarter).
unsigned spmv_rows(bool gpu, bool quick);
const char* spmv_source();
CsrMatrix spmv_matrix(unsigned rows);
std::vector<float> spmv_vector(unsigned rows);
// Row `r` of A * x, in double; `magnitude` gets the sum of the terms' absolute values.
double spmv_reference(const CsrMatrix& a, const std::vector<float>& x, unsigned r,
                      double* magnitude);

// ---- 2D convolution, float4 pixels, 5x5 filter in constant memory, clamped borders ----
// kernel conv2d_float4(global float4* out, global const float4* in, constant float* filter,
//                      int width, int height), a 2D NDRange in work-groups of 16 x 16.
inline constexpr int kConvRadius = 2, kConvTaps = (2 * kConvRadius + 1) * (2 * kConvRadius + 1);
inline constexpr unsigned kConvGroup = 16, kConvLaunches = 10;
// The side of the square image: 4096 on GPUs, 1024 elsewhere (--quick: half).
unsigned conv_side(bool gpu, bool quick);
const char* conv_source();
std::vector<float> conv_filter();
// `pixels` * 4 floats, pixel-major.
std::vector<float> conv_input(size_t pixels);
// One channel of output pixel (x, y), in double; `magnitude` as spmv_reference's.
double conv_reference(const std::vector<float>& image, const std::vector<float>& filter, int width,
                      int height, int x, int y, int channel, double* magnitude);
// The rows compared with the reference: the borders' and every 17th.
inline bool conv_checked_row(int y, int height) {
  return y < kConvRadius + 1 || y >= height - kConvRadius - 1 || y % 17 == 0;
}

// ---- FFT, radix-4 Stockham stages ----
// kernel fft_radix4(global const float2* in, global float2* out, uint p), N / 4 work-items in
// groups of 64: for p = 1, 4, 16, ..., N / 4, one butterfly per work-item with twiddles from
// sincos. A forward FFT of N = 4^stages points, out of place: the first stage reads the input
// buffer, the others alternate between two work buffers, so every run transforms the same data.
inline constexpr unsigned kFftGroup = 64;
// 2^24 points on GPUs, 2^20 elsewhere (--quick: a quarter); a power of 4.
size_t fft_points(bool gpu, bool quick);
inline constexpr size_t kFftCheckPoints = 1024;  // compared bin by bin with a direct DFT
unsigned fft_transforms(bool gpu);               // per timed sample
const char* fft_source();
// `points` complex values (re, im pairs).
std::vector<float> fft_input(size_t points);
// Bin `k` of the forward DFT of `data`, in double (re, im).
void dft_bin(const std::vector<float>& data, size_t k, double* re, double* im);
// Whether `got` (a transform of `data`) matches the direct DFT at `bins` bins spread over the
// spectrum (every bin when bins >= the size); the first wrong one in `why`.
bool fft_matches(const std::vector<float>& data, const std::vector<float>& got, size_t bins,
                 std::string* why);

}  // namespace manifold_tool
