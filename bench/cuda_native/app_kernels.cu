// The native CUDA twins of `manifold bench`'s application-shaped kernels
// (tools/bench_app_kernels.h): the same algorithms, sizes, checks and figures. The division of
// the LBM kernel is PTX's div.full.f32, the accuracy OpenCL C's x / y allows (nvcc's default
// is the correctly rounded one); nvcc contracts a * b + c by default, as -cl-mad-enable does.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "app_common.cuh"
#include "bench_app_kernels.h"

namespace {

using manifold_tool::Box;

template <unsigned NX, unsigned NY, unsigned NZ>
__device__ unsigned long long cell_at(unsigned long long x, unsigned long long y,
                                      unsigned long long z) {
  return x + (y + z * NY) * NX;
}

__device__ float divide(float x, float y) {
  float r;
  asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
  return r;
}

template <unsigned NX, unsigned NY, unsigned NZ>
__global__ void lbm_d3q19(float* f, const unsigned char* flags, unsigned long long t) {
  constexpr unsigned long long CELLS = (unsigned long long)NX * NY * NZ;
  // Known at compile time, as OpenCL's program-scope constant tables are (a __constant__
  // variable is the host's to change: nvcc would read it from the constant bank).
  constexpr int cx[19] = {0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0};
  constexpr int cy[19] = {0, 0, 0, 1, -1, 0, 0, 1, -1, 0, 0, 1, -1, -1, 1, 0, 0, 1, -1};
  constexpr int cz[19] = {0, 0, 0, 0, 0, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0, -1, 1, -1, 1};
  const unsigned long long n = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (n >= CELLS || (flags[n] & 1)) return;
  const unsigned long long x = n % NX, y = (n / NX) % NY, z = n / ((unsigned long long)NX * NY);
  const unsigned long long xp = x + 1 == NX ? 0 : x + 1, yp = y + 1 == NY ? 0 : y + 1;
  const unsigned long long zp = z + 1 == NZ ? 0 : z + 1, ym = y == 0 ? NY - 1 : y - 1;
  const unsigned long long zm = z == 0 ? NZ - 1 : z - 1;
  unsigned long long j[19];
  j[1] = cell_at<NX, NY, NZ>(xp, y, z);
  j[3] = cell_at<NX, NY, NZ>(x, yp, z);
  j[5] = cell_at<NX, NY, NZ>(x, y, zp);
  j[7] = cell_at<NX, NY, NZ>(xp, yp, z);
  j[9] = cell_at<NX, NY, NZ>(xp, y, zp);
  j[11] = cell_at<NX, NY, NZ>(x, yp, zp);
  j[13] = cell_at<NX, NY, NZ>(xp, ym, z);
  j[15] = cell_at<NX, NY, NZ>(xp, y, zm);
  j[17] = cell_at<NX, NY, NZ>(x, yp, zm);
  const bool odd = t & 1;
  float fh[19];
  fh[0] = f[n];
#pragma unroll
  for (unsigned i = 1; i < 19; i += 2) {
    fh[i] = f[(odd ? i + 1 : i) * CELLS + n];
    fh[i + 1] = f[(odd ? i : i + 1) * CELLS + j[i]];
  }
  float rho = 0.0f, ux = 0.0f, uy = 0.0f, uz = 0.0f;
#pragma unroll
  for (unsigned i = 0; i < 19; ++i) {
    rho += fh[i];
    ux += cx[i] * fh[i];
    uy += cy[i] * fh[i];
    uz += cz[i] * fh[i];
  }
  const float inverse = divide(1.0f, rho);
  ux *= inverse;
  uy *= inverse;
  uz *= inverse;
  const float usq = 1.5f * (ux * ux + uy * uy + uz * uz);
#pragma unroll
  for (unsigned i = 0; i < 19; ++i) {
    const float w = i == 0 ? 1.0f / 3.0f : i < 7 ? 1.0f / 18.0f : 1.0f / 36.0f;
    const float cu = cx[i] * ux + cy[i] * uy + cz[i] * uz;
    const float feq = w * rho * (1.0f + 3.0f * cu + 4.5f * cu * cu - usq);
    fh[i] += manifold_tool::kLbmOmega * (feq - fh[i]);
  }
  f[n] = fh[0];
#pragma unroll
  for (unsigned i = 1; i < 19; i += 2) {
    f[(odd ? i : i + 1) * CELLS + j[i]] = fh[i];
    f[(odd ? i + 1 : i) * CELLS + n] = fh[i + 1];
  }
}

__global__ void stencil7(float* out, const float* in, unsigned nx, unsigned ny, unsigned nz) {
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x,
                 y = blockIdx.y * blockDim.y + threadIdx.y,
                 z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  const size_t plane = (size_t)nx * ny;
  const size_t i = x + (size_t)nx * y + plane * z;
  float v = in[i];
  if (x > 0 && y > 0 && z > 0 && x + 1 < nx && y + 1 < ny && z + 1 < nz)
    v = 0.4f * v +
        0.1f * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - plane] + in[i + plane]);
  out[i] = v;
}

