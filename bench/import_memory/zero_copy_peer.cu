// The native CUDA peer of import_cost.c's imported_read figures: the same summing kernels (one,
// then four uint4 loads in flight per thread, same grid) reading page-locked host memory in place
// (cudaHostAlloc, mapped): what any zero-copy buffer over the bus can reach.
//   nvcc -O2 -arch=sm_90 zero_copy_peer.cu -o zero_copy_peer && ./zero_copy_peer [MiB]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void sum(const uint4* x, unsigned* out, unsigned n) {
  unsigned s = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint4 v = x[i];
    s += v.x + v.y + v.z + v.w;
  }
  atomicAdd(out, s);
}

__global__ void sum4(const uint4* x, unsigned* out, unsigned n) {
  unsigned s = 0;
  const unsigned g = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i + 3 * g < n; i += 4 * g) {
    uint4 a = x[i], b = x[i + g], c = x[i + 2 * g], d = x[i + 3 * g];
    s += a.x + a.y + a.z + a.w + b.x + b.y + b.z + b.w + c.x + c.y + c.z + c.w + d.x + d.y + d.z +
         d.w;
  }
  atomicAdd(out, s);
}

template <typename Kernel>
double read_gbs(Kernel kernel, const uint4* x, unsigned* out, size_t size) {
  const unsigned n = static_cast<unsigned>(size / 16);
  double runs[5];
  for (int i = 0; i < 6; i++) {
    auto t0 = std::chrono::steady_clock::now();
    kernel<<<132 * 2048 / 256, 256>>>(x, out, n);
    cudaDeviceSynchronize();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
    if (i) runs[i - 1] = size / (ms * 1e6);
  }
  std::sort(runs, runs + 5);
  return runs[2];
}

int main(int argc, char** argv) {
  const size_t size = (argc > 1 ? strtoull(argv[1], nullptr, 10) : 1024) << 20;
  void* host = nullptr;
  if (cudaHostAlloc(&host, size, cudaHostAllocMapped) != cudaSuccess) {
    std::printf("cudaHostAlloc failed\n");
    return 1;
  }
  std::memset(host, 1, size);
  void* device_view = nullptr;
  cudaHostGetDevicePointer(&device_view, host, 0);
  unsigned* out = nullptr;
  cudaMalloc(&out, 4);
  const uint4* x = static_cast<const uint4*>(device_view);
  std::printf("pinned_zero_copy_read_gbs %.2f GB/s\n", read_gbs(sum, x, out, size));
  std::printf("pinned_zero_copy_read4_gbs %.2f GB/s\n", read_gbs(sum4, x, out, size));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
