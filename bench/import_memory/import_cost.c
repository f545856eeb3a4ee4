/* cl_arm_import_memory on a GPU: what an import costs and how fast a kernel reads imported memory.
 *   gcc -O2 import_cost.c -lOpenCL -lcuda -o import_cost   (CUDA's libcuda for the peer figure)
 *   OCL_ICD_VENDORS=<folder with Manifold's .icd> ./import_cost [MiB]
 * Prints "METRIC VALUE UNIT" lines:
 *   import_ms / register_ms: clImportMemoryARM + clReleaseMemObject of a MiB-sized malloc'ed
 *     range against cuMemHostRegister + cuMemHostUnregister of one (median of 5, interleaved);
 *   imported_read_gbs / pinned_copy_gbs: a kernel summing the imported range (zero copy over
 *     the bus) against clEnqueueWriteBuffer of the same bytes from page-locked memory
 *     (CL_MEM_ALLOC_HOST_PTR, mapped) into a device buffer;
 *   imported_read4_gbs: the same with four loads in flight per work-item (kernel sum4);
 *   alloc_host_read_gbs / alloc_host_read4_gbs: the same kernels summing a
 *     CL_MEM_ALLOC_HOST_PTR buffer, wherever the platform keeps it for kernels (NVIDIA's OpenCL
 *     and Manifold both in device memory: no bus in the way).
 * On a platform without clImportMemoryARM (NVIDIA's OpenCL) only the alloc_host figures. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st* CUcontext;
CUresult cuInit(unsigned);
CUresult cuDeviceGet(CUdevice*, int);
CUresult cuDevicePrimaryCtxRetain(CUcontext*, CUdevice);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuMemHostRegister_v2(void*, size_t, unsigned);
CUresult cuMemHostUnregister(void*);

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
static double median(double* v, int n) {
  qsort(v, n, sizeof *v, by_value);
  return v[n / 2];
}

/* The `sum` kernel over `size` bytes of `in`: GB/s, median of 5 after a warm-up run. */
static double kernel_read_gbs(cl_command_queue q, cl_kernel k, cl_mem in, cl_mem out,
                              size_t size) {
  const cl_uint n = (cl_uint)(size / 16);
  clSetKernelArg(k, 0, sizeof in, &in);
  clSetKernelArg(k, 1, sizeof out, &out);
  clSetKernelArg(k, 2, sizeof n, &n);
  const size_t global = 132 * 2048, local = 256;
  double reads[5];
  for (int i = 0; i < 6; i++) {
    const double t0 = now_ms();
    clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
    clFinish(q);
    if (i) reads[i - 1] = size / ((now_ms() - t0) * 1e6);
  }
  return median(reads, 5);
}

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 1024;
  const size_t size = mib << 20;
  cl_platform_id p;
  cl_device_id d;
  cl_int e = clGetPlatformIDs(1, &p, NULL);
  if (e || (e = clGetDeviceIDs(p, CL_DEVICE_TYPE_GPU, 1, &d, NULL))) {
    printf("no GPU %d\n", e);
    return 1;
  }
  typedef cl_mem(CL_API_CALL * ImportFn)(cl_context, cl_mem_flags,
                                          const cl_import_properties_arm*, void*, size_t, cl_int*);
  ImportFn import = (ImportFn)clGetExtensionFunctionAddressForPlatform(p, "clImportMemoryARM");
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &e);
  /* A kernel reading every byte of a buffer (sums of uint4 per work-item). */
  const char* src =
      "kernel void sum(global const uint4* x, global uint* out, uint n) {"
      "  uint s = 0; for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {"
      "    uint4 v = x[i]; s += v.x + v.y + v.z + v.w; }"
      "  atomic_add(out, s); }"
      /* Four independent loads in flight per work-item: reads over the bus wait longer. */
      "kernel void sum4(global const uint4* x, global uint* out, uint n) {"
      "  uint s = 0; const uint g = get_global_size(0);"
      "  for (uint i = get_global_id(0); i + 3 * g < n; i += 4 * g) {"
      "    uint4 a = x[i], b = x[i + g], c = x[i + 2 * g], d = x[i + 3 * g];"
      "    a += b + c + d; s += a.x + a.y + a.z + a.w; }"
      "  atomic_add(out, s); }";
  cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  if ((e = clBuildProgram(pr, 1, &d, "", NULL, NULL))) {
    printf("build %d\n", e);
    return 1;
  }
  cl_kernel k = clCreateKernel(pr, "sum", &e);
  cl_kernel k4 = clCreateKernel(pr, "sum4", &e);
  cl_mem out = clCreateBuffer(c, CL_MEM_READ_WRITE, 4, NULL, &e);
  cl_mem alloc_host = clCreateBuffer(c, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_ONLY, size, NULL, &e);
  void* filled = clEnqueueMapBuffer(q, alloc_host, CL_TRUE, CL_MAP_WRITE, 0, size, 0, NULL, NULL, &e);
  memset(filled, 1, size);
  clEnqueueUnmapMemObject(q, alloc_host, filled, 0, NULL, NULL);
  printf("alloc_host_read_gbs %.2f GB/s\n", kernel_read_gbs(q, k, alloc_host, out, size));
  printf("alloc_host_read4_gbs %.2f GB/s\n", kernel_read_gbs(q, k4, alloc_host, out, size));
  if (!import) {
    printf("no clImportMemoryARM: no import figures\n");
    return 0;
  }
  char* host = malloc(size);
  char* other = malloc(size);
  memset(host, 1, size);
  memset(other, 1, size);
  CUdevice cu;
  CUcontext cu_ctx;
  cuInit(0);
  cuDeviceGet(&cu, 0);
  cuDevicePrimaryCtxRetain(&cu_ctx, cu);
  cuCtxSetCurrent(cu_ctx);

  double imports[5], registers[5];
  for (int i = 0; i < 5; i++) {
    double t0 = now_ms();
    cl_mem m = import(c, CL_MEM_READ_WRITE, NULL, host, size, &e);
    if (e) {
      printf("import failed %d\n", e);
      return 1;
    }
    clReleaseMemObject(m);
    imports[i] = now_ms() - t0;
    t0 = now_ms();
    if (cuMemHostRegister_v2(other, size, 1 | 2)) printf("cuMemHostRegister failed\n");
    cuMemHostUnregister(other);
    registers[i] = now_ms() - t0;
  }
  printf("import_ms %.3f ms\nregister_ms %.3f ms\n", median(imports, 5), median(registers, 5));

  cl_mem imported = import(c, CL_MEM_READ_ONLY, NULL, host, size, &e);
  printf("imported_read_gbs %.2f GB/s\n", kernel_read_gbs(q, k, imported, out, size));
  printf("imported_read4_gbs %.2f GB/s\n", kernel_read_gbs(q, k4, imported, out, size));

  cl_mem pinned = clCreateBuffer(c, CL_MEM_ALLOC_HOST_PTR, size, NULL, &e);
  cl_mem device = clCreateBuffer(c, CL_MEM_READ_WRITE, size, NULL, &e);
  void* mapped = clEnqueueMapBuffer(q, pinned, CL_TRUE, CL_MAP_WRITE, 0, size, 0, NULL, NULL, &e);
  memset(mapped, 1, size);
  double copies[5];
  for (int i = 0; i < 6; i++) {
    const double t0 = now_ms();
    clEnqueueWriteBuffer(q, device, CL_TRUE, 0, size, mapped, 0, NULL, NULL);
    if (i) copies[i - 1] = size / ((now_ms() - t0) * 1e6);
  }
  printf("pinned_copy_gbs %.2f GB/s\n", median(copies, 5));
  return 0;
}
