// One context over several devices with memory of their own: buffers migrate between them as
// commands need (scheduler/migration.h), events order commands across devices, failures
// propagate. Runs on the CPU plus two emulated GPUs (MANIFOLD_EMULATED_GPUS: CPU devices whose
// buffers live in private memory, as a discrete GPU's do), and on real GPUs where present.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <thread>

#include "cl_test.h"

using namespace cltest;

namespace {

// Before the platform is first opened (the tests below run after static initialization).
const bool kEmulated = [] { return setenv("MANIFOLD_EMULATED_GPUS", "2", /*overwrite=*/0) == 0; }();

const char* kSource = R"CLC(
kernel void scale_add(global int* data, int factor, int add) {
  size_t i = get_global_id(0);
  data[i] = data[i] * factor + add;
}
kernel void copy_plus(const global int* in, global int* out, int add) {
  size_t i = get_global_id(0);
  out[i] = in[i] + add;
}
)CLC";

class MultiDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kEmulated);
    std::string why;
    cl_platform_id platform = findPlatform(&why);
    if (!platform) GTEST_SKIP() << why;
    cl_uint n = 0;
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
    devices_.resize(n);
    ASSERT_CL(CL_SUCCESS,
              clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devices_.data(), nullptr));
    if (devices_.size() < 3) GTEST_SKIP() << "needs three devices";
    // The CPU first, then real GPUs before emulated ones: queues 1 and 2 are the first two GPUs.
    auto rank = [](cl_device_id d) {
      if (isCpuDevice(d)) return 0;
      return deviceString(d, CL_DEVICE_NAME).find("emulated GPU") == std::string::npos ? 1 : 2;
    };
    std::stable_sort(devices_.begin(), devices_.end(),
                     [&](cl_device_id a, cl_device_id b) { return rank(a) < rank(b); });
    if (::testing::UnitTest::GetInstance()->current_test_info()->name() ==
        std::string("ChainAcrossEveryDeviceSeesEachWrite"))
      for (cl_device_id d : devices_)
        std::printf("device: %s\n", deviceString(d, CL_DEVICE_NAME).c_str());
    cl_int err = -1;
    context_ = Context(clCreateContext(nullptr, n, devices_.data(), nullptr, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    for (cl_device_id d : devices_) {
      queues_.emplace_back(clCreateCommandQueueWithProperties(context_, d, nullptr, &err));
      ASSERT_ERR(CL_SUCCESS, err);
    }
    program_ = Program(clCreateProgramWithSource(context_, 1, &kSource, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    ASSERT_CL(CL_SUCCESS, clBuildProgram(program_, 0, nullptr, nullptr, nullptr, nullptr));
  }

  // Tests that check what kernels computed skip where a device is the simulated CUDA driver.
  bool aDeviceComputesNothing() const {
    return std::any_of(devices_.begin(), devices_.end(), kernelsComputeNothing);
  }

  Kernel kernel(const char* name) {
    cl_int err = -1;
    Kernel k(clCreateKernel(program_, name, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    return k;
  }
  Mem buffer(size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE, void* host = nullptr) {
    cl_int err = -1;
    Mem m(clCreateBuffer(context_, flags, bytes, host, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    return m;
  }
  // data[i] = data[i] * factor + add on queue q over `n` ints of `m`.
  Event scale_add(size_t q, cl_mem m, int factor, int add, size_t n,
                  std::vector<cl_event> wait = {}) {
    Kernel k = kernel("scale_add");
    clSetKernelArg(k, 0, sizeof(cl_mem), &m);
    clSetKernelArg(k, 1, sizeof(int), &factor);
    clSetKernelArg(k, 2, sizeof(int), &add);
    Event e;
    EXPECT_CL_OK(clEnqueueNDRangeKernel(queues_[q], k, 1, nullptr, &n, nullptr,
                                        cl_uint(wait.size()), wait.empty() ? nullptr : wait.data(),
                                        e.out()));
    return e;
  }
  std::vector<int> read(size_t q, cl_mem m, size_t n, std::vector<cl_event> wait = {}) {
    std::vector<int> out(n, -1);
    EXPECT_CL_OK(clEnqueueReadBuffer(queues_[q], m, CL_TRUE, 0, n * sizeof(int), out.data(),
                                     cl_uint(wait.size()), wait.empty() ? nullptr : wait.data(),
                                     nullptr));
    return out;
  }

  std::vector<cl_device_id> devices_;
  Context context_;
  std::vector<Queue> queues_;
  Program program_;
};

std::vector<int> iota(size_t n, int start = 0) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST_F(MultiDevice, ChainAcrossEveryDeviceSeesEachWrite) {
  if (aDeviceComputesNothing()) GTEST_SKIP() << "the simulated CUDA driver runs no kernel code";
  const size_t n = 4096;
  std::vector<int> host = iota(n);
  Mem m = buffer(n * sizeof(int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.data());
  // Each device in turn: x -> 2x + q, each waiting for the previous device's kernel.
  Event previous;
  for (size_t q = 0; q < queues_.size(); ++q) {
    std::vector<cl_event> wait;
    if (previous) wait.push_back(previous);
    previous = scale_add(q, m, 2, int(q), n, wait);
    for (int& v : host) v = v * 2 + int(q);
  }
  for (size_t q = 0; q < queues_.size(); ++q)
    EXPECT_EQ(host, read(q, m, n, {previous})) << "read on device " << q;
}

TEST_F(MultiDevice, WriteOnOneDeviceReadOnAnother) {
  const size_t n = 1000;
  Mem m = buffer(n * sizeof(int));
  std::vector<int> data = iota(n, 7);
  for (size_t w = 0; w < queues_.size(); ++w)
    for (size_t r = 0; r < queues_.size(); ++r) {
      for (int& v : data) v += 1;
      ASSERT_CL(CL_SUCCESS, clEnqueueWriteBuffer(queues_[w], m, CL_TRUE, 0, n * sizeof(int),
                                                 data.data(), 0, nullptr, nullptr));
      ASSERT_EQ(data, read(r, m, n)) << "written on " << w << ", read on " << r;
    }
}

TEST_F(MultiDevice, SubBuffersWrittenOnTwoDevicesAtOnce) {
  if (aDeviceComputesNothing()) GTEST_SKIP() << "the simulated CUDA driver runs no kernel code";
  const size_t n = 2048, half = n / 2;
  std::vector<int> host = iota(n);
  Mem m = buffer(n * sizeof(int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.data());
  cl_buffer_region regions[2] = {{0, half * sizeof(int)}, {half * sizeof(int), half * sizeof(int)}};
  Mem parts[2];
  for (int i = 0; i < 2; ++i) {
    cl_int err = -1;
    parts[i] = Mem(clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &regions[i], &err));
    ASSERT_ERR(CL_SUCCESS, err);
  }
  // The halves go to the two GPUs with no order between them; neither may undo the other.
  Event a = scale_add(1, parts[0], 3, 1, half);
  Event b = scale_add(2, parts[1], 5, 2, half);
  for (size_t i = 0; i < n; ++i) host[i] = i < half ? host[i] * 3 + 1 : host[i] * 5 + 2;
  EXPECT_EQ(host, read(0, m, n, {a, b}));
}

TEST_F(MultiDevice, ReadOnlyArgumentsAndCopies) {
  if (aDeviceComputesNothing()) GTEST_SKIP() << "the simulated CUDA driver runs no kernel code";
  const size_t n = 512;
  std::vector<int> host = iota(n, 100);
  Mem in = buffer(n * sizeof(int), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, host.data());
  Mem out = buffer(n * sizeof(int));
  Mem copy = buffer(n * sizeof(int));
  Kernel k = kernel("copy_plus");
  int add = 5;
  cl_mem in_handle = in, out_handle = out;
  clSetKernelArg(k, 0, sizeof(cl_mem), &in_handle);
  clSetKernelArg(k, 1, sizeof(cl_mem), &out_handle);
  clSetKernelArg(k, 2, sizeof(int), &add);
  Event e1, e2, e3;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(queues_[1], k, 1, nullptr, &n, nullptr, 0, nullptr, e1.out()));
  // A device-side copy on the other GPU, then a fill of part of the source on the CPU.
  cl_event w1[] = {e1};
  ASSERT_CL(CL_SUCCESS,
            clEnqueueCopyBuffer(queues_[2], out, copy, 0, 0, n * sizeof(int), 1, w1, e2.out()));
  int pattern = -3;
  cl_event w2[] = {e2};
  ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(queues_[0], copy, &pattern, sizeof(int), 0,
                                            16 * sizeof(int), 1, w2, e3.out()));
  std::vector<int> expected(n);
  for (size_t i = 0; i < n; ++i) expected[i] = i < 16 ? -3 : host[i] + 5;
  EXPECT_EQ(expected, read(1, copy, n, {e3}));
  EXPECT_EQ(host, read(2, in, n));
}

TEST_F(MultiDevice, MapOnOneDeviceKernelOnAnother) {
  const size_t n = 256;
  Mem m = buffer(n * sizeof(int));
  ASSERT_CL(CL_SUCCESS, clFinish(queues_[1]));
  std::vector<int> zeros(n, 0);
  ASSERT_CL(CL_SUCCESS, clEnqueueWriteBuffer(queues_[1], m, CL_TRUE, 0, n * sizeof(int),
                                             zeros.data(), 0, nullptr, nullptr));
  cl_int err = -1;
  auto* p =
      static_cast<int*>(clEnqueueMapBuffer(queues_[1], m, CL_TRUE, CL_MAP_WRITE, 64 * sizeof(int),
                                           64 * sizeof(int), 0, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  for (int i = 0; i < 64; ++i) p[i] = 1000 + i;
  Event u;
  ASSERT_CL(CL_SUCCESS, clEnqueueUnmapMemObject(queues_[1], m, p, 0, nullptr, u.out()));
  Event k = scale_add(2, m, 1, 1, n, {u});
  std::vector<int> expected(n, 1);
  for (int i = 0; i < 64; ++i) expected[64 + i] = 1000 + i + 1;
  EXPECT_EQ(expected, read(0, m, n, {k}));
  // A mapping for reading on a GPU queue sees what the other GPU wrote.
  cl_event after_kernel = k;
  p = static_cast<int*>(clEnqueueMapBuffer(queues_[1], m, CL_TRUE, CL_MAP_READ, 0, n * sizeof(int),
                                           1, &after_kernel, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(expected, std::vector<int>(p, p + n));
  ASSERT_CL(CL_SUCCESS, clEnqueueUnmapMemObject(queues_[1], m, p, 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clFinish(queues_[1]));
}

TEST_F(MultiDevice, MigrateAheadOfTime) {
  const size_t n = 1024;
  std::vector<int> host = iota(n, 3);
  Mem m = buffer(n * sizeof(int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.data());
  cl_mem mems[] = {m};
  Event migrated;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueMigrateMemObjects(queues_[2], 1, mems, 0, 0, nullptr, migrated.out()));
  Event k = scale_add(2, m, 1, 10, n, {migrated});
  Event to_host;
  cl_event w[] = {k};
  ASSERT_CL(CL_SUCCESS, clEnqueueMigrateMemObjects(queues_[1], 1, mems, CL_MIGRATE_MEM_OBJECT_HOST,
                                                   1, w, to_host.out()));
  for (int& v : host) v += 10;
  EXPECT_EQ(host, read(0, m, n, {to_host}));
  // CONTENT_UNDEFINED: the old bytes need not move; a full overwrite follows.
  Event undefined;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueMigrateMemObjects(queues_[1], 1, mems, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED,
                                       0, nullptr, undefined.out()));
  int pattern = 42;
  cl_event after_migration = undefined;
  ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(queues_[1], m, &pattern, sizeof(int), 0,
                                            n * sizeof(int), 1, &after_migration, nullptr));
  ASSERT_CL(CL_SUCCESS, clFinish(queues_[1]));
  EXPECT_EQ(std::vector<int>(n, 42), read(2, m, n));
}

// A USE_HOST_PTR region shows what a GPU wrote once it is mapped (the spec's way); a release
// writes nothing into it (applications, the Khronos CTS among them, free it first).
TEST_F(MultiDevice, UseHostPtrRegionIsCurrentAfterAMapAndUntouchedByRelease) {
  if (aDeviceComputesNothing()) GTEST_SKIP() << "the simulated CUDA driver runs no kernel code";
  const size_t n = 128;
  std::vector<int> host = iota(n);
  {
    Mem m = buffer(n * sizeof(int), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, host.data());
    const size_t last = queues_.size() - 1;  // a GPU (emulated or real)
    Event e = scale_add(last, m, 2, 0, n);
    cl_event done = e;
    cl_int err = -1;
    void* p = clEnqueueMapBuffer(queues_[last], m, CL_TRUE, CL_MAP_READ, 0, n * sizeof(int), 1,
                                 &done, nullptr, &err);
    ASSERT_ERR(CL_SUCCESS, err);
    EXPECT_EQ(static_cast<void*>(host.data()), p);
    std::vector<int> expected = iota(n);
    for (int& v : expected) v *= 2;
    EXPECT_EQ(expected, host);
    ASSERT_CL(CL_SUCCESS, clEnqueueUnmapMemObject(queues_[last], m, p, 0, nullptr, nullptr));
    // Written on the GPU again, not mapped: the application's region is reused meanwhile.
    Event again = scale_add(last, m, 3, 0, n);
    cl_event done_again = again;
    ASSERT_CL(CL_SUCCESS, clWaitForEvents(1, &done_again));
    std::fill(host.begin(), host.end(), -5);
  }
  EXPECT_EQ(std::vector<int>(n, -5), host);
}

TEST_F(MultiDevice, FailedUserEventFailsDependentsOnEveryDevice) {
  cl_int err = -1;
  Event gate(clCreateUserEvent(context_, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const size_t n = 64;
  Mem m = buffer(n * sizeof(int));
  std::vector<Event> first, second;
  for (size_t q = 0; q < queues_.size(); ++q) first.push_back(scale_add(q, m, 1, 1, n, {gate}));
  // An in-order successor that does not list the failed event still runs.
  for (size_t q = 0; q < queues_.size(); ++q) {
    Event e;
    ASSERT_CL(CL_SUCCESS, clEnqueueMarkerWithWaitList(queues_[q], 0, nullptr, e.out()));
    second.push_back(std::move(e));
  }
  // A command on another device listing a failed command fails too.
  Event chained = scale_add(1, m, 1, 1, n, {first[0]});
  ASSERT_CL(CL_SUCCESS, clSetUserEventStatus(gate, -1234));
  for (size_t q = 0; q < queues_.size(); ++q) {
    ASSERT_CL(CL_SUCCESS, clFinish(queues_[q]));
    EXPECT_STATUS(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, eventStatus(first[q]));
  }
  EXPECT_STATUS(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, eventStatus(chained));
  cl_event all[] = {first[0], first[1], first[2]};
  EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, clWaitForEvents(3, all));
}

TEST_F(MultiDevice, ManyThreadsPingPongBuffersBetweenDevices) {
  if (aDeviceComputesNothing()) GTEST_SKIP() << "the simulated CUDA driver runs no kernel code";
  // Each thread owns a buffer and moves it round the devices; threads share the devices.
  const size_t n = 256;
  const int rounds = 30;
  std::vector<std::thread> threads;
  std::vector<std::vector<int>> results(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<int> host = iota(n, t);
      Mem m = buffer(n * sizeof(int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.data());
      Event previous;
      for (int r = 0; r < rounds; ++r) {
        std::vector<cl_event> wait;
        if (previous) wait.push_back(previous);
        previous = scale_add(size_t(r + t) % queues_.size(), m, 1, 1, n, wait);
      }
      results[t] = read(0, m, n, {previous});
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(iota(n, t + rounds), results[t]) << "thread " << t;
}

// Images are bytes like buffers: writes, fills, copies and maps on one device are seen on the
// others (only devices that support images take part: the CPU and the emulated GPUs).
TEST_F(MultiDevice, ImageCommandsMoveImageBytesBetweenDevices) {
  std::vector<size_t> qs;
  for (size_t q = 0; q < devices_.size(); ++q)
    if (deviceInfo<cl_bool>(devices_[q], CL_DEVICE_IMAGE_SUPPORT)) qs.push_back(q);
  if (qs.size() < 2) GTEST_SKIP() << "needs two devices with images";
  const cl_image_format fmt{CL_R, CL_UNSIGNED_INT32};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 32;
  desc.image_height = 16;
  cl_int err = -1;
  Mem img(clCreateImage(context_, CL_MEM_READ_WRITE, &fmt, &desc, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem buf = buffer(32 * 16 * 4);
  std::vector<cl_uint> want(32 * 16);
  std::iota(want.begin(), want.end(), 5u);
  const size_t o[3] = {0, 0, 0}, full[3] = {32, 16, 1};
  for (size_t a : qs)
    for (size_t b : qs) {
      if (a == b) continue;
      SCOPED_TRACE(testing::Message() << "devices " << a << " -> " << b);
      for (cl_uint& v : want) v += 3;
      ASSERT_CL(CL_SUCCESS, clEnqueueWriteImage(queues_[a], img, CL_TRUE, o, full, 0, 0,
                                                want.data(), 0, nullptr, nullptr));
      // A fill of a block on device b, then the whole image read on device a.
      const cl_uint color[4] = {0xABCD, 0, 0, 0};
      const size_t fo[3] = {4, 2, 0}, fr[3] = {8, 3, 1};
      ASSERT_CL(CL_SUCCESS,
                clEnqueueFillImage(queues_[b], img, color, fo, fr, 0, nullptr, nullptr));
      ASSERT_CL(CL_SUCCESS, clFinish(queues_[b]));
      for (size_t y = 2; y < 5; ++y)
        for (size_t x = 4; x < 12; ++x) want[y * 32 + x] = 0xABCD;
      std::vector<cl_uint> got(want.size());
      ASSERT_CL(CL_SUCCESS, clEnqueueReadImage(queues_[a], img, CL_TRUE, o, full, 0, 0, got.data(),
                                               0, nullptr, nullptr));
      ASSERT_EQ(want, got);
      // Image -> buffer on device b, buffer read on device a.
      ASSERT_CL(CL_SUCCESS,
                clEnqueueCopyImageToBuffer(queues_[b], img, buf, o, full, 0, 0, nullptr, nullptr));
      ASSERT_CL(CL_SUCCESS, clFinish(queues_[b]));
      std::vector<cl_uint> via(want.size());
      ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queues_[a], buf, CL_TRUE, 0, via.size() * 4,
                                                via.data(), 0, nullptr, nullptr));
      ASSERT_EQ(want, via);
      // A map for writing on device b: the bytes are current on device a afterwards.
      size_t rp = 0;
      const size_t mo[3] = {0, 7, 0}, mr[3] = {32, 1, 1};
      auto* p = static_cast<cl_uint*>(clEnqueueMapImage(
          queues_[b], img, CL_TRUE, CL_MAP_WRITE, mo, mr, &rp, nullptr, 0, nullptr, nullptr, &err));
      ASSERT_ERR(CL_SUCCESS, err);
      for (size_t x = 0; x < 32; ++x) p[x] = want[7 * 32 + x] = cl_uint(x * 11);
      ASSERT_CL(CL_SUCCESS, clEnqueueUnmapMemObject(queues_[b], img, p, 0, nullptr, nullptr));
      ASSERT_CL(CL_SUCCESS, clFinish(queues_[b]));
      ASSERT_CL(CL_SUCCESS, clEnqueueReadImage(queues_[a], img, CL_TRUE, o, full, 0, 0, got.data(),
                                               0, nullptr, nullptr));
      ASSERT_EQ(want, got);
    }
}

}  // namespace