template <unsigned NX, unsigned NY, unsigned NZ>
void lbm_steps(float* f, const unsigned char* flags, unsigned long long first, unsigned count) {
  constexpr size_t cells = size_t{NX} * NY * NZ, local = 64;
  for (unsigned s = 0; s < count; ++s)
    lbm_d3q19<NX, NY, NZ><<<(cells + local - 1) / local, local>>>(f, flags, first + s);
}

// Steps of box <NX, NY, NZ> from `f`, into `f`.
template <unsigned NX, unsigned NY, unsigned NZ>
struct LbmRun {
  float* f = nullptr;
  unsigned char* flags = nullptr;
  static constexpr size_t cells = size_t{NX} * NY * NZ;
  explicit LbmRun(const std::vector<float>& host) {
    ok(cudaMalloc(&f, host.size() * sizeof(float)), "cudaMalloc");
    ok(cudaMalloc(&flags, cells), "cudaMalloc");
    cudaMemcpy(f, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(flags, 0, cells);
  }
  ~LbmRun() {
    cudaFree(f);
    cudaFree(flags);
  }
  void read(std::vector<float>& host) const {
    cudaMemcpy(host.data(), f, host.size() * sizeof(float), cudaMemcpyDeviceToHost);
  }
};

template <unsigned SIDE>
void measure_lbm(bool quick) {
  // The small box against the C++ reference, as the OpenCL worker checks it.
  constexpr Box check = manifold_tool::kLbmCheckBox;
  {
    std::vector<float> f = manifold_tool::lbm_initial(check, true), expected = f;
    std::vector<uint8_t> flags(check.cells(), 0);
    LbmRun<check.nx, check.ny, check.nz> run(f);
    lbm_steps<check.nx, check.ny, check.nz>(run.f, run.flags, 0, 3);
    run.read(f);
    for (uint64_t t = 0; t < 3; ++t) manifold_tool::lbm_reference_step(check, expected, flags, t);
    for (size_t i = 0; i < f.size(); ++i)
      if (std::fabs(expected[i] - f[i]) > 2e-5) {
        char why[128];
        std::snprintf(why, sizeof why, "f[%zu] = %.7g, expected %.7g", i, f[i], expected[i]);
        return emit_failure("lbm_d3q19_mlups", "MLUPs/s", why);
      }
  }
  const Box box = {SIDE, SIDE, SIDE};
  std::vector<float> f = manifold_tool::lbm_initial(box, false);
  double mass = 0, after = 0;
  for (float v : f) mass += v;
  LbmRun<SIDE, SIDE, SIDE> run(f);
  const unsigned steps = manifold_tool::kLbmSteps;
  unsigned long long t = 0;
  const double seconds = median_time(quick ? 3 : 5, [&] {
    lbm_steps<SIDE, SIDE, SIDE>(run.f, run.flags, t, steps);
    t += steps;
  });
  if (!ok(cudaDeviceSynchronize(), "lbm_d3q19"))
    return emit_failure("lbm_d3q19_mlups", "MLUPs/s", "launch failed");
  run.read(f);
  for (float v : f) after += v;
  if (std::fabs(after - mass) > 1e-4 * mass)
    return emit_failure("lbm_d3q19_mlups", "MLUPs/s", "mass not conserved");
  emit("lbm_d3q19_mlups", double(box.cells()) * steps / seconds / 1e6, "MLUPs/s");
}

void measure_stencil(bool quick) {
  const Box box = manifold_tool::stencil_box(quick);
  const size_t cells = box.cells(), bytes = cells * sizeof(float);
  std::vector<float> in(cells), out(cells);
  std::mt19937 random(11);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : in) v = uniform(random);
  float *din, *dout;
  ok(cudaMalloc(&din, bytes), "cudaMalloc");
  ok(cudaMalloc(&dout, bytes), "cudaMalloc");
  cudaMemcpy(din, in.data(), bytes, cudaMemcpyHostToDevice);
  const dim3 block(64, 4, 1), grid(box.nx / 64, box.ny / 4, box.nz);
  const double seconds = median_time(quick ? 4 : 10, [&] {
    for (int r = 0; r < manifold_tool::kStencilSweeps; ++r)
      stencil7<<<grid, block>>>(dout, din, box.nx, box.ny, box.nz);
  });
  cudaMemcpy(out.data(), dout, bytes, cudaMemcpyDeviceToHost);
  cudaFree(din);
  cudaFree(dout);
  for (unsigned z = 0; z < box.nz; ++z)
    for (unsigned y = 0; y < box.ny; ++y)
      for (unsigned x = 0; x < box.nx; ++x) {
        const size_t i = x + size_t{box.nx} * (y + size_t{box.ny} * z);
        const float expected = manifold_tool::stencil_reference(box, in, x, y, z);
        if (std::fabs(expected - out[i]) > 1e-5f * std::fmax(1.0f, std::fabs(expected)))
          return emit_failure("stencil7_gbs", "GB/s", "wrong result");
      }
  emit("stencil7_gbs", 2.0 * double(bytes) * manifold_tool::kStencilSweeps / seconds / 1e9, "GB/s");
}

}  // namespace

void run_more_app_kernels(bool quick);  // app_kernels_more.cu

// Called by cuda_native.cu's main.
void run_app_kernels(bool quick) {
  if (quick)
    measure_lbm<128>(quick);
  else
    measure_lbm<256>(quick);
  measure_stencil(quick);
  run_more_app_kernels(quick);
}
