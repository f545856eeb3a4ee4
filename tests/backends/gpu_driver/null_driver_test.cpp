// The CUDA backend's launch batching (backends/gpu_stream/launch_batch.h) over the simulated
// driver (null_cuda.cpp), so that it runs everywhere, CI and sanitizers included: which launches
// wait in a batch, when a batch goes (full, flush, wait, status poll, deadline), that profiled
// launches never wait, and that a launch the driver refuses fails its own command only. Kernels
// compute nothing there; the driver counts stream and graph launches.
// Built twice: null_driver (the CUDA backend) and null_hip_driver (NULL_HIP_PATH: the HIP backend,
// the same shared driver code with HIP's policy, over the HIP shim on the simulated driver).
#include <CL/cl.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "cl_test.h"
#include "compiler/image_abi.h"
#include "core/cl_khr_command_buffer.h"

namespace {

using namespace cltest;

struct Counts {
  uint64_t kernels = 0, graphs = 0;
};

#ifdef NULL_HIP_PATH
constexpr const char* kDriverPath = NULL_HIP_PATH;
constexpr bool kHip = true;
#else
constexpr const char* kDriverPath = NULL_CUDA_PATH;
constexpr bool kHip = false;
#endif

void* null_driver() {
  static void* handle = dlopen(kDriverPath, RTLD_NOW | RTLD_LOCAL);
  return handle;
}
Counts counts() {
  using Fn = void (*)(uint64_t*, uint64_t*);
  static auto fn = reinterpret_cast<Fn>(dlsym(null_driver(), "null_cuda_launch_counts"));
  Counts c;
  fn(&c.kernels, &c.graphs);
  return c;
}
void fail_in_driver(int launches, bool graphs) {
  using Fn = void (*)(int, bool);
  static auto fn = reinterpret_cast<Fn>(dlsym(null_driver(), "null_cuda_fail"));
  fn(launches, graphs);
}

constexpr int kBatch = 32;  // MANIFOLD_GPU_LAUNCH_BATCH's default

class NullCuda : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Before Manifold loads (the first OpenCL call): the simulated driver, and a batch deadline
    // long enough that a slow (sanitized) enqueue loop never meets it by accident.
    if (kHip) {
      setenv("MANIFOLD_HIP_RUNTIME", kDriverPath, 1);
      setenv("MANIFOLD_DISABLE_CUDA", "1", 1);  // only the HIP backend's device
      unsetenv("MANIFOLD_DISABLE_HIP");
    } else {
      setenv("MANIFOLD_CUDA_DRIVER", kDriverPath, 1);
      unsetenv("MANIFOLD_DISABLE_CUDA");
    }
    setenv("MANIFOLD_GPU_LAUNCH_BATCH_US", "100000", 1);
    unsetenv("MANIFOLD_GPU_LAUNCH_BATCH");
  }

  void SetUp() override {
    ASSERT_NE(null_driver(), nullptr) << dlerror();
    cl_platform_id platform = findPlatform();
    ASSERT_NE(platform, nullptr);
    cl_uint n = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device_, &n) != CL_SUCCESS) {
      // The HIP build has no other reason to exist: its device must be there.
      ASSERT_FALSE(kHip) << "no GPU device (the HIP shim did not load: MANIFOLD_DEBUG=1 says why)";
      GTEST_SKIP() << "no GPU device (the simulated CUDA driver did not load)";
    }
    char name[256] = {}, version[256] = {};
    clGetDeviceInfo(device_, CL_DEVICE_NAME, sizeof name, name, nullptr);
    ASSERT_NE(std::string(name).find("Simulated"), std::string::npos) << name;
    clGetDeviceInfo(device_, CL_DEVICE_VERSION, sizeof version, version, nullptr);
    ASSERT_NE(std::string(version).find(kHip ? "HIP" : "CUDA"), std::string::npos) << version;
    cl_int err = CL_SUCCESS;
    context_.reset(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err));
    queue_ = make_queue(0);
    const char* source = "kernel void k(int v) {}";
    program_.reset(clCreateProgramWithSource(context_, 1, &source, nullptr, &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(clBuildProgram(program_, 1, &device_, "", nullptr, nullptr)));
    kernel_.reset(clCreateKernel(program_, "k", &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  }
  void TearDown() override {
    fail_in_driver(0, false);
    if (queue_) clFinish(queue_);
  }

  Queue make_queue(cl_command_queue_properties properties) {
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, properties, 0};
    cl_int err = CL_SUCCESS;
    Queue q(clCreateCommandQueueWithProperties(context_, device_, props, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err));
    return q;
  }
  // One launch of k(v) into `q` (the test's queue by default).
  void launch(int v, cl_event* event = nullptr, cl_command_queue q = nullptr) {
    ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(kernel_, 0, sizeof v, &v)));
    const size_t global = 64;
    ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(q ? q : queue_.get(), kernel_, 1, nullptr,
                                                          &global, nullptr, 0, nullptr, event)));
  }
  // Everything done, then one launch that goes at once: the next ones wait in a batch.
  void idle_then_busy() {
    ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
    const Counts before = counts();
    launch(100);
    ASSERT_EQ(since(before).kernels, 1u);
  }
  // Launches since `before`.
  static Counts since(const Counts& before) {
    const Counts now = counts();
    return {now.kernels - before.kernels, now.graphs - before.graphs};
  }
  static cl_int status_of(cl_event e) {
    cl_int status = 1;
    EXPECT_EQ(Err(CL_SUCCESS), Err(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                                  sizeof status, &status, nullptr)));
    return status;
  }

  cl_device_id device_ = nullptr;
  Context context_;
  Queue queue_;
  Program program_;
  Kernel kernel_;
};

