// `manifold bench --isolation`: what partitioning a GPU (clCreateSubDevices: CUDA green contexts)
// buys, on each of Manifold's GPUs that partitions equally.
// - Isolation: a small kernel loop (one small launch at a time: its round trip; a stream of them:
//   its throughput) on sub-device B alone, then while a stream of saturating kernels runs on
//   sibling A; the same pair on two queues of the whole GPU. Ratios "busy / alone" near 1 mean
//   the neighbour's load does not reach the loop.
// - Halves: two sub-devices of half the SMs each running independent compute work at once,
//   against the whole GPU running the same work (throughput ratio).
// Runs in the tool's own process on Manifold's platform; a GPU that cannot be partitioned is
// skipped with the reason.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_device.h"
#include "cl_support.h"
#include "commands.h"

namespace manifold_tool {
namespace {

const char* kSource =
    "kernel void tick(global uint* a, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint v = a[i];\n"
    "  for (uint r = 0; r < n; ++r) v = v * 1664525u + 1013904223u;\n"
    "  a[i] = v;\n"
    "}\n"
    "kernel void burn(global float* a, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float x = a[i], y = x * 0.5f, z = x + 1.0f, w = y - 1.0f;\n"
    "  for (uint r = 0; r < n; ++r) {\n"
    "    x = fma(x, 0.9999f, 0.0001f); y = fma(y, 0.9999f, 0.0002f);\n"
    "    z = fma(z, 0.9999f, 0.0003f); w = fma(w, 0.9999f, 0.0004f);\n"
    "  }\n"
    "  a[i] = x + y + z + w;\n"
    "}\n";

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Setup {
  cl_context context = nullptr;
  cl_program program = nullptr;
  ~Setup() {
    if (program) clReleaseProgram(program);
    if (context) clReleaseContext(context);
  }
};

// One queue with its own kernels and buffer.
struct Lane {
  cl_command_queue queue = nullptr;
  cl_kernel tick = nullptr, burn = nullptr;
  cl_mem buffer = nullptr;
  Lane(const Setup& s, cl_device_id device, size_t elements) {
    cl_int err = CL_SUCCESS;
    queue = clCreateCommandQueueWithProperties(s.context, device, nullptr, &err);
    cl_check(err, "clCreateCommandQueueWithProperties");
    buffer = clCreateBuffer(s.context, CL_MEM_READ_WRITE, elements * 4, nullptr, &err);
    cl_check(err, "clCreateBuffer");
    const cl_uint zero = 0;
    cl_check(clEnqueueFillBuffer(queue, buffer, &zero, 4, 0, elements * 4, 0, nullptr, nullptr),
             "clEnqueueFillBuffer");
    tick = clCreateKernel(s.program, "tick", &err);
    cl_check(err, "clCreateKernel");
    burn = clCreateKernel(s.program, "burn", &err);
    cl_check(err, "clCreateKernel");
    for (cl_kernel k : {tick, burn}) cl_check(clSetKernelArg(k, 0, sizeof buffer, &buffer), "arg");
  }
  ~Lane() {
    clReleaseKernel(tick);
    clReleaseKernel(burn);
    clReleaseMemObject(buffer);
    clReleaseCommandQueue(queue);
  }
  void launch(cl_kernel k, size_t global, cl_uint n, cl_event* done = nullptr) {
    cl_check(clSetKernelArg(k, 1, sizeof n, &n), "clSetKernelArg");
    const size_t local = 128;
    cl_check(clEnqueueNDRangeKernel(queue, k, 1, nullptr, &global, &local, 0, nullptr, done),
             "clEnqueueNDRangeKernel");
  }
  void finish() { cl_check(clFinish(queue), "clFinish"); }
};

constexpr size_t kTickItems = 4 * 128;  // a small kernel: four work-groups
constexpr cl_uint kTickLoop = 2000;

struct LoopFigures {
  double round_trip_us = 0, launches_per_s = 0;
};

// The small loop on `lane`: median round trip of single launches, then a stream's throughput.
LoopFigures measure_loop(Lane& lane, int round_trips, int stream) {
  std::vector<double> times;
  for (int i = 0; i < round_trips; ++i) {
    const auto start = Clock::now();
    lane.launch(lane.tick, kTickItems, kTickLoop);
    lane.finish();
    times.push_back(seconds_since(start) * 1e6);
  }
  std::sort(times.begin(), times.end());
  LoopFigures f;
  f.round_trip_us = times[times.size() / 2];
  const auto start = Clock::now();
  for (int i = 0; i < stream; ++i) lane.launch(lane.tick, kTickItems, kTickLoop);
  lane.finish();
  f.launches_per_s = stream / seconds_since(start);
  return f;
}

// The loop on `quiet` alone, then while a host thread keeps `busy` saturated: saturating
// launches of `burn_items` work-items, a few in flight at all times until the loop has ended.
std::pair<LoopFigures, LoopFigures> isolation_pair(Lane& quiet, Lane& busy, size_t burn_items,
                                                   cl_uint burn_loop, int round_trips, int stream) {
  measure_loop(quiet, 3, 3);  // warm-up: builds and first launches out of the way
  const LoopFigures alone = measure_loop(quiet, round_trips, stream);
  busy.launch(busy.burn, burn_items, burn_loop);
  busy.finish();
  std::atomic<bool> stop{false};
  std::atomic<bool> started{false};
  std::string failure;
  std::thread feeder([&] {
    try {
      std::deque<cl_event> in_flight;
      while (!stop.load()) {
        cl_event e = nullptr;
        busy.launch(busy.burn, burn_items, burn_loop, &e);
        clFlush(busy.queue);
        in_flight.push_back(e);
        if (in_flight.size() >= 3) {
          started.store(true);
          clWaitForEvents(1, &in_flight.front());
          clReleaseEvent(in_flight.front());
          in_flight.pop_front();
        }
      }
      for (cl_event e : in_flight) clReleaseEvent(e);
      busy.finish();
    } catch (const ClError& e) {
      failure = e.what();
      started.store(true);
    }
  });
  while (!started.load()) std::this_thread::yield();
  const LoopFigures loaded = measure_loop(quiet, round_trips, stream);
  stop.store(true);
  feeder.join();
  if (!failure.empty()) throw std::runtime_error("the saturating stream failed: " + failure);
  return {alone, loaded};
}

void print_pair(const char* what, const std::pair<LoopFigures, LoopFigures>& p) {
  std::printf(
      "  %-34s round trip %8.1f us alone, %8.1f us busy (x%.2f); throughput %9.0f/s "
      "alone, %9.0f/s busy (x%.2f)\n",
      what, p.first.round_trip_us, p.second.round_trip_us,
      p.second.round_trip_us / p.first.round_trip_us, p.first.launches_per_s,
      p.second.launches_per_s, p.second.launches_per_s / p.first.launches_per_s);
}

// Seconds for `parts` lanes each running `work` burn launches of `items` work-items at once.
double run_concurrently(std::vector<Lane*> lanes, size_t items, cl_uint loop, int work) {
  for (Lane* l : lanes) {
    l->launch(l->burn, items, loop);
    l->finish();
  }
  const auto start = Clock::now();
  for (int i = 0; i < work; ++i)
    for (Lane* l : lanes) l->launch(l->burn, items, loop);
  for (Lane* l : lanes) clFlush(l->queue);
  for (Lane* l : lanes) l->finish();
  return seconds_since(start);
}

// The largest equal split into at least two; the first two sub-devices (owned by the caller).
std::vector<cl_device_id> two_halves(cl_device_id gpu, std::string* why) {
  const cl_uint units = device_value<cl_uint>(gpu, CL_DEVICE_MAX_COMPUTE_UNITS);
  for (cl_uint each = units / 2; each > 0; --each) {
    const cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, each, 0};
    cl_uint n = 0;
    if (clCreateSubDevices(gpu, props, 0, nullptr, &n) != CL_SUCCESS || n < 2) continue;
    std::vector<cl_device_id> subs(n);
    cl_int err = clCreateSubDevices(gpu, props, n, subs.data(), nullptr);
    if (err != CL_SUCCESS) {
      *why = std::string("clCreateSubDevices: ") + cl_error_name(err);
      return {};
    }
    for (size_t i = 2; i < subs.size(); ++i) clReleaseDevice(subs[i]);
    subs.resize(2);
    return subs;
  }
  *why = "no equal partition into two";
  return {};
}

bool partitions_equally(cl_device_id d) {
  size_t size = 0;
  if (clGetDeviceInfo(d, CL_DEVICE_PARTITION_PROPERTIES, 0, nullptr, &size) != CL_SUCCESS)
    return false;
  std::vector<cl_device_partition_property> props(size / sizeof(cl_device_partition_property));
  clGetDeviceInfo(d, CL_DEVICE_PARTITION_PROPERTIES, size, props.data(), nullptr);
  return std::find(props.begin(), props.end(), CL_DEVICE_PARTITION_EQUALLY) != props.end();
}

void bench_gpu(const DeviceRef& ref, bool quick) {
  cl_device_id gpu = ref.device;
  std::string why;
  const std::vector<cl_device_id> halves = two_halves(gpu, &why);
  if (halves.size() < 2) {
    std::printf("%s: skipped: %s\n", ref.device_name.c_str(), why.c_str());
    return;
  }
  const cl_uint sms = device_value<cl_uint>(gpu, CL_DEVICE_MAX_COMPUTE_UNITS);
  const cl_uint half = device_value<cl_uint>(halves[0], CL_DEVICE_MAX_COMPUTE_UNITS);
  std::printf("%s: %u compute units; sub-devices A and B of %u each\n", ref.device_name.c_str(),
              sms, half);
  Setup s;
  cl_device_id all[] = {gpu, halves[0], halves[1]};
  cl_int err = CL_SUCCESS;
  s.context = clCreateContext(nullptr, 3, all, nullptr, nullptr, &err);
  cl_check(err, "clCreateContext");
  s.program = clCreateProgramWithSource(s.context, 1, &kSource, nullptr, &err);
  cl_check(err, "clCreateProgramWithSource");
  cl_check(clBuildProgram(s.program, 3, all, "", nullptr, nullptr), "clBuildProgram");
  // A saturating launch: 2048 work-items per compute unit of the whole GPU.
  const size_t burn_items = size_t(sms) * 2048;
  const cl_uint burn_loop = quick ? 4000 : 20000;
  const int round_trips = quick ? 50 : 400, stream = quick ? 200 : 2000;
  {
    Lane a(s, halves[0], burn_items), b(s, halves[1], burn_items);
    print_pair("B, A saturated (sub-devices)",
               isolation_pair(b, a, burn_items, burn_loop, round_trips, stream));
  }
  {
    Lane one(s, gpu, burn_items), two(s, gpu, burn_items);
    print_pair("queue 2, queue 1 saturated (whole)",
               isolation_pair(two, one, burn_items, burn_loop, round_trips, stream));
  }
  {
    // The same work: the whole GPU runs it all, each half runs half of it at once. Many waves of
    // work-groups per launch, so that the last wave's tail weighs little.
    const int work = quick ? 4 : 16;
    const size_t items = burn_items * 32;
    const cl_uint loop = burn_loop / 16;
    Lane whole(s, gpu, items), a(s, halves[0], items / 2), b(s, halves[1], items / 2);
    const double whole_s = run_concurrently({&whole}, items, loop, work);
    const double halves_s = run_concurrently({&a, &b}, items / 2, loop, work);
    std::printf(
        "  %-34s whole %8.2f ms, halves %8.2f ms: throughput x%.3f of the whole "
        "(SMs x%.3f)\n",
        "two halves at once vs the whole", whole_s * 1e3, halves_s * 1e3, whole_s / halves_s,
        double(2 * half) / sms);
  }
  for (cl_device_id d : halves) clReleaseDevice(d);
}

}  // namespace

int run_isolation_bench(bool quick) {
  int measured = 0;
  for (const DeviceRef& ref : enumerate_devices()) {
    if (!ref.is_manifold() || !(ref.type & CL_DEVICE_TYPE_GPU) ||
        !group_members(ref.device).empty())
      continue;
    ++measured;
    if (!partitions_equally(ref.device)) {
      std::printf(
          "%s: skipped: it reports no CL_DEVICE_PARTITION_EQUALLY (CUDA green contexts "
          "need driver 12.4 or later and SMs for two SM groups; other backends do not "
          "partition GPUs by SMs)\n",
          ref.device_name.c_str());
      continue;
    }
    try {
      bench_gpu(ref, quick);
    } catch (const std::exception& e) {
      std::printf("%s: failed: %s\n", ref.device_name.c_str(), e.what());
    }
  }
  if (measured == 0) std::printf("isolation: skipped: Manifold lists no GPU\n");
  return 0;
}

}  // namespace manifold_tool
