// What batching runs of launches into CUDA graphs would cost per kernel, against plain
// cuLaunchKernel: the ways a runtime could turn K queued launches into one graph launch.
//   capture+instantiate: stream capture of K launches, a fresh executable graph each batch
//   capture+update:      stream capture, then cuGraphExecUpdate into one cached executable
//   setparams:           one cached chain of K kernel nodes; cuGraphExecKernelNodeSetParams per node
// Every batch also records one CUDA event (what completion tracking would need).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <vector>
__global__ void empty(float*) {}
__global__ void other(float*) {}
__global__ void spin(float*, long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}
static double now() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
#define CK(x)                                                                                      \
  do {                                                                                             \
    CUresult r_ = (x);                                                                             \
    if (r_ != CUDA_SUCCESS) {                                                                      \
      printf("%s failed: %d (line %d)\n", #x, r_, __LINE__);                                       \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

// A launch of one thread.
static CUDA_KERNEL_NODE_PARAMS one_thread(CUfunction f, void** params) {
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = f;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = params;
  return kp;
}
// A graph of K such launches, each after the one before; instantiated.
static CUgraphExec make_chain(const CUDA_KERNEL_NODE_PARAMS& kp, int K, CUgraph& g,
                              std::vector<CUgraphNode>& nodes) {
  CK(cuGraphCreate(&g, 0));
  nodes.assign(K, nullptr);
  for (int i = 0; i < K; i++)
    CK(cuGraphAddKernelNode(&nodes[i], g, i ? &nodes[i - 1] : nullptr, i ? 1 : 0, &kp));
  CUgraphExec ge;
  CK(cuGraphInstantiate(&ge, g, 0));
  return ge;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20000;
  float* p;
  cudaMalloc(&p, 4096);
  cudaStream_t rs;
  cudaStreamCreateWithFlags(&rs, cudaStreamNonBlocking);
  CUstream s = (CUstream)rs;
  cudaFunction_t rf, rf2;
  cudaGetFuncBySymbol(&rf, (const void*)empty);
  cudaGetFuncBySymbol(&rf2, (const void*)other);
  CUfunction f = (CUfunction)rf, f2 = (CUfunction)rf2;
  void* params[1] = {&p};
  CUevent ev;
  CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
  for (int i = 0; i < 100; i++) CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr));
  CK(cuStreamSynchronize(s));

  for (int rep = 0; rep < 3; rep++) {
    double t0 = now();
    for (int i = 0; i < n; i++) CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr));
    CK(cuStreamSynchronize(s));
    printf("plain cuLaunchKernel: %.3f us/kernel\n", (now() - t0) / n);
  }

  for (int K : {8, 32, 128}) {
    int batches = n / K;
    // capture + instantiate
    for (int rep = 0; rep < 2; rep++) {
      double t0 = now();
      for (int b = 0; b < batches; b++) {
        CUgraph g;
        CUgraphExec ge;
        CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
        for (int i = 0; i < K; i++) CK(cuLaunchKernel(i & 1 ? f2 : f, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr));
        CK(cuStreamEndCapture(s, &g));
        CK(cuGraphInstantiate(&ge, g, 0));
        CK(cuGraphLaunch(ge, s));
        CK(cuEventRecord(ev, s));
        CK(cuGraphExecDestroy(ge));
        CK(cuGraphDestroy(g));
      }
      CK(cuStreamSynchronize(s));
      printf("K=%d capture+instantiate: %.3f us/kernel\n", K, (now() - t0) / (batches * K));
    }
    // capture + update
    for (int rep = 0; rep < 2; rep++) {
      CUgraphExec ge = nullptr;
      double t0 = now();
      for (int b = 0; b < batches; b++) {
        CUgraph g;
        CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
        for (int i = 0; i < K; i++)
          CK(cuLaunchKernel((i + b) & 1 ? f2 : f, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr));
        CK(cuStreamEndCapture(s, &g));
        if (!ge) {
          CK(cuGraphInstantiate(&ge, g, 0));
        } else {
          CUgraphExecUpdateResultInfo info;
          CK(cuGraphExecUpdate(ge, g, &info));
        }
        CK(cuGraphLaunch(ge, s));
        CK(cuEventRecord(ev, s));
        CK(cuGraphDestroy(g));
      }
      CK(cuStreamSynchronize(s));
      printf("K=%d capture+update: %.3f us/kernel\n", K, (now() - t0) / (batches * K));
      CK(cuGraphExecDestroy(ge));
    }
    // cached chain + set params
    {
      CUDA_KERNEL_NODE_PARAMS kp = one_thread(f, params);
      CUgraph g;
      std::vector<CUgraphNode> nodes;
      CUgraphExec ge = make_chain(kp, K, g, nodes);
      for (int rep = 0; rep < 2; rep++) {
        double t0 = now();
        for (int b = 0; b < batches; b++) {
          for (int i = 0; i < K; i++) {
            kp.func = (i + b) & 1 ? f2 : f;
            CK(cuGraphExecKernelNodeSetParams(ge, nodes[i], &kp));
          }
          CK(cuGraphLaunch(ge, s));
          CK(cuEventRecord(ev, s));
        }
        CK(cuStreamSynchronize(s));
        printf("K=%d setparams: %.3f us/kernel\n", K, (now() - t0) / (batches * K));
      }
      // replay only (no parameter change): the floor
      double t0 = now();
      for (int b = 0; b < batches; b++) {
        CK(cuGraphLaunch(ge, s));
        CK(cuEventRecord(ev, s));
      }
      CK(cuStreamSynchronize(s));
      printf("K=%d replay only: %.3f us/kernel\n", K, (now() - t0) / (batches * K));
      CK(cuGraphExecDestroy(ge));
      CK(cuGraphDestroy(g));
    }
  }
  // Does updating a node wait for a launch of the same executable graph still running? A chain
  // of 32 kernels spinning ~50 us each (1.6 ms per graph launch), updated while it runs.
  {
    cudaFunction_t rs2;
    cudaGetFuncBySymbol(&rs2, (const void*)spin);
    CUfunction fs = (CUfunction)rs2;
    long long cycles = 100000;
    void* sp[2] = {&p, &cycles};
    const int K = 32;
    CUDA_KERNEL_NODE_PARAMS kp = one_thread(fs, sp);
    CUgraph g;
    std::vector<CUgraphNode> nodes;
    CUgraphExec ge = make_chain(kp, K, g, nodes);
    double t0 = now();
    CK(cuGraphLaunch(ge, s));
    CK(cuStreamSynchronize(s));
    printf("spin graph alone: %.1f us\n", now() - t0);
    for (int rep = 0; rep < 3; rep++) {
      t0 = now();
      CK(cuGraphLaunch(ge, s));
      double t1 = now();
      long long c2 = cycles + rep + 1;
      void* sp2[2] = {&p, &c2};
      kp.kernelParams = sp2;
      for (int i = 0; i < K; i++) CK(cuGraphExecKernelNodeSetParams(ge, nodes[i], &kp));
      double t2 = now();
      CK(cuGraphLaunch(ge, s));
      double t3 = now();
      CK(cuStreamSynchronize(s));
      double t4 = now();
      printf("in flight: launch %.1f us, %d setparams %.1f us, relaunch %.1f us, sync %.1f us\n", t1 - t0, K, t2 - t1, t3 - t2, t4 - t3);
    }
  }
  return 0;
}