// Kernels written for constant memory index __constant buffers with int: a limit above 4 GiB
// (the simulated GPU has 8 GiB, one allocation may take 7) would let a buffer of ints overflow it.
TEST_F(NullCuda, ConstantBuffersStopAtFourGiB) {
  cl_ulong constant = 0, allocation = 0;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clGetDeviceInfo(device_, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE,
                                                 sizeof constant, &constant, nullptr)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clGetDeviceInfo(device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
                                                 sizeof allocation, &allocation, nullptr)));
  EXPECT_GT(allocation, cl_ulong{4} << 30);
  EXPECT_EQ(constant, cl_ulong{4} << 30);
}

TEST_F(NullCuda, RunsOfLaunchesGoAsGraphLaunches) {
  const Counts before = counts();
  launch(0);  // an idle stream: at once
  EXPECT_EQ(since(before).kernels, 1u);
  for (int i = 1; i <= 2 * kBatch + 5; ++i) launch(i % 3);  // a busy stream: batches
  const Counts staged = since(before);
  EXPECT_EQ(staged.kernels, 1u);
  EXPECT_EQ(staged.graphs, 2u);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  const Counts done = since(before);
  EXPECT_EQ(done.kernels, 1u + 5u) << "clFinish launches the partial batch, one by one";
  EXPECT_EQ(done.graphs, 2u);
}

TEST_F(NullCuda, NDRangeBeyondTheGridLimitGoesAsSeveralLaunches) {
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  const int v = 1;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(kernel_, 0, sizeof v, &v)));
  // 65535 blocks at most in y: 65635 groups go as two launches.
  const size_t global_y[2] = {1, 65535 + 100}, one[2] = {1, 1};
  Counts before = counts();
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, kernel_, 2, nullptr, global_y, one,
                                                        0, nullptr, nullptr)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  EXPECT_EQ(since(before).kernels, 2u);
  // 2^31-1 blocks at most in x.
  const size_t global_x = (size_t{1} << 31) + 5, local_x = 1;
  before = counts();
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, kernel_, 1, nullptr, &global_x,
                                                        &local_x, 0, nullptr, nullptr)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  EXPECT_EQ(since(before).kernels, 2u);
}

