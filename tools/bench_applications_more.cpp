// Figures for more shapes of real applications (tools/bench_app_kernels_more.h): a histogram with
// local atomics, a CSR SpMV, a float4 image convolution and a radix-4 FFT, each checked against
// its C++ reference.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bench_app_kernels_more.h"
#include "bench_measurements.h"
#include "bench_metrics.h"

namespace manifold_tool {
namespace {

int timed_samples(bool quick) { return quick ? 3 : 5; }

// Runs the stages of an n-point FFT of `in` through the work buffers `a` and `b`; the buffer that
// holds the result.
cl_mem fft_run(const Device& device, cl_kernel kernel, cl_mem in, cl_mem a, cl_mem b, size_t n) {
  const size_t global = n / 4, local = std::min<size_t>(kFftGroup, global);
  cl_mem from = in, to = a;
  for (cl_uint p = 1; p < n; p *= 4) {
    set_arg(kernel, 0, from);
    set_arg(kernel, 1, to);
    set_arg(kernel, 2, p);
    run_ndrange(device, kernel, 1, &global, &local);
    from = to;
    to = to == a ? b : a;
  }
  return from;
}

// The forward FFT of `data` on the device, `transforms` times (a timed sample each) or once.
struct FftRun {
  Buffer in, a, b;
  size_t n;
  FftRun(const Device& device, const std::vector<float>& data) : n(data.size() / 2) {
    const size_t bytes = data.size() * sizeof(float);
    in = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                     const_cast<float*>(data.data()));
    a = make_buffer(device, CL_MEM_READ_WRITE, bytes);
    b = make_buffer(device, CL_MEM_READ_WRITE, bytes);
  }
  std::vector<float> result(const Device& device, cl_kernel kernel) {
    std::vector<float> out(2 * n);
    cl_mem where = fft_run(device, kernel, in, a, b, n);
    read_buffer(device, where, out.size() * sizeof(float), out.data());
    return out;
  }
};

}  // namespace

Outcome measure_histogram(const Device& device, bool quick) {
  const size_t n = histogram_elements(is_gpu(device), quick);
  std::vector<uint32_t> data = histogram_input(n);
  const std::vector<uint32_t> once = histogram_reference(data);
  Program program = build_with_options(device, histogram_source(), "");
  Kernel kernel = make_kernel(program, "histogram256");
  Buffer data_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                   n * sizeof(uint32_t), data.data());
  std::vector<uint32_t> bins(kHistogramBins, 0);
  Buffer bins_buffer = make_buffer(device, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   bins.size() * sizeof(uint32_t), bins.data());
  set_arg(kernel, 0, data_buffer.get());
  set_arg(kernel, 1, bins_buffer.get());
  set_arg(kernel, 2, static_cast<cl_uint>(n));
  const size_t local = kHistogramGroup, global = n / kHistogramPerItem;
  uint32_t launches = 0;
  const double seconds = timed_median(device, timed_samples(quick), [&] {
    for (unsigned r = 0; r < kHistogramLaunches; ++r)
      run_ndrange(device, kernel, 1, &global, &local);
    launches += kHistogramLaunches;
  });
  read_buffer(device, bins_buffer, bins.size() * sizeof(uint32_t), bins.data());
  // Every launch added the same counts (modulo 2^32, as the device's atomics wrap).
  for (unsigned b = 0; b < kHistogramBins; ++b) {
    const uint32_t expected = launches * once[b];
    if (bins[b] != expected) return {0, mismatch("bins", b, expected, bins[b])};
  }
  return {static_cast<double>(n) * sizeof(uint32_t) * kHistogramLaunches / seconds / 1e9, {}};
}

