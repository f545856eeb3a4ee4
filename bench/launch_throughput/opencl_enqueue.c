/* The launch path of an OpenCL platform: round trip (one empty kernel, enqueue + clFinish) and
 * enqueue throughput (N empty kernels back to back on an in-order queue, one clFinish), with a
 * fixed and a changing argument. Runs against whichever ICD OCL_ICD_VENDORS names.
 *   gcc -O2 opencl_enqueue.c -lOpenCL -o enq && ./enq [N] [gpu|cpu] [LABEL]
 * Output: one line per measurement, "LABEL METRIC VALUE us" (medians of the repetitions). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
static double median(double* v, int n) {
  qsort(v, n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 20000;
  const cl_device_type type =
      argc > 2 && strcmp(argv[2], "cpu") == 0 ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;
  const char* label = argc > 3 ? argv[3] : "opencl";
  cl_platform_id p;
  cl_device_id d;
  cl_int e = clGetPlatformIDs(1, &p, NULL);
  if (e || (e = clGetDeviceIDs(p, type, 1, &d, NULL))) {
    printf("no device %d\n", e);
    return 1;
  }
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &e);
  const char* src =
      "kernel void empty(global float* unused) {}"
      "kernel void empty2(global float* unused, int v) {}";
  cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  if ((e = clBuildProgram(pr, 1, &d, "", NULL, NULL))) {
    printf("build %d\n", e);
    return 1;
  }
  cl_kernel k = clCreateKernel(pr, "empty", &e), k2 = clCreateKernel(pr, "empty2", &e);
  cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, 4096, NULL, &e);
  clSetKernelArg(k, 0, sizeof(b), &b);
  clSetKernelArg(k2, 0, sizeof(b), &b);
  const size_t g = 1;
  for (int i = 0; i < 100; i++) clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
  clFinish(q);

  enum { kTrips = 2001, kReps = 5 };
  static double trips[kTrips];
  for (int i = 0; i < kTrips; i++) {
    const double t0 = now();
    clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
    clFinish(q);
    trips[i] = now() - t0;
  }
  printf("%s round_trip %.3f us\n", label, median(trips, kTrips));

  double fixed[kReps], varying[kReps];
  for (int rep = 0; rep < kReps; rep++) {
    double t0 = now();
    for (int i = 0; i < n; i++) clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
    clFinish(q);
    fixed[rep] = (now() - t0) / n;
    /* An argument that changes with every launch: no launch repeats the one before it. */
    t0 = now();
    for (int i = 0; i < n; i++) {
      clSetKernelArg(k2, 1, sizeof(i), &i);
      clEnqueueNDRangeKernel(q, k2, 1, NULL, &g, NULL, 0, NULL, NULL);
    }
    clFinish(q);
    varying[rep] = (now() - t0) / n;
  }
  printf("%s enqueue_per_kernel %.3f us\n", label, median(fixed, kReps));
  printf("%s enqueue_per_kernel_varying_arg %.3f us\n", label, median(varying, kReps));
  return 0;
}
