/* Shared virtual memory on one device: what SVM costs against buffers and native CUDA.
 *   gcc -O2 svm_cost.c -lOpenCL -ldl -o svm_cost   (libcuda.so.1 is opened for the native figures)
 *   OCL_ICD_VENDORS=<folder with the .icd files> ./svm_cost gpu|cpu [MiB] [PLATFORM]
 * PLATFORM (default Manifold) names the platform whose device is measured: the same figures for
 * a peer (PoCL, NVIDIA CUDA) in the same run.
 * Prints "METRIC VALUE UNIT" lines (medians of 5):
 *   triad_buffer_gbs / triad_svm_gbs: a[i] = b[i] + 3 c[i] over buffers and over coarse-grain SVM
 *     pointers (the same kernel), and their ratio;
 *   svm_to_device_gbs / svm_to_host_gbs: clEnqueueSVMMigrateMem of a whole coarse-grain
 *     allocation written on the other side, against cuMemcpyHtoD / cuMemcpyDtoH from page-locked
 *     memory (pinned_*_gbs, GPU only);
 *   svm_alloc_free_us / cuda_alloc_free_us: clSVMAlloc + clSVMFree of 1 MiB against cuMemAlloc +
 *     cuMemFree (GPU only). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
/* The driver is opened at run time: the CPU figures need no CUDA. */
static struct {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuMemAllocHost_v2)(void**, size_t);
  CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH_v2)(void*, CUdeviceptr, size_t);
} cu;
static int open_cuda(void) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) return 0;
#define SYM(name) *(void**)&cu.name = dlsym(lib, #name)
  SYM(cuInit);
  SYM(cuDeviceGet);
  SYM(cuDevicePrimaryCtxRetain);
  SYM(cuCtxSetCurrent);
  SYM(cuMemAlloc_v2);
  SYM(cuMemFree_v2);
  SYM(cuMemAllocHost_v2);
  SYM(cuMemcpyHtoD_v2);
  SYM(cuMemcpyDtoH_v2);
#undef SYM
  return cu.cuInit && cu.cuMemcpyDtoH_v2;
}

#define REPS 5
#define CHECK(x)                                                        \
  do {                                                                  \
    cl_int e_ = (x);                                                    \
    if (e_ != CL_SUCCESS) {                                             \
      fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #x, e_); \
      exit(1);                                                          \
    }                                                                   \
  } while (0)

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
static double median(double* v) {
  qsort(v, REPS, sizeof *v, by_value);
  return v[REPS / 2];
}

static const char* kSource =
    "kernel void triad(global float* a, global const float* b, global const float* c) {\n"
    "  size_t i = get_global_id(0); a[i] = b[i] + 3.0f * c[i]; }\n"
    "kernel void touch(global float* a) { a[get_global_id(0)] += 1.0f; }\n";

