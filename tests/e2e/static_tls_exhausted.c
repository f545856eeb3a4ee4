// The ICD loader must open Manifold in a process whose static TLS space is used up: a library
// loaded at run time may only take what glibc keeps spare for such libraries, and libraries the
// application loaded earlier (libgomp through PIL, here also fillers of our own) may have taken
// it all. Loads libgomp.so.1, then TLS fillers of decreasing sizes until less than a probe's
// size is left, then finds the Manifold platform and runs a kernel on its CPU device.
// Usage: static_tls_exhausted ICD_LIBRARY FILLER_DIR SIZE... PROBE_SIZE (sizes decreasing powers
// of two, so that the fillers that fit leave less than the smallest; after them a probe of
// PROBE_SIZE bytes must no longer fit, else the test proves nothing).
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kSkip = 77, kItems = 1024 };

static int fail(const char* what, cl_int status) {
  fprintf(stderr, "FAILED: %s (status %d)\n", what, status);
  return 1;
}

// FILLER_DIR/lib<kind>_<size>.so: kind "tls_filler" for the fillers, "tls_probe" for the probe
// (a file of its own: dlopen of a library already loaded would succeed without taking space).
static void* open_filler(const char* dir, const char* kind, long size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/lib%s_%ld.so", dir, kind, size);
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static cl_platform_id manifold_platform(void) {
  cl_uint count = 0;
  cl_int status = clGetPlatformIDs(0, NULL, &count);
  if (status != CL_SUCCESS || count == 0) {
    fprintf(stderr, "clGetPlatformIDs: status %d, %u platforms\n", status, count);
    return NULL;
  }
  cl_platform_id platforms[16];
  if (count > 16) count = 16;
  clGetPlatformIDs(count, platforms, NULL);
  for (cl_uint i = 0; i < count; ++i) {
    char name[256] = {0};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL);
    if (strstr(name, "Manifold")) return platforms[i];
  }
  return NULL;
}

static int run_kernel(cl_platform_id platform) {
  cl_device_id device;
  cl_int status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, &device, NULL);
  if (status != CL_SUCCESS) return fail("no CPU device", status);
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
  if (status != CL_SUCCESS) return fail("clCreateContext", status);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &status);
  if (status != CL_SUCCESS) return fail("clCreateCommandQueueWithProperties", status);
  const char* source =
      "kernel void scale(global float* x, float a) { size_t i = get_global_id(0); x[i] = a * x[i] "
      "+ "
      "sin(x[i]); }";
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &status);
  if (status != CL_SUCCESS) return fail("clCreateProgramWithSource", status);
  status = clBuildProgram(program, 1, &device, "", NULL, NULL);
  if (status != CL_SUCCESS) return fail("clBuildProgram", status);
  cl_kernel kernel = clCreateKernel(program, "scale", &status);
  if (status != CL_SUCCESS) return fail("clCreateKernel", status);
  float data[kItems];
  for (int i = 0; i < kItems; ++i) data[i] = (float)i / kItems;
  cl_mem buffer =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &status);
  if (status != CL_SUCCESS) return fail("clCreateBuffer", status);
  const float a = 3.0f;
  clSetKernelArg(kernel, 0, sizeof buffer, &buffer);
  clSetKernelArg(kernel, 1, sizeof a, &a);
  const size_t global = kItems;
  status = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL);
  if (status != CL_SUCCESS) return fail("clEnqueueNDRangeKernel", status);
  float result[kItems];
  status = clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, sizeof result, result, 0, NULL, NULL);
  if (status != CL_SUCCESS) return fail("clEnqueueReadBuffer", status);
  for (int i = 0; i < kItems; ++i) {
    const float x = (float)i / kItems;
    const float expected = a * x + (x - x * x * x / 6 + x * x * x * x * x / 120);
    if (!(result[i] > expected - 1e-3f && result[i] < expected + 1e-3f)) {
      fprintf(stderr, "FAILED: x[%d] = %g, expected %g\n", i, result[i], expected);
      return 1;
    }
  }
  clReleaseMemObject(buffer);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  printf("a kernel ran on Manifold's CPU device\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s ICD_LIBRARY FILLER_DIR SIZE... PROBE_SIZE\n", argv[0]);
    return 2;
  }
  if (!dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL)) {
    printf("SKIPPED: libgomp.so.1 cannot be loaded: %s\n", dlerror());
    return kSkip;
  }
  long taken = 0;
  for (int i = 3; i < argc - 1; ++i) {
    const long size = atol(argv[i]);
    if (open_filler(argv[2], "tls_filler", size)) taken += size;
  }
  const long probe = atol(argv[argc - 1]);
  printf("libgomp.so.1 and %ld bytes of TLS fillers loaded\n", taken);
  if (taken == 0 || open_filler(argv[2], "tls_probe", probe)) {
    fprintf(stderr,
            "FAILED: the fillers did not use up the static TLS space (%ld more bytes fit)\n",
            probe);
    return 1;
  }
  printf("less than %ld bytes of static TLS space are left\n", probe);

  cl_platform_id platform = manifold_platform();
  if (!platform) {
    // Say why: the loader drops a library it cannot open without a word.
    void* icd = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    fprintf(stderr, "FAILED: the ICD loader found no Manifold platform; dlopen(%s): %s\n", argv[1],
            icd ? "succeeds" : dlerror());
    return 1;
  }
  return run_kernel(platform);
}