TEST_F(NullCuda, FlushWaitAndStatusPollLaunchTheBatch) {
  idle_then_busy();
  Counts before = counts();
  launch(1);
  launch(2);
  EXPECT_EQ(since(before).kernels, 0u) << "both wait in the batch";
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFlush(queue_)));
  EXPECT_EQ(since(before).kernels, 2u);

  Event e;
  idle_then_busy();
  before = counts();
  launch(3, e.out());
  EXPECT_EQ(since(before).kernels, 0u);
  cl_event wait = e.get();
  ASSERT_EQ(Err(CL_SUCCESS), Err(clWaitForEvents(1, &wait)));
  EXPECT_EQ(since(before).kernels, 1u);
  EXPECT_EQ(status_of(e), CL_COMPLETE);

  Event polled;
  idle_then_busy();
  before = counts();
  launch(4, polled.out());
  EXPECT_EQ(since(before).kernels, 0u);
  // A status poll asks for completion: the launch goes, and the event completes without a wait.
  cl_int status = status_of(polled);
  for (int i = 0; i < 5000 && status != CL_COMPLETE; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    status = status_of(polled);
  }
  EXPECT_EQ(status, CL_COMPLETE);
  EXPECT_EQ(since(before).kernels, 1u);

  // Any other command goes after the batch, in order.
  idle_then_busy();
  before = counts();
  launch(5);
  cl_int err = CL_SUCCESS;
  Mem m(clCreateBuffer(context_, CL_MEM_READ_WRITE, 256, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const int zero = 0;
  ASSERT_EQ(Err(CL_SUCCESS),
            Err(clEnqueueFillBuffer(queue_, m, &zero, sizeof zero, 0, 256, 0, nullptr, nullptr)));
  EXPECT_EQ(since(before).kernels, 1u);
}

TEST_F(NullCuda, BatchLaunchesAtItsDeadlineWithoutFlush) {
  launch(0);
  const Counts before = counts();
  launch(1);
  launch(2);
  launch(3);
  EXPECT_EQ(since(before).kernels, 0u);
  // No OpenCL call: the queue's waiter thread launches the batch at its deadline (100 ms here).
  for (int i = 0; i < 100 && since(before).kernels < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(since(before).kernels, 3u);
}

TEST_F(NullCuda, ProfiledLaunchesGoAtOnce) {
  Queue profiled = make_queue(CL_QUEUE_PROFILING_ENABLE);
  const Counts before = counts();
  for (int i = 0; i < 2 * kBatch; ++i) launch(i, nullptr, profiled);
  EXPECT_EQ(since(before).kernels, uint64_t(2 * kBatch));
  EXPECT_EQ(since(before).graphs, 0u);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(profiled)));
}

TEST_F(NullCuda, RefusedLaunchFailsOnlyItsCommand) {
  launch(0);
  // The driver refuses graphs: the full batch goes as plain launches, of which the first fails.
  fail_in_driver(0, true);
  std::vector<Event> events(kBatch);
  for (int i = 0; i < kBatch - 1; ++i) launch(i, events[i].out());
  fail_in_driver(1, true);
  launch(kBatch, events[kBatch - 1].out());  // fills the batch: it goes now
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  EXPECT_EQ(status_of(events[0]), CL_OUT_OF_RESOURCES);
  for (int i = 1; i < kBatch; ++i) EXPECT_EQ(status_of(events[i]), CL_COMPLETE) << i;
  // The queue goes on.
  Event after;
  launch(1, after.out());
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  EXPECT_EQ(status_of(after), CL_COMPLETE);
}

