// The native CUDA peer of `manifold bench` (bench/README.md): the same kernels and sizes as the
// OpenCL worker (tools/bench_worker.cpp), written in CUDA C++ with the runtime API, printing
//   metric<TAB>value<TAB>unit
// lines. Usage: manifold-cuda-native [--quick]. Build: bench/cuda_native/CMakeLists.txt (nvcc),
// or by hand: nvcc -O3 -arch=sm_90 -Itools -o manifold-cuda-native cuda_native.cu app_kernels.cu
// app_kernels_more.cu tools/bench_app_kernels.cpp tools/bench_app_kernels_more.cpp
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

void run_app_kernels(bool quick);  // app_kernels.cu

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

__global__ void empty(float*) {}

__global__ void triad(float4* a, const float4* b, const float4* c, float s) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  float4 x = b[i], y = c[i];
  a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
}

__global__ void reduce(const float* in, float* partial) {
  extern __shared__ float scratch[];
  unsigned lid = threadIdx.x;
  scratch[lid] = in[blockIdx.x * size_t(blockDim.x) + lid];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (lid < stride) scratch[lid] += scratch[lid + stride];
    __syncthreads();
  }
  if (lid == 0) partial[blockIdx.x] = scratch[0];
}

__global__ void sgemm_naive(int n, const float* a, const float* b, float* c) {
  int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  float sum = 0.0f;
  for (int k = 0; k < n; ++k) sum += a[row * n + k] * b[k * n + col];
  c[row * n + col] = sum;
}

