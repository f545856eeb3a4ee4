// Cross-backend scheduling benchmark: how long Manifold takes to act on a dependency
// that crosses devices, and how fast it migrates a buffer between GPUs. Prints the metric lines
// of bench/README.md (metric<TAB>value<TAB>unit[<TAB>why]); `--quick` makes it shorter.
//
//   userevent_start_us_<dev>   clSetUserEventStatus -> START of a kernel that waits for the user
//                              event, on each device (median)
//   userevent_wait_us_<dev>    clSetUserEventStatus -> clWaitForEvents on that kernel returns
//                              (host clock only: includes the kernel and the waiter's wake-up)
//   gap_<a>_to_<b>_us          END of a kernel on device a -> START of a kernel on device b that
//                              lists it in its wait list (median); cpu_to_cpu uses two CPU queues
//   migrate_gpu0_gpu1_gbs      clEnqueueMigrateMemObjects of a 1 GiB buffer last written on GPU0
//                              to a queue of GPU1, enqueue to clFinish (host clock)
//   cupeer_gpu0_gpu1_gbs       cuMemcpyPeer of 1 GiB GPU0 -> GPU1 in the same process (libcuda
//                              opened with dlopen, as backends/cuda does)
//   migrate_vs_peer_ratio      migrate / cupeer (the target is >= 0.8)
//
// Clocks. A profiling time is a device-timer value; the host clock of the set call comes from
// clGetHostTimer, and each device's timer is related to the host timer by a
// clGetDeviceAndHostTimer pair taken just before (OpenCL 2.1: "a reasonably synchronized pair of
// timestamps from the device timer and the host timer"). So
//   START in host time = START - device_pair + host_pair
// needs no assumption about how the runtime stamps its events, and differences between devices
// go through the same host timer. (Polling a flag that the kernel writes into host memory would
// not work here: with a backing per device, what a GPU kernel writes reaches the host only
// through a migration.) Timer precision limits what can be resolved: about 1 us.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "settings/settings.h"

namespace {

bool g_quick = false;

const char* kSource = R"CLC(
kernel void tick(global uint* counter) {
  if (get_global_id(0) == 0) counter[0] += 1u;
}
kernel void touch(global uint* data, uint index, uint value) {
  data[index] = value;
}
)CLC";

using Clock = std::chrono::steady_clock;