int main(int argc, char** argv) {
  const int gpu = argc < 2 || strcmp(argv[1], "cpu") != 0;
  const size_t mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 1024;
  const char* platform_name = argc > 3 ? argv[3] : "Manifold";
  const size_t bytes = mib << 20, n = bytes / sizeof(float);
  cl_platform_id platforms[8];
  cl_uint np = 0;
  CHECK(clGetPlatformIDs(8, platforms, &np));
  cl_device_id device = NULL;
  for (cl_uint p = 0; p < np && !device; ++p) {
    char name[64] = "";
    clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (strstr(name, platform_name))
      clGetDeviceIDs(platforms[p], gpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU, 1, &device, NULL);
  }
  if (!device) {
    fprintf(stderr, "no %s device on a platform named %s\n", gpu ? "GPU" : "CPU", platform_name);
    return 1;
  }
  char name[256] = "";
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL);
  cl_device_svm_capabilities caps = 0;
  clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL);
  printf("# platform %s, device %s, %zu MiB per array, SVM capabilities 0x%llx\n", platform_name,
         name, mib, (unsigned long long)caps);
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &kSource, NULL, &err);
  CHECK(clBuildProgram(prog, 1, &device, NULL, NULL, NULL));
  cl_kernel triad = clCreateKernel(prog, "triad", &err);
  cl_kernel touch = clCreateKernel(prog, "touch", &err);
  double t[REPS];

  /* Triad over buffers, then over SVM pointers. */
  cl_mem buf[3];
  for (int i = 0; i < 3; ++i) {
    buf[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err);
    const float v = 1.0f;
    CHECK(clEnqueueFillBuffer(q, buf[i], &v, sizeof v, 0, bytes, 0, NULL, NULL));
    CHECK(clSetKernelArg(triad, i, sizeof(cl_mem), &buf[i]));
  }
  CHECK(clEnqueueNDRangeKernel(q, triad, 1, NULL, &n, NULL, 0, NULL, NULL));
  CHECK(clFinish(q));
  for (int r = 0; r < REPS; ++r) {
    const double t0 = now_s();
    CHECK(clEnqueueNDRangeKernel(q, triad, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clFinish(q));
    t[r] = now_s() - t0;
  }
  const double triad_buffer = 3.0 * bytes / median(t) / 1e9;
  for (int i = 0; i < 3; ++i) clReleaseMemObject(buf[i]);
  float* s[3];
  for (int i = 0; i < 3; ++i) {
    s[i] = clSVMAlloc(ctx, CL_MEM_READ_WRITE, bytes, 0);
    if (!s[i]) {
      fprintf(stderr, "clSVMAlloc failed\n");
      return 1;
    }
    const float v = 1.0f;
    CHECK(clEnqueueSVMMemFill(q, s[i], &v, sizeof v, bytes, 0, NULL, NULL));
    CHECK(clSetKernelArgSVMPointer(triad, i, s[i]));
  }
  CHECK(clEnqueueNDRangeKernel(q, triad, 1, NULL, &n, NULL, 0, NULL, NULL));
  CHECK(clFinish(q));
  for (int r = 0; r < REPS; ++r) {
    const double t0 = now_s();
    CHECK(clEnqueueNDRangeKernel(q, triad, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clFinish(q));
    t[r] = now_s() - t0;
  }
  const double triad_svm = 3.0 * bytes / median(t) / 1e9;
  CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, s[0], bytes, 0, NULL, NULL));
  const int triad_ok = s[0][0] == 4.0f && s[0][n - 1] == 4.0f;
  CHECK(clEnqueueSVMUnmap(q, s[0], 0, NULL, NULL));
  printf("triad_buffer_gbs %.1f GB/s\ntriad_svm_gbs %.1f GB/s\ntriad_svm_vs_buffer %.3f x%s\n",
         triad_buffer, triad_svm, triad_svm / triad_buffer, triad_ok ? "" : " (WRONG RESULT)");

  /* Whole-allocation migrations: the device writes it, the host takes it back; the host writes
   * it, the device takes it. */
  double to_host[REPS], to_device[REPS];
  CHECK(clSetKernelArgSVMPointer(touch, 0, s[0]));
  const void* ptr = s[0];
  for (int r = 0; r < REPS; ++r) {
    CHECK(clEnqueueNDRangeKernel(q, touch, 1, NULL, &n, NULL, 0, NULL, NULL));
    CHECK(clFinish(q));
    double t0 = now_s();
    CHECK(clEnqueueSVMMigrateMem(q, 1, &ptr, NULL, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
    CHECK(clFinish(q));
    to_host[r] = bytes / (now_s() - t0) / 1e9;
    CHECK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, s[0], bytes, 0, NULL, NULL));
    s[0][0] = 1.0f;
    CHECK(clEnqueueSVMUnmap(q, s[0], 0, NULL, NULL));
    CHECK(clFinish(q));
    t0 = now_s();
    CHECK(clEnqueueSVMMigrateMem(q, 1, &ptr, NULL, 0, 0, NULL, NULL));
    CHECK(clFinish(q));
    to_device[r] = bytes / (now_s() - t0) / 1e9;
  }
  printf("svm_to_host_gbs %.1f GB/s\nsvm_to_device_gbs %.1f GB/s\n", median(to_host),
         median(to_device));

  /* Allocation cost. */
  const int allocs = 200;
  for (int r = 0; r < REPS; ++r) {
    const double t0 = now_s();
    for (int i = 0; i < allocs; ++i) clSVMFree(ctx, clSVMAlloc(ctx, CL_MEM_READ_WRITE, 1 << 20, 0));
    t[r] = (now_s() - t0) / allocs * 1e6;
  }
  const double svm_alloc = median(t);
  printf("svm_alloc_free_us %.1f us\n", svm_alloc);

  if (gpu && open_cuda()) {
    CUdevice cd;
    CUcontext cc;
    if (cu.cuInit(0) || cu.cuDeviceGet(&cd, 0) || cu.cuDevicePrimaryCtxRetain(&cc, cd) ||
        cu.cuCtxSetCurrent(cc)) {
      fprintf(stderr, "CUDA init failed\n");
      return 1;
    }
    for (int r = 0; r < REPS; ++r) {
      const double t0 = now_s();
      for (int i = 0; i < allocs; ++i) {
        CUdeviceptr p;
        cu.cuMemAlloc_v2(&p, 1 << 20);
        cu.cuMemFree_v2(p);
      }
      t[r] = (now_s() - t0) / allocs * 1e6;
    }
    const double cuda_alloc = median(t);
    void* pinned;
    CUdeviceptr dev;
    if (cu.cuMemAllocHost_v2(&pinned, bytes) || cu.cuMemAlloc_v2(&dev, bytes)) return 1;
    memset(pinned, 1, bytes);
    double h2d[REPS], d2h[REPS];
    for (int r = 0; r < REPS; ++r) {
      double t0 = now_s();
      cu.cuMemcpyHtoD_v2(dev, pinned, bytes);
      h2d[r] = bytes / (now_s() - t0) / 1e9;
      t0 = now_s();
      cu.cuMemcpyDtoH_v2(pinned, dev, bytes);
      d2h[r] = bytes / (now_s() - t0) / 1e9;
    }
    const double ph = median(h2d), pd = median(d2h);
    printf("cuda_alloc_free_us %.1f us\nsvm_alloc_vs_cuda %.2f x\n", cuda_alloc,
           svm_alloc / cuda_alloc);
    printf("pinned_to_device_gbs %.1f GB/s\npinned_to_host_gbs %.1f GB/s\n", ph, pd);
    printf("svm_to_device_vs_pinned %.2f x\nsvm_to_host_vs_pinned %.2f x\n", median(to_device) / ph,
           median(to_host) / pd);
  }
  for (int i = 0; i < 3; ++i) clSVMFree(ctx, s[i]);
  return 0;
}