#define TILE 16
__global__ void sgemm_tiled(int n, const float* a, const float* b, float* c) {
  __shared__ float a_tile[TILE][TILE];
  __shared__ float b_tile[TILE][TILE];
  int lx = threadIdx.x, ly = threadIdx.y;
  int col = blockIdx.x * TILE + lx, row = blockIdx.y * TILE + ly;
  float sum = 0.0f;
  for (int t = 0; t < n; t += TILE) {
    a_tile[ly][lx] = a[row * n + t + lx];
    b_tile[ly][lx] = b[(t + ly) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) sum += a_tile[ly][k] * b_tile[k][lx];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

__global__ void nbody(int n, float softening, const float4* pos, float4* accel) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 p = pos[i];
  float ax = 0, ay = 0, az = 0;
  for (int j = 0; j < n; ++j) {
    float4 q = pos[j];
    float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
    float inv = rsqrtf(dx * dx + dy * dy + dz * dz + softening);
    float s = q.w * inv * inv * inv;
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
  }
  accel[i] = make_float4(ax, ay, az, 0.0f);
}

void emit(const char* metric, double value, const char* unit) {
  std::printf("%s\t%.4g\t%s\n", metric, value, unit);
  std::fflush(stdout);
}

template <class F>
double timed_median(int repeats, F&& run) {
  run();
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    auto start = Clock::now();
    run();
    check(cudaDeviceSynchronize(), "run");
    t.push_back(seconds_since(start));
  }
  return median(t);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  // The same sizes as tools/bench_metrics.h's bench_sizes().
  const int roundtrips = quick ? 300 : 2000, kernels = quick ? 5000 : 20000;
  const size_t bytes = size_t{64} << 20;
  const int repeats = quick ? 4 : 10, sgemm_n = quick ? 512 : 1024, sgemm_repeats = quick ? 2 : 3;
  const int bodies = quick ? 4096 : 8192, nbody_repeats = quick ? 2 : 3;

  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int driver = 0;
  cudaDriverGetVersion(&driver);
  std::printf("#device\t%s\n#driver\tCUDA %d.%d\n", prop.name, driver / 1000, driver % 1000 / 10);
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  float* unused;
  check(cudaMalloc(&unused, 64), "cudaMalloc");

  {  // Empty-kernel round trip: launch + synchronize.
    for (int i = 0; i < 20; ++i) {
      empty<<<1, 1, 0, stream>>>(unused);
      cudaStreamSynchronize(stream);
    }
    std::vector<double> t;
    for (int i = 0; i < roundtrips; ++i) {
      auto start = Clock::now();
      empty<<<1, 1, 0, stream>>>(unused);
      check(cudaStreamSynchronize(stream), "sync");
      t.push_back(seconds_since(start));
    }
    emit("roundtrip_us", median(t) * 1e6, "us");
  }
  {  // Enqueue throughput: the median of 5 runs, as tools/bench_worker.cpp measures it.
    std::vector<double> t;
    for (int run = 0; run < 5; ++run) {
      auto start = Clock::now();
      for (int i = 0; i < kernels; ++i) empty<<<1, 1, 0, stream>>>(unused);
      check(cudaStreamSynchronize(stream), "sync");
      t.push_back(seconds_since(start) * 1e6 / kernels);
    }
    emit("enqueue_us", median(t), "us/kernel");
  }
  {  // Command-buffer replay: one graph of 100 kernel nodes, launched until as many kernels ran.
    const int recorded = 100, replays = kernels / recorded > 0 ? kernels / recorded : 1;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
    for (int i = 0; i < recorded; ++i) empty<<<1, 1, 0, stream>>>(unused);
    check(cudaStreamEndCapture(stream, &graph), "end capture");
    check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    for (int i = 0; i < 3; ++i) cudaGraphLaunch(exec, stream);
    check(cudaStreamSynchronize(stream), "sync");
    std::vector<double> t;
    for (int run = 0; run < 5; ++run) {
      auto start = Clock::now();
      for (int i = 0; i < replays; ++i) cudaGraphLaunch(exec, stream);
      check(cudaStreamSynchronize(stream), "sync");
      t.push_back(seconds_since(start) * 1e6 / (double(replays) * recorded));
    }
    emit("cmdbuf_replay_us", median(t), "us/kernel");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  {  // Triad.
    const size_t count = bytes / sizeof(float4);
    std::vector<float> hb(bytes / 4), hc(bytes / 4);
    for (size_t i = 0; i < hb.size(); ++i) {
      hb[i] = float(i % 1000) * 0.5f;
      hc[i] = float(i % 7) + 0.25f;
    }
    float4 *a, *b, *c;
    check(cudaMalloc(&a, bytes), "malloc");
    check(cudaMalloc(&b, bytes), "malloc");
    check(cudaMalloc(&c, bytes), "malloc");
    cudaMemcpy(b, hb.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(c, hc.data(), bytes, cudaMemcpyHostToDevice);
    const unsigned block = 256;
    double s = timed_median(repeats, [&] { triad<<<count / block, block, 0, stream>>>(a, b, c, 3.0f); });
    emit("triad_gbs", 3.0 * bytes / s / 1e9, "GB/s");
    cudaFree(a), cudaFree(b), cudaFree(c);
  }
  {  // Reduction.
    const size_t count = bytes / sizeof(float), group = 256;
    std::vector<float> input(count);
    for (size_t i = 0; i < count; ++i) input[i] = float(i % 17) * 0.25f;
    float *in, *partial;
    check(cudaMalloc(&in, bytes), "malloc");
    check(cudaMalloc(&partial, count / group * sizeof(float)), "malloc");
    cudaMemcpy(in, input.data(), bytes, cudaMemcpyHostToDevice);
    double s = timed_median(repeats, [&] {
      reduce<<<count / group, group, group * sizeof(float), stream>>>(in, partial);
    });
    emit("reduce_gbs", double(bytes) / s / 1e9, "GB/s");
    cudaFree(in), cudaFree(partial);
  }
  for (int tiled = 0; tiled < 2; ++tiled) {  // sgemm
    const int n = sgemm_n;
    const size_t elements = size_t(n) * n;
    std::mt19937 random(42);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> ha(elements), hb(elements);
    for (auto& x : ha) x = uniform(random);
    for (auto& x : hb) x = uniform(random);
    float *a, *b, *c;
    check(cudaMalloc(&a, elements * 4), "malloc");
    check(cudaMalloc(&b, elements * 4), "malloc");
    check(cudaMalloc(&c, elements * 4), "malloc");
    cudaMemcpy(a, ha.data(), elements * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb.data(), elements * 4, cudaMemcpyHostToDevice);
    dim3 block(16, 16), grid(n / 16, n / 16);
    double s = timed_median(sgemm_repeats, [&] {
      if (tiled)
        sgemm_tiled<<<grid, block, 0, stream>>>(n, a, b, c);
      else
        sgemm_naive<<<grid, block, 0, stream>>>(n, a, b, c);
    });
    emit(tiled ? "sgemm_tiled_gflops" : "sgemm_naive_gflops", 2.0 * n * double(n) * n / s / 1e9, "GFLOP/s");
    cudaFree(a), cudaFree(b), cudaFree(c);
  }
  {  // n-body
    const int n = bodies;
    std::vector<float4> pos(n);
    std::mt19937 random(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (auto& p : pos) p = make_float4(uniform(random), uniform(random), uniform(random), 1.0f);
    float4 *dp, *da;
    check(cudaMalloc(&dp, n * sizeof(float4)), "malloc");
    check(cudaMalloc(&da, n * sizeof(float4)), "malloc");
    cudaMemcpy(dp, pos.data(), n * sizeof(float4), cudaMemcpyHostToDevice);
    double s = timed_median(nbody_repeats, [&] { nbody<<<n / 256, 256, 0, stream>>>(n, 0.01f, dp, da); });
    emit("nbody_gflops", 20.0 * n * double(n) / s / 1e9, "GFLOP/s");
    cudaFree(dp), cudaFree(da);
  }
  run_app_kernels(quick);
  {  // Transfers: pageable (malloc) and pinned (cudaMallocHost).
    unsigned char* device;
    check(cudaMalloc(&device, bytes), "malloc");
    std::vector<unsigned char> pageable_src(bytes, 1), pageable_dst(bytes);
    unsigned char *pinned_src, *pinned_dst;
    check(cudaMallocHost(&pinned_src, bytes), "cudaMallocHost");
    check(cudaMallocHost(&pinned_dst, bytes), "cudaMallocHost");
    std::memset(pinned_src, 1, bytes);
    auto rate = [&](auto&& copy) { return double(bytes) / timed_median(repeats, copy) / 1e9; };
    emit("h2d_pageable_gbs", rate([&] { cudaMemcpy(device, pageable_src.data(), bytes, cudaMemcpyHostToDevice); }), "GB/s");
    emit("d2h_pageable_gbs", rate([&] { cudaMemcpy(pageable_dst.data(), device, bytes, cudaMemcpyDeviceToHost); }), "GB/s");
    emit("h2d_pinned_gbs", rate([&] { cudaMemcpy(device, pinned_src, bytes, cudaMemcpyHostToDevice); }), "GB/s");
    emit("d2h_pinned_gbs", rate([&] { cudaMemcpy(pinned_dst, device, bytes, cudaMemcpyDeviceToHost); }), "GB/s");
  }
  return 0;
}