// The first use of a buffer on the GPU needs its memory there, and cuMemAlloc refuses: that
// command fails with CL_MEM_OBJECT_ALLOCATION_FAILURE, what waits for it fails, and the buffer
// keeps its bytes (the GPU is not taken for the place that holds them).
TEST_F(NullCuda, RefusedAllocationFailsWhatWaitsAndKeepsTheBytes) {
  using Fn = void (*)(int);
  auto fail_allocations = reinterpret_cast<Fn>(dlsym(null_driver(), "null_cuda_fail_allocations"));
  ASSERT_NE(fail_allocations, nullptr);
  std::vector<int> original(256);
  for (int i = 0; i < 256; ++i) original[i] = 3 * i + 1;
  const size_t bytes = original.size() * sizeof(int);
  cl_int err = CL_SUCCESS;
  Mem buffer(clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                            original.data(), &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Event gate(clCreateUserEvent(context_, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  fail_allocations(1);
  const int pattern = 5;
  cl_event g = gate;
  Event filled, dependent;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueFillBuffer(queue_, buffer, &pattern, sizeof pattern, 0,
                                                     bytes, 1, &g, filled.out())));
  cl_event f = filled;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueMarkerWithWaitList(queue_, 1, &f, dependent.out())));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetUserEventStatus(gate, CL_COMPLETE)));
  clFinish(queue_);
  fail_allocations(0);
  EXPECT_EQ(CL_MEM_OBJECT_ALLOCATION_FAILURE, status_of(filled));
  EXPECT_EQ(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, status_of(dependent));
  std::vector<int> out(original.size(), -1);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueReadBuffer(queue_, buffer, CL_TRUE, 0, bytes, out.data(),
                                                     0, nullptr, nullptr)));
  EXPECT_EQ(original, out);
}

TEST_F(NullCuda, SeveralThreadsLaunchIntoOneQueue) {
  launch(0);
  const Counts before = counts();
  constexpr int kThreads = 4, kEach = 200;
  std::vector<std::thread> threads;
  std::vector<Kernel> kernels;
  for (int t = 0; t < kThreads; ++t) {
    cl_int err = CL_SUCCESS;
    kernels.emplace_back(clCreateKernel(program_, "k", &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  }
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const size_t global = 64;
      for (int i = 0; i < kEach; ++i) {
        clSetKernelArg(kernels[t], 0, sizeof i, &i);
        clEnqueueNDRangeKernel(queue_, kernels[t], 1, nullptr, &global, nullptr, 0, nullptr,
                               nullptr);
      }
    });
  for (auto& t : threads) t.join();
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  const Counts done = since(before);
  EXPECT_EQ(done.kernels + kBatch * done.graphs, uint64_t(kThreads * kEach))
      << "every launch went exactly once";
}

// ---- Images: what a kernel receives for an image and a sampler (compiler/image_abi.h) ----

// The first `count` parameters of one launch of `k` that goes at once (into an idle queue), each
// 8 bytes.
std::vector<uint64_t> parameters_of_launch(cl_command_queue queue, cl_kernel k, int count) {
  using Capture = void (*)(int);
  using Captured = int (*)(uint64_t*, int);
  static auto capture = reinterpret_cast<Capture>(dlsym(null_driver(), "null_cuda_capture_params"));
  static auto captured =
      reinterpret_cast<Captured>(dlsym(null_driver(), "null_cuda_captured_params"));
  EXPECT_EQ(Err(CL_SUCCESS), Err(clFinish(queue)));
  capture(count);
  const size_t global = 1;
  EXPECT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue, k, 1, nullptr, &global, nullptr, 0,
                                                        nullptr, nullptr)));
  EXPECT_EQ(Err(CL_SUCCESS), Err(clFinish(queue)));
  capture(0);
  std::vector<uint64_t> values(static_cast<size_t>(count));
  values.resize(static_cast<size_t>(captured(values.data(), count)));
  return values;
}

// What the simulated GPU's memory holds at `address` (its memory is the process's own).
ManifoldImage descriptor_at(uint64_t address) {
  ManifoldImage d{};
  std::memcpy(&d, reinterpret_cast<const void*>(address), sizeof d);
  return d;
}

Kernel build_kernel(cl_context context, const std::vector<cl_device_id>& devices,
                    const char* source, const char* name, const char* options = "") {
  cl_int err = CL_SUCCESS;
  Program program(clCreateProgramWithSource(context, 1, &source, nullptr, &err));
  EXPECT_EQ(Err(CL_SUCCESS), Err(err));
  EXPECT_EQ(Err(CL_SUCCESS), Err(clBuildProgram(program, cl_uint(devices.size()), devices.data(),
                                                options, nullptr, nullptr)));
  Kernel k(clCreateKernel(program, name, &err));
  EXPECT_EQ(Err(CL_SUCCESS), Err(err));
  return k;
}