Outcome measure_spmv(const Device& device, bool quick) {
  const unsigned rows = spmv_rows(is_gpu(device), quick);
  CsrMatrix a = spmv_matrix(rows);
  std::vector<float> x = spmv_vector(rows), y(rows);
  Program program = build_with_options(device, spmv_source(), "");
  Kernel kernel = make_kernel(program, "spmv_csr");
  const cl_mem_flags in = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
  Buffer starts =
      make_buffer(device, in, a.row_start.size() * sizeof(uint32_t), a.row_start.data());
  Buffer columns = make_buffer(device, in, a.columns.size() * sizeof(uint32_t), a.columns.data());
  Buffer values = make_buffer(device, in, a.values.size() * sizeof(float), a.values.data());
  Buffer x_buffer = make_buffer(device, in, x.size() * sizeof(float), x.data());
  Buffer y_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, y.size() * sizeof(float));
  set_arg(kernel, 0, starts.get());
  set_arg(kernel, 1, columns.get());
  set_arg(kernel, 2, values.get());
  set_arg(kernel, 3, x_buffer.get());
  set_arg(kernel, 4, y_buffer.get());
  set_arg(kernel, 5, static_cast<cl_uint>(rows));
  const size_t local = kSpmvGroup, global = (rows + local - 1) / local * local;
  const double seconds = timed_median(device, timed_samples(quick), [&] {
    for (unsigned r = 0; r < kSpmvLaunches; ++r) run_ndrange(device, kernel, 1, &global, &local);
  });
  read_buffer(device, y_buffer, y.size() * sizeof(float), y.data());
  for (unsigned r = 0; r < rows; ++r) {
    double magnitude = 0;
    const double expected = spmv_reference(a, x, r, &magnitude);
    if (!(std::fabs(expected - y[r]) <= 1e-5 * std::max(1.0, magnitude)))
      return {0, mismatch("y", r, expected, y[r])};
  }
  return {2.0 * static_cast<double>(a.nonzeros()) * kSpmvLaunches / seconds / 1e9, {}};
}

Outcome measure_conv2d(const Device& device, bool quick) {
  const unsigned side = conv_side(is_gpu(device), quick);
  const size_t pixels = size_t{side} * side, bytes = pixels * 4 * sizeof(float);
  std::vector<float> image = conv_input(pixels), filter = conv_filter(), out(pixels * 4);
  Program program = build_with_options(device, conv_source(), "");
  Kernel kernel = make_kernel(program, "conv2d_float4");
  Buffer in_buffer =
      make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, image.data());
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, bytes);
  Buffer filter_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                     filter.size() * sizeof(float), filter.data());
  const cl_int width = static_cast<cl_int>(side), height = static_cast<cl_int>(side);
  set_arg(kernel, 0, out_buffer.get());
  set_arg(kernel, 1, in_buffer.get());
  set_arg(kernel, 2, filter_buffer.get());
  set_arg(kernel, 3, width);
  set_arg(kernel, 4, height);
  const size_t global[2] = {side, side}, local[2] = {kConvGroup, kConvGroup};
  const double seconds = timed_median(device, timed_samples(quick), [&] {
    for (unsigned r = 0; r < kConvLaunches; ++r) run_ndrange(device, kernel, 2, global, local);
  });
  read_buffer(device, out_buffer, bytes, out.data());
  for (int y = 0; y < height; ++y) {
    if (!conv_checked_row(y, height)) continue;
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 4; ++c) {
        double magnitude = 0;
        const double expected = conv_reference(image, filter, width, height, x, y, c, &magnitude);
        const size_t i = (size_t(y) * width + x) * 4 + c;
        if (!(std::fabs(expected - out[i]) <= 1e-5 * std::max(1.0, magnitude)))
          return {0, mismatch("out", i, expected, out[i])};
      }
  }
  return {static_cast<double>(pixels) * kConvLaunches / seconds / 1e9, {}};
}

Outcome measure_fft(const Device& device, bool quick) {
  Program program = build_with_options(device, fft_source(), "");
  Kernel kernel = make_kernel(program, "fft_radix4");
  std::string why;
  // First a small transform, every bin against the direct DFT.
  {
    const std::vector<float> data = fft_input(kFftCheckPoints);
    FftRun run(device, data);
    if (!fft_matches(data, run.result(device, kernel), kFftCheckPoints, &why)) return {0, why};
  }
  const bool gpu = is_gpu(device);
  const size_t n = fft_points(gpu, quick);
  const unsigned transforms = fft_transforms(gpu);
  const std::vector<float> data = fft_input(n);
  FftRun run(device, data);
  const double seconds = timed_median(device, timed_samples(quick), [&] {
    for (unsigned r = 0; r < transforms; ++r) fft_run(device, kernel, run.in, run.a, run.b, n);
  });
  if (!fft_matches(data, run.result(device, kernel), 8, &why)) return {0, why};
  const double flops = 5.0 * static_cast<double>(n) * std::log2(static_cast<double>(n));
  return {flops * transforms / seconds / 1e9, {}};
}

}  // namespace manifold_tool