void metric(const std::string& name, double value, const char* unit) {
  std::printf("%s\t%.3f\t%s\n", name.c_str(), value, unit);
  std::fflush(stdout);
}
void notMeasured(const std::string& name, const char* kind, const char* unit,
                 const std::string& why) {
  std::printf("%s\t%s\t%s\t%s\n", name.c_str(), kind, unit, why.c_str());
  std::fflush(stdout);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Failure {
  std::string what;
};
void check(cl_int err, const char* what) {
  if (err != CL_SUCCESS) throw Failure{std::string(what) + " returned " + std::to_string(err)};
}

std::string deviceName(cl_device_id d) {
  char name[256] = {};
  clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
  return name;
}

struct Dev {
  cl_device_id id;
  std::string label;  // cpu, gpu0, gpu1, ...
};

// A context with a program and one profiling queue per device.
struct Setup {
  cl_context context = nullptr;
  cl_program program = nullptr;
  std::vector<cl_command_queue> queues;  // parallel to the devices given
  ~Setup() {
    for (cl_command_queue q : queues) clReleaseCommandQueue(q);
    if (program) clReleaseProgram(program);
    if (context) clReleaseContext(context);
  }
};

// Throws Failure (with the OpenCL error) when the context cannot be made.
void makeSetup(Setup& s, const std::vector<cl_device_id>& devices, int queues_per_device = 1) {
  cl_int err = CL_SUCCESS;
  s.context = clCreateContext(nullptr, static_cast<cl_uint>(devices.size()), devices.data(),
                              nullptr, nullptr, &err);
  check(err, "clCreateContext");
  s.program = clCreateProgramWithSource(s.context, 1, &kSource, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  check(clBuildProgram(s.program, 0, nullptr, "", nullptr, nullptr), "clBuildProgram");
  const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  for (cl_device_id d : devices)
    for (int i = 0; i < queues_per_device; ++i) {
      s.queues.push_back(clCreateCommandQueueWithProperties(s.context, d, props, &err));
      check(err, "clCreateCommandQueueWithProperties");
    }
}

cl_kernel makeKernel(cl_program p, const char* name) {
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(p, name, &err);
  check(err, "clCreateKernel");
  return k;
}

// host time = device time + offset, from a clGetDeviceAndHostTimer pair.
int64_t hostOffset(cl_device_id d) {
  cl_ulong dev = 0, host = 0;
  check(clGetDeviceAndHostTimer(d, &dev, &host), "clGetDeviceAndHostTimer");
  return static_cast<int64_t>(host) - static_cast<int64_t>(dev);
}

cl_ulong stamp(cl_event e, cl_profiling_info what) {
  cl_ulong v = 0;
  check(clGetEventProfilingInfo(e, what, sizeof(v), &v, nullptr), "clGetEventProfilingInfo");
  return v;
}

// The tick kernel on its own counter buffer, `wait` in its wait list.
cl_event enqueueTick(cl_command_queue q, cl_kernel k, cl_mem counter, cl_event wait) {
  check(clSetKernelArg(k, 0, sizeof(cl_mem), &counter), "clSetKernelArg");
  const size_t one = 1;
  cl_event e = nullptr;
  check(clEnqueueNDRangeKernel(q, k, 1, nullptr, &one, nullptr, wait ? 1 : 0,
                               wait ? &wait : nullptr, &e),
        "clEnqueueNDRangeKernel");
  return e;
}

// (a) user event -> dependent kernel START, on each device.
void userEventLatency(cl_context ctx, cl_command_queue q, cl_kernel tick, const Dev& dev) {
  const int reps = g_quick ? 60 : 300;
  cl_int err = CL_SUCCESS;
  cl_uint zero = 0;
  cl_mem counter = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, &zero, &err);
  check(err, "clCreateBuffer");
  for (int i = 0; i < 10; ++i) clReleaseEvent(enqueueTick(q, tick, counter, nullptr));
  check(clFinish(q), "clFinish");
  std::vector<double> to_start, to_wait;
  for (int r = 0; r < reps; ++r) {
    cl_event user = clCreateUserEvent(ctx, &err);
    check(err, "clCreateUserEvent");
    cl_event k = enqueueTick(q, tick, counter, user);
    check(clFlush(q), "clFlush");
    std::this_thread::sleep_for(std::chrono::microseconds(300));  // nothing left in flight
    const int64_t offset = hostOffset(dev.id);
    cl_ulong set_host = 0;
    check(clGetHostTimer(dev.id, &set_host), "clGetHostTimer");
    const auto t0 = Clock::now();
    check(clSetUserEventStatus(user, CL_COMPLETE), "clSetUserEventStatus");
    check(clWaitForEvents(1, &k), "clWaitForEvents");
    const auto t1 = Clock::now();
    const int64_t start_host = static_cast<int64_t>(stamp(k, CL_PROFILING_COMMAND_START)) + offset;
    to_start.push_back((start_host - static_cast<int64_t>(set_host)) / 1e3);
    to_wait.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    clReleaseEvent(k);
    clReleaseEvent(user);
  }
  cl_uint count = 0;
  check(clEnqueueReadBuffer(q, counter, CL_TRUE, 0, 4, &count, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  clReleaseMemObject(counter);
  if (count != static_cast<cl_uint>(reps + 10)) {
    const std::string why =
        "counter " + std::to_string(count) + ", expected " + std::to_string(reps + 10);
    notMeasured("userevent_start_us_" + dev.label, "FAIL", "us", why);
    notMeasured("userevent_wait_us_" + dev.label, "FAIL", "us", why);
    return;
  }
  metric("userevent_start_us_" + dev.label, median(to_start), "us");
  metric("userevent_wait_us_" + dev.label, median(to_wait), "us");
}

// (b) END of a kernel on `from` -> START of the dependent kernel on `to`.
void crossGap(cl_context ctx, cl_command_queue qa, cl_command_queue qb, cl_kernel tick_a,
              cl_kernel tick_b, const Dev& from, const Dev& to) {
  const std::string name = "gap_" + from.label + "_to_" + to.label + "_us";
  const int reps = g_quick ? 60 : 300;
  cl_int err = CL_SUCCESS;
  cl_uint zero = 0;
  // One small buffer per side: the gap is the dependency alone, no data moves between devices.
  cl_mem ca = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, &zero, &err);
  check(err, "clCreateBuffer");
  cl_mem cb = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, &zero, &err);
  check(err, "clCreateBuffer");
  for (int i = 0; i < 5; ++i) {
    cl_event a = enqueueTick(qa, tick_a, ca, nullptr);
    clReleaseEvent(enqueueTick(qb, tick_b, cb, a));
    clReleaseEvent(a);
  }
  check(clFinish(qa), "clFinish");
  check(clFinish(qb), "clFinish");
  std::vector<double> gaps;
  for (int r = 0; r < reps; ++r) {
    cl_event user = clCreateUserEvent(ctx, &err);
    check(err, "clCreateUserEvent");
    cl_event a = enqueueTick(qa, tick_a, ca, user);
    cl_event b = enqueueTick(qb, tick_b, cb, a);
    check(clFlush(qa), "clFlush");
    check(clFlush(qb), "clFlush");
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    const int64_t off_a = hostOffset(from.id), off_b = hostOffset(to.id);
    check(clSetUserEventStatus(user, CL_COMPLETE), "clSetUserEventStatus");
    check(clWaitForEvents(1, &b), "clWaitForEvents");
    const int64_t end_a = static_cast<int64_t>(stamp(a, CL_PROFILING_COMMAND_END)) + off_a;
    const int64_t start_b = static_cast<int64_t>(stamp(b, CL_PROFILING_COMMAND_START)) + off_b;
    gaps.push_back((start_b - end_a) / 1e3);
    clReleaseEvent(a);
    clReleaseEvent(b);
    clReleaseEvent(user);
  }
  cl_uint na = 0, nb = 0;
  check(clEnqueueReadBuffer(qa, ca, CL_TRUE, 0, 4, &na, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  check(clEnqueueReadBuffer(qb, cb, CL_TRUE, 0, 4, &nb, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  clReleaseMemObject(ca);
  clReleaseMemObject(cb);
  const cl_uint want = static_cast<cl_uint>(reps + 5);
  if (na != want || nb != want) {
    notMeasured(name, "FAIL", "us",
                "counters " + std::to_string(na) + "/" + std::to_string(nb) + ", expected " +
                    std::to_string(want));
    return;
  }
  const double worst = *std::min_element(gaps.begin(), gaps.end());
  if (worst < -1.0)
    std::printf("# %s: a dependent kernel started %.1f us before its dependency ended\n",
                name.c_str(), -worst);
  metric(name, median(gaps), "us");
}

// ---- The CUDA driver API, the few entry points used, through dlopen (as backends/cuda does).
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st*;
using CUdeviceptr = unsigned long long;
struct Cuda {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuCtxEnablePeerAccess)(CUcontext, unsigned);
  CUresult (*cuDeviceCanAccessPeer)(int*, CUdevice, CUdevice);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuMemcpyPeer)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t);
};
constexpr CUresult kPeerAccessAlreadyEnabled = 704;

bool loadCuda(Cuda& c, std::string& why) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = "libcuda.so.1 not found";
    return false;
  }
  bool ok = true;
  auto get = [&](auto& fn, const char* sym) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, sym));
    if (!fn && ok) {
      ok = false;
      why = std::string("libcuda.so.1 lacks ") + sym;
    }
  };
  get(c.cuInit, "cuInit");
  get(c.cuDeviceGetCount, "cuDeviceGetCount");
  get(c.cuDeviceGet, "cuDeviceGet");
  get(c.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  get(c.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  get(c.cuCtxSetCurrent, "cuCtxSetCurrent");
  get(c.cuCtxSynchronize, "cuCtxSynchronize");
  get(c.cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess");
  get(c.cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer");
  get(c.cuMemAlloc, "cuMemAlloc_v2");
  get(c.cuMemFree, "cuMemFree_v2");
  get(c.cuMemsetD8, "cuMemsetD8_v2");
  get(c.cuMemcpyPeer, "cuMemcpyPeer");
  return ok;
}

// GB/s of cuMemcpyPeer GPU0 -> GPU1, or a negative value with `why`.
double nativePeerCopy(size_t bytes, int reps, std::string& why) {
  Cuda cu{};
  if (!loadCuda(cu, why)) return -1;
  auto ok = [&](CUresult r, const char* what) {
    if (r != 0) why = std::string(what) + " returned " + std::to_string(r);
    return r == 0;
  };
  int count = 0;
  if (!ok(cu.cuInit(0), "cuInit") || !ok(cu.cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return -1;
  if (count < 2) {
    why = "fewer than 2 CUDA devices";
    return -1;
  }
  CUdevice d0, d1;
  CUcontext c0, c1;
  if (!ok(cu.cuDeviceGet(&d0, 0), "cuDeviceGet") || !ok(cu.cuDeviceGet(&d1, 1), "cuDeviceGet") ||
      !ok(cu.cuDevicePrimaryCtxRetain(&c0, d0), "cuDevicePrimaryCtxRetain") ||
      !ok(cu.cuDevicePrimaryCtxRetain(&c1, d1), "cuDevicePrimaryCtxRetain"))
    return -1;
  int can01 = 0, can10 = 0;
  cu.cuDeviceCanAccessPeer(&can01, d0, d1);
  cu.cuDeviceCanAccessPeer(&can10, d1, d0);
  std::printf("# cuDeviceCanAccessPeer: 0->1 %d, 1->0 %d\n", can01, can10);
  // Peer access both ways where possible (what a CUDA program tuned for this would do).
  if (can01 && can10) {
    cu.cuCtxSetCurrent(c0);
    CUresult r = cu.cuCtxEnablePeerAccess(c1, 0);
    if (r != 0 && r != kPeerAccessAlreadyEnabled)
      std::printf("# cuCtxEnablePeerAccess 0->1: %d\n", r);
    cu.cuCtxSetCurrent(c1);
    r = cu.cuCtxEnablePeerAccess(c0, 0);
    if (r != 0 && r != kPeerAccessAlreadyEnabled)
      std::printf("# cuCtxEnablePeerAccess 1->0: %d\n", r);
  }
  CUdeviceptr src = 0, dst = 0;
  double result = -1;
  cu.cuCtxSetCurrent(c0);
  if (ok(cu.cuMemAlloc(&src, bytes), "cuMemAlloc GPU0") &&
      ok(cu.cuMemsetD8(src, 0x5a, bytes), "cuMemsetD8") &&
      ok(cu.cuCtxSynchronize(), "cuCtxSynchronize")) {
    cu.cuCtxSetCurrent(c1);
    if (ok(cu.cuMemAlloc(&dst, bytes), "cuMemAlloc GPU1")) {
      std::vector<double> gbs;
      bool good = true;
      for (int r = 0; r <= reps && good; ++r) {  // the first is a warm-up
        const auto t0 = Clock::now();
        good = ok(cu.cuMemcpyPeer(dst, c1, src, c0, bytes), "cuMemcpyPeer") &&
               ok(cu.cuCtxSynchronize(), "sync");
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (r > 0) gbs.push_back(bytes / s / 1e9);
      }
      if (good) result = median(gbs);
      cu.cuMemFree(dst);
    }
    cu.cuCtxSetCurrent(c0);
    cu.cuMemFree(src);
  }
  cu.cuCtxSetCurrent(nullptr);
  cu.cuDevicePrimaryCtxRelease(d0);
  cu.cuDevicePrimaryCtxRelease(d1);
  return result;
}

// (c) GB/s of Manifold's migration GPU0 -> GPU1 of a buffer last written on GPU0.
double manifoldMigration(cl_device_id g0, cl_device_id g1, size_t bytes, int reps,
                         std::string& why) {
  Setup s;
  makeSetup(s, {g0, g1});
  cl_command_queue q0 = s.queues[0], q1 = s.queues[1];
  cl_kernel touch = makeKernel(s.program, "touch");
  cl_int err = CL_SUCCESS;
  cl_mem buf = clCreateBuffer(s.context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  check(err, "clCreateBuffer 1 GiB");
  const cl_uint pattern = 0x5a5a5a5au;
  check(clEnqueueFillBuffer(q0, buf, &pattern, 4, 0, bytes, 0, nullptr, nullptr),
        "clEnqueueFillBuffer");
  check(clFinish(q0), "clFinish");
  std::vector<double> gbs;
  std::map<cl_uint, cl_uint> touched;  // element -> value written by `touch`
  const cl_uint elems = static_cast<cl_uint>(bytes / 4);
  for (int r = 0; r <= reps; ++r) {  // the first is a warm-up
    // A one-element write on GPU0 makes GPU0's copy the only current one.
    const cl_uint index = static_cast<cl_uint>((r * 7919u) % elems),
                  value = 1000u + static_cast<cl_uint>(r);
    check(clSetKernelArg(touch, 0, sizeof(cl_mem), &buf), "clSetKernelArg");
    check(clSetKernelArg(touch, 1, sizeof(cl_uint), &index), "clSetKernelArg");
    check(clSetKernelArg(touch, 2, sizeof(cl_uint), &value), "clSetKernelArg");
    const size_t one = 1;
    check(clEnqueueNDRangeKernel(q0, touch, 1, nullptr, &one, nullptr, 0, nullptr, nullptr),
          "touch");
    check(clFinish(q0), "clFinish");
    const auto t0 = Clock::now();
    check(clEnqueueMigrateMemObjects(q1, 1, &buf, 0, 0, nullptr, nullptr),
          "clEnqueueMigrateMemObjects");
    check(clFinish(q1), "clFinish");
    const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
    if (r > 0) gbs.push_back(bytes / sec / 1e9);
    // Checked on GPU1: the touched element and its neighbours.
    cl_uint got[2] = {};
    const cl_uint probe = index > 0 ? index - 1 : index + 1;
    check(clEnqueueReadBuffer(q1, buf, CL_TRUE, size_t(index) * 4, 4, &got[0], 0, nullptr, nullptr),
          "read");
    check(clEnqueueReadBuffer(q1, buf, CL_TRUE, size_t(probe) * 4, 4, &got[1], 0, nullptr, nullptr),
          "read");
    touched[index] = value;
    const cl_uint want_probe = touched.count(probe) ? touched[probe] : pattern;
    if (got[0] != value || got[1] != want_probe) {
      why = "after migration, element " + std::to_string(index) + " = " + std::to_string(got[0]) +
            " (expected " + std::to_string(value) + "), neighbour " + std::to_string(got[1]);
      clReleaseMemObject(buf);
      clReleaseKernel(touch);
      return -2;
    }
  }
  clReleaseMemObject(buf);
  clReleaseKernel(touch);
  return median(gbs);
}

int run() {
  const std::string want = manifold::tool_settings().bench_platform;
  const std::string platform_name = want.empty() ? "Manifold" : want;
  cl_uint np = 0;
  clGetPlatformIDs(0, nullptr, &np);
  std::vector<cl_platform_id> platforms(np);
  if (np) clGetPlatformIDs(np, platforms.data(), nullptr);
  cl_platform_id platform = nullptr;
  for (cl_platform_id p : platforms) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof(name) - 1, name, nullptr);
    if (std::strstr(name, platform_name.c_str())) platform = p;
  }
  if (!platform) {
    std::fprintf(stderr, "no OpenCL platform named '%s' (check OCL_ICD_VENDORS)\n",
                 platform_name.c_str());
    return 2;
  }
  std::vector<Dev> cpus, gpus;
  for (cl_device_type type : {CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU}) {
    cl_uint n = 0;
    if (clGetDeviceIDs(platform, type, 0, nullptr, &n) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(n);
    clGetDeviceIDs(platform, type, n, ids.data(), nullptr);
    for (cl_device_id d : ids) {
      auto& list = type == CL_DEVICE_TYPE_CPU ? cpus : gpus;
      list.push_back({d, type == CL_DEVICE_TYPE_CPU
                             ? (list.empty() ? "cpu" : "cpu" + std::to_string(list.size()))
                             : "gpu" + std::to_string(list.size())});
    }
  }
  for (const auto* list : {&cpus, &gpus})
    for (const Dev& d : *list)
      std::printf("info\tdevice\t%s: %s\n", d.label.c_str(), deviceName(d.id).c_str());
  std::vector<Dev> all = cpus;
  all.insert(all.end(), gpus.begin(), gpus.end());
  if (all.empty()) {
    std::fprintf(stderr, "the platform has no CPU or GPU device\n");
    return 2;
  }

  // One context over every device when the runtime allows it (backends mixed in one context).
  std::vector<cl_device_id> ids;
  for (const Dev& d : all) ids.push_back(d.id);
  auto mixed = std::make_unique<Setup>();
  std::string mixed_why;
  try {
    makeSetup(*mixed, ids, 2);
  } catch (const Failure& f) {
    mixed_why = "no context over all devices: " + f.what;
    std::printf("# %s; user-event latency measured in one context per device\n", mixed_why.c_str());
  }

  // (a) user event -> kernel START, each device.
  std::printf("info\trunning\tuserevent\n");
  for (size_t i = 0; i < all.size(); ++i) {
    try {
      Setup own;
      Setup* s = mixed.get();
      size_t qi = 2 * i;
      if (!mixed_why.empty()) {
        makeSetup(own, {all[i].id});
        s = &own;
        qi = 0;
      }
      cl_kernel tick = makeKernel(s->program, "tick");
      userEventLatency(s->context, s->queues[qi], tick, all[i]);
      clReleaseKernel(tick);
    } catch (const Failure& f) {
      notMeasured("userevent_start_us_" + all[i].label, "ERROR", "us", f.what);
    }
  }

  // (b) END -> START across devices (and between two CPU queues, which runs anywhere).
  std::printf("info\trunning\tgap\n");
  std::vector<std::pair<size_t, size_t>>
      pairs;  // indices into `all`, queue 2*i (+1 for the same device)
  for (size_t a = 0; a < all.size(); ++a)
    for (size_t b = 0; b < all.size(); ++b) pairs.push_back({a, b});
  for (auto [a, b] : pairs) {
    const bool same = a == b;
    if (same && a >= cpus.size()) continue;  // gpuN -> gpuN is the single-device path
    const std::string name = "gap_" + all[a].label + "_to_" + all[b].label + "_us";
    if (!mixed_why.empty() && !same) {
      notMeasured(name, "SKIP", "us", mixed_why);
      continue;
    }
    try {
      Setup own;
      Setup* s = mixed.get();
      size_t qa = 2 * a, qb = same ? 2 * a + 1 : 2 * b;
      if (!mixed_why.empty()) {
        makeSetup(own, {all[a].id}, 2);
        s = &own;
        qa = 0;
        qb = 1;
      }
      cl_kernel ka = makeKernel(s->program, "tick"), kb = makeKernel(s->program, "tick");
      crossGap(s->context, s->queues[qa], s->queues[qb], ka, kb, all[a], all[b]);
      clReleaseKernel(ka);
      clReleaseKernel(kb);
    } catch (const Failure& f) {
      notMeasured(name, "ERROR", "us", f.what);
    }
  }
  if (gpus.empty()) {
    notMeasured("gap_cpu_to_gpu0_us", "SKIP", "us", "no GPU device");
    notMeasured("gap_gpu0_to_cpu_us", "SKIP", "us", "no GPU device");
  }
  // Free the mixed context's queues before the migration's 2 GiB.
  mixed.reset();

  // (c) GPU0 -> GPU1 migration against cuMemcpyPeer.
  const size_t bytes = size_t(1) << 30;
  const int reps = g_quick ? 3 : 7;
  if (gpus.size() < 2) {
    const std::string why = "needs 2 GPUs, the platform has " + std::to_string(gpus.size());
    notMeasured("migrate_gpu0_gpu1_gbs", "SKIP", "GB/s", why);
    notMeasured("cupeer_gpu0_gpu1_gbs", "SKIP", "GB/s", why);
    notMeasured("migrate_vs_peer_ratio", "SKIP", "x", why);
    return 0;
  }
  std::printf("info\trunning\tmigrate_gpu0_gpu1_gbs (%zu MiB)\n", bytes >> 20);
  double migrate = -1;
  std::string why;
  try {
    migrate = manifoldMigration(gpus[0].id, gpus[1].id, bytes, reps, why);
    if (migrate == -2)
      notMeasured("migrate_gpu0_gpu1_gbs", "FAIL", "GB/s", why);
    else
      metric("migrate_gpu0_gpu1_gbs", migrate, "GB/s");
  } catch (const Failure& f) {
    notMeasured("migrate_gpu0_gpu1_gbs", "ERROR", "GB/s", f.what);
  }
  // After Manifold's run, so that the peer access enabled here cannot help or hinder it.
  std::printf("info\trunning\tcupeer_gpu0_gpu1_gbs\n");
  const double peer = nativePeerCopy(bytes, reps, why);
  if (peer < 0) {
    notMeasured("cupeer_gpu0_gpu1_gbs", "ERROR", "GB/s", why);
    notMeasured("migrate_vs_peer_ratio", "SKIP", "x", "no cuMemcpyPeer figure");
    return 0;
  }
  metric("cupeer_gpu0_gpu1_gbs", peer, "GB/s");
  if (migrate > 0)
    metric("migrate_vs_peer_ratio", migrate / peer, "x");
  else
    notMeasured("migrate_vs_peer_ratio", "SKIP", "x", "no migration figure");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      g_quick = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  try {
    return run();
  } catch (const Failure& f) {
    std::fprintf(stderr, "%s\n", f.what.c_str());
    return 1;
  }
}