// An image argument is the GPU address of its descriptor, made once, whose `data` is the GPU's copy
// of the pixels; a sampler argument is its CLK_* bits.
TEST_F(NullCuda, ImageArgumentsAreDescriptorsInGpuMemory) {
  ASSERT_EQ(deviceInfo<cl_bool>(device_, CL_DEVICE_IMAGE_SUPPORT), cl_bool(CL_TRUE));
  Kernel k = build_kernel(context_, {device_}, R"(
    kernel void r(read_only image2d_t img, sampler_t s, global float4* out) {
      out[0] = read_imagef(img, s, (float2)(0.5f, 0.5f));
    })",
                          "r");
  ASSERT_TRUE(k);
  float pixels[5 * 3 * 4];
  for (size_t i = 0; i < std::size(pixels); ++i) pixels[i] = float(i);
  const cl_image_format format{CL_RGBA, CL_FLOAT};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 5;
  desc.image_height = 3;
  cl_int err = CL_SUCCESS;
  Mem img(clCreateImage(context_, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &format, &desc, pixels,
                        &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const cl_sampler_properties repeat_linear[] = {CL_SAMPLER_NORMALIZED_COORDS,
                                                 CL_TRUE,
                                                 CL_SAMPLER_ADDRESSING_MODE,
                                                 CL_ADDRESS_REPEAT,
                                                 CL_SAMPLER_FILTER_MODE,
                                                 CL_FILTER_LINEAR,
                                                 0};
  Sampler sampler(clCreateSamplerWithProperties(context_, repeat_linear, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Mem out(clCreateBuffer(context_, CL_MEM_READ_WRITE, 16, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  cl_mem m = img;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 0, sizeof m, &m)));
  cl_sampler s = sampler;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 1, sizeof s, &s)));
  m = out;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 2, sizeof m, &m)));
  const std::vector<uint64_t> params = parameters_of_launch(queue_, k, 3);
  ASSERT_EQ(params.size(), 3u);
  ASSERT_NE(params[0], 0u);
  const ManifoldImage d = descriptor_at(params[0]);
  EXPECT_EQ(d.width, 5u);
  EXPECT_EQ(d.height, 3u);
  EXPECT_EQ(d.depth, 1u);
  EXPECT_EQ(d.array_size, 1u);
  EXPECT_EQ(d.image_type, manifold_u32(CL_MEM_OBJECT_IMAGE2D));
  EXPECT_EQ(d.channel_order, manifold_u32(CL_RGBA));
  EXPECT_EQ(d.channel_data_type, manifold_u32(CL_FLOAT));
  EXPECT_EQ(d.element_size, 16u);
  EXPECT_EQ(d.num_channels, 4u);
  EXPECT_EQ(d.row_pitch, 80u);
  ASSERT_NE(d.data, 0u);
  EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(d.data), pixels, sizeof pixels), 0)
      << "the GPU's copy of the pixels is at the descriptor's data";
  // CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR.
  EXPECT_EQ(params[1], 0x1u | 0x6u | 0x20u);
  EXPECT_NE(params[2], 0u);
  EXPECT_EQ(parameters_of_launch(queue_, k, 1), std::vector<uint64_t>{params[0]})
      << "one descriptor per image and GPU";

  // Images made from a buffer: their pixels are the buffer's bytes on the GPU, at its pitch.
  Kernel q = build_kernel(context_, {device_}, R"(
    kernel void q(read_only image1d_buffer_t a, read_only image2d_t b, global uchar* bytes) {
      bytes[0] = (uchar)(read_imageui(a, 0).x + read_imageui(b, (int2)(0, 0)).x);
    })",
                          "q");
  ASSERT_TRUE(q);
  Mem buffer(clCreateBuffer(context_, CL_MEM_READ_WRITE, 4096, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const cl_image_format bytes{CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc one_d{};
  one_d.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
  one_d.image_width = 1000;
  one_d.mem_object = buffer;
  Mem a(clCreateImage(context_, CL_MEM_READ_ONLY, &bytes, &one_d, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  cl_image_desc two_d{};
  two_d.image_type = CL_MEM_OBJECT_IMAGE2D;
  two_d.image_width = 7;
  two_d.image_height = 9;
  two_d.image_row_pitch = 64;
  two_d.mem_object = buffer;
  Mem b(clCreateImage(context_, CL_MEM_READ_ONLY, &bytes, &two_d, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  cl_mem args[] = {a, b, buffer};
  for (cl_uint i = 0; i < 3; ++i)
    ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(q, i, sizeof(cl_mem), &args[i])));
  const std::vector<uint64_t> views = parameters_of_launch(queue_, q, 3);
  ASSERT_EQ(views.size(), 3u);
  const ManifoldImage da = descriptor_at(views[0]), db = descriptor_at(views[1]);
  EXPECT_EQ(da.data, views[2]);
  EXPECT_EQ(da.width, 1000u);
  EXPECT_EQ(da.image_type, manifold_u32(CL_MEM_OBJECT_IMAGE1D_BUFFER));
  EXPECT_EQ(db.data, views[2]);
  EXPECT_EQ(db.row_pitch, 64u);
  EXPECT_EQ(db.height, 9u);
}

// In a context of the CPU and the GPU, an image written on one is read on the other: the pixels
// move into the GPU's memory before its kernel runs (where its descriptor points), and back after
// a kernel that may write them.
TEST_F(NullCuda, ImagesMoveBetweenTheCpuAndTheGpu) {
  cl_device_id cpu = nullptr;
  cl_uint n = 0;
  if (clGetDeviceIDs(findPlatform(), CL_DEVICE_TYPE_CPU, 1, &cpu, &n) != CL_SUCCESS || !cpu)
    GTEST_SKIP() << "no CPU device";
  cl_device_id devices[2] = {cpu, device_};
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(nullptr, 2, devices, nullptr, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Queue on_cpu(clCreateCommandQueueWithProperties(context, cpu, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Queue on_gpu(clCreateCommandQueueWithProperties(context, device_, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const char* source = R"(
    kernel void w(write_only image2d_t img) {
      int2 c = (int2)(get_global_id(0), get_global_id(1));
      write_imageui(img, c, (uint4)(c.x + 100 * c.y, 0, 0, 0));
    }
    kernel void touch(read_write image2d_t img) {
      write_imageui(img, (int2)(0, 0), read_imageui(img, (int2)(0, 0)));
    }
    kernel void r(read_only image2d_t img, global uint* out) {
      int2 c = (int2)(get_global_id(0), get_global_id(1));
      out[c.y * 16 + c.x] = read_imageui(img, c).x;
    })";
  Program program(clCreateProgramWithSource(context, 1, &source, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  ASSERT_EQ(Err(CL_SUCCESS),
            Err(clBuildProgram(program, 2, devices, "-cl-std=CL3.0", nullptr, nullptr)));
  Kernel w(clCreateKernel(program, "w", &err)), touch(clCreateKernel(program, "touch", &err)),
      r(clCreateKernel(program, "r", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const cl_image_format format{CL_R, CL_UNSIGNED_INT32};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 16;
  desc.image_height = 8;
  Mem img(clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Mem out(clCreateBuffer(context, CL_MEM_READ_WRITE, 16 * 8 * 4, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  cl_mem m = img;
  for (cl_kernel k : {w.get(), touch.get(), r.get()})
    ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 0, sizeof m, &m)));
  m = out;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(r, 1, sizeof m, &m)));
  const size_t global[2] = {16, 8};
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(on_cpu, w, 2, nullptr, global, nullptr, 0,
                                                        nullptr, nullptr)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(on_cpu)));
  const std::vector<uint64_t> params = parameters_of_launch(on_gpu, touch, 1);
  ASSERT_EQ(params.size(), 1u);
  const ManifoldImage d = descriptor_at(params[0]);
  ASSERT_NE(d.data, 0u);
  auto* gpu_pixels = reinterpret_cast<uint32_t*>(d.data);
  for (uint32_t y = 0; y < 8; ++y)
    for (uint32_t x = 0; x < 16; ++x)
      ASSERT_EQ(gpu_pixels[y * 16 + x], x + 100 * y) << "the CPU's pixels in the GPU's memory";
  // What the GPU's kernel would have written (the simulated one computes nothing).
  for (uint32_t i = 0; i < 16 * 8; ++i) gpu_pixels[i] += 1000;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(on_cpu, r, 2, nullptr, global, nullptr, 0,
                                                        nullptr, nullptr)));
  std::vector<uint32_t> got(16 * 8);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueReadBuffer(on_cpu, out, CL_TRUE, 0, got.size() * 4,
                                                     got.data(), 0, nullptr, nullptr)));
  for (uint32_t y = 0; y < 8; ++y)
    for (uint32_t x = 0; x < 16; ++x)
      ASSERT_EQ(got[y * 16 + x], x + 100 * y + 1000) << "the GPU's pixels on the CPU";
  std::vector<uint32_t> host(16 * 8);
  const size_t origin[3] = {0, 0, 0}, region[3] = {16, 8, 1};
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueReadImage(on_gpu, img, CL_TRUE, origin, region, 0, 0,
                                                    host.data(), 0, nullptr, nullptr)));
  EXPECT_EQ(host, got);
}

// ---- Command buffers (cl_khr_command_buffer): one CUDA graph per command buffer and device ----

class NullCudaCommandBuffer : public NullCuda {
 protected:
  void SetUp() override {
    NullCuda::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    cl_platform_id platform = findPlatform();
#define LOAD(name) \
  name = reinterpret_cast<name##_t*>(clGetExtensionFunctionAddressForPlatform(platform, #name))
    LOAD(clCreateCommandBufferKHR);
    LOAD(clCommandNDRangeKernelKHR);
    LOAD(clCommandFillBufferKHR);
    LOAD(clFinalizeCommandBufferKHR);
    LOAD(clEnqueueCommandBufferKHR);
    LOAD(clReleaseCommandBufferKHR);
    LOAD(clUpdateMutableCommandsKHR);
#undef LOAD
    ASSERT_NE(clUpdateMutableCommandsKHR, nullptr);
    cl_int err = CL_SUCCESS;
    buffer_.reset(clCreateBuffer(context_, CL_MEM_READ_WRITE, 4096, nullptr, &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  }
  // A mutable command buffer of `kernels` launches of k(v) and a fill with `pattern_size`.
  cl_command_buffer_khr record(int kernels, size_t pattern_size = 4) {
    const cl_command_buffer_properties_khr props[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                                      CL_COMMAND_BUFFER_MUTABLE_KHR, 0};
    cl_command_queue q = queue_.get();
    cl_int err = CL_SUCCESS;
    cl_command_buffer_khr cb = clCreateCommandBufferKHR(1, &q, props, &err);
    EXPECT_EQ(Err(CL_SUCCESS), Err(err));
    const int v = 1;
    EXPECT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(kernel_, 0, sizeof v, &v)));
    const size_t global = 64;
    for (int i = 0; i < kernels; ++i)
      EXPECT_EQ(Err(CL_SUCCESS), Err(clCommandNDRangeKernelKHR(
                                     cb, nullptr, nullptr, kernel_, 1, nullptr, &global, nullptr, 0,
                                     nullptr, nullptr, i == 0 ? &first_ : nullptr)));
    const unsigned char pattern[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    EXPECT_EQ(Err(CL_SUCCESS),
              Err(clCommandFillBufferKHR(cb, nullptr, nullptr, buffer_, pattern, pattern_size, 0,
                                         4096, 0, nullptr, nullptr, nullptr)));
    EXPECT_EQ(Err(CL_SUCCESS), Err(clFinalizeCommandBufferKHR(cb)));
    return cb;
  }
  void enqueue(cl_command_buffer_khr cb, int times) {
    for (int i = 0; i < times; ++i)
      ASSERT_EQ(Err(CL_SUCCESS),
                Err(clEnqueueCommandBufferKHR(0, nullptr, cb, 0, nullptr, nullptr)));
    ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  }

  clCreateCommandBufferKHR_t* clCreateCommandBufferKHR = nullptr;
  clCommandNDRangeKernelKHR_t* clCommandNDRangeKernelKHR = nullptr;
  clCommandFillBufferKHR_t* clCommandFillBufferKHR = nullptr;
  clFinalizeCommandBufferKHR_t* clFinalizeCommandBufferKHR = nullptr;
  clEnqueueCommandBufferKHR_t* clEnqueueCommandBufferKHR = nullptr;
  clReleaseCommandBufferKHR_t* clReleaseCommandBufferKHR = nullptr;
  clUpdateMutableCommandsKHR_t* clUpdateMutableCommandsKHR = nullptr;
  Mem buffer_;
  cl_mutable_command_khr first_ = nullptr;
};

uint64_t graph_instantiations() {
  using Fn = uint64_t (*)();
  static auto fn = reinterpret_cast<Fn>(dlsym(null_driver(), "null_cuda_graph_instantiations"));
  return fn();
}

TEST_F(NullCudaCommandBuffer, EachEnqueueIsOneGraphLaunch) {
  const uint64_t instantiated = graph_instantiations();
  cl_command_buffer_khr cb = record(100);
  EXPECT_EQ(graph_instantiations(), instantiated + 1) << "the graph is made at finalize";
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  const Counts before = counts();
  enqueue(cb, 10);
  EXPECT_EQ(since(before).graphs, 10u);
  EXPECT_EQ(since(before).kernels, 0u);
  // A mutable update changes a kernel node, not the way it goes.
  const int two = 2;
  cl_mutable_dispatch_arg_khr arg{0, sizeof two, &two};
  manifold::khr::MutableDispatchConfig config{};
  config.command = first_;
  config.num_args = 1;
  config.arg_list = &arg;
  const cl_command_buffer_update_type_khr type = CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR;
  const void* configs[] = {&config};
  ASSERT_EQ(Err(CL_SUCCESS), Err(clUpdateMutableCommandsKHR(cb, 1, &type, configs)));
  enqueue(cb, 3);
  EXPECT_EQ(since(before).graphs, 13u);
  EXPECT_EQ(since(before).kernels, 0u);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clReleaseCommandBufferKHR(cb)));
  std::vector<unsigned char> bytes(4096);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueReadBuffer(queue_, buffer_, CL_TRUE, 0, bytes.size(),
                                                     bytes.data(), 0, nullptr, nullptr)));
  EXPECT_EQ(bytes[0], 1);
  EXPECT_EQ(bytes[4095], 4);  // the memset node filled it
}

TEST_F(NullCudaCommandBuffer, WhatNoGraphHoldsGoesOneByOne) {
  // A 16-byte pattern is no memset node: the operations go one by one, every time.
  cl_command_buffer_khr wide = record(5, 16);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  Counts before = counts();
  enqueue(wide, 2);
  EXPECT_EQ(since(before).graphs, 0u);
  EXPECT_GE(since(before).kernels, 10u);  // the launch batch may take some of them
  ASSERT_EQ(Err(CL_SUCCESS), Err(clReleaseCommandBufferKHR(wide)));
  // A driver that cannot instantiate the graph: the same.
  fail_in_driver(0, true);
  cl_command_buffer_khr refused = record(5);
  before = counts();
  enqueue(refused, 2);
  EXPECT_EQ(since(before).graphs, 0u);
  EXPECT_GE(since(before).kernels, 10u);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clReleaseCommandBufferKHR(refused)));
}

}  // namespace
