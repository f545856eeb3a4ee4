// Device groups (cl_mfld_device_group): groups the application makes of the CPU's halves (one
// memory) and of two emulated GPUs (memories of their own, so that parts run only where the
// compiler proved their writes), compared element by element with the host.
#include <numeric>

#include "group_fixture.h"

using namespace group_test;

namespace {

const char* kSource = R"CLC(
kernel void add(global const float* a, global const float* b, global float* out, int n) {
  int i = get_global_id(0);
  if (i < n) out[i] = a[i] + b[i];
}
kernel void rows(global int* out, int width) {
  int x = get_global_id(0), y = get_global_id(1);
  out[y * width + x] = y * 1000 + x;
}
kernel void cube(global int* out) {
  size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  size_t w = get_global_size(0), h = get_global_size(1);
  out[(z * h + y) * w + x] = (int)(z * 10000 + y * 100 + x);
}
kernel void blur(global const float* in, global float* out, int n) {
  int i = get_global_id(0);
  float left = i > 0 ? in[i - 1] : in[i];
  float right = i + 1 < n ? in[i + 1] : in[i];
  if (i < n) out[i] = (left + in[i] + right) / 3.0f;
}
kernel void two_outputs(global const float* in, global float* out, int n) {
  int i = get_global_id(0);
  out[i] = in[i] * 2.0f;
  out[i + n] = in[i] + 1.0f;
}
kernel void histogram(global const int* in, global int* bins) {
  atomic_add(&bins[in[get_global_id(0)] & 15], 1);
}
kernel void scatter(global const int* index, global int* out) {
  int i = get_global_id(0);
  out[index[i]] = i;
}
kernel void local_sum(global const int* in, global int* out, local int* scratch) {
  size_t l = get_local_id(0);
  scratch[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) {
    int s = 0;
    for (size_t k = 0; k < get_local_size(0); ++k) s += scratch[k];
    out[get_group_id(0)] = s;
  }
}
)CLC";

cl_int set_mem(cl_kernel kernel, cl_uint index, cl_mem mem) {
  return clSetKernelArg(kernel, index, sizeof mem, &mem);
}

cl_command_queue make_queue(cl_context context, cl_device_id device,
                            cl_command_queue_properties props, cl_int* err) {
  const cl_queue_properties list[] = {CL_QUEUE_PROPERTIES, props, 0};
  return clCreateCommandQueueWithProperties(context, device, list, err);
}

class DeviceGroups : public GroupFixture {
 protected:
  // A group of `members`; `shares` fixed (empty: learned).
  cl_device_id make_group(std::vector<cl_device_id> members, std::vector<cl_float> shares = {}) {
    cl_device_group_properties_mfld props[3] = {CL_DEVICE_GROUP_SHARES_MFLD,
                                                cl_device_group_properties_mfld(shares.data()), 0};
    cl_int err = -1;
    cl_device_id group = create_(platform_, shares.empty() ? nullptr : props,
                                 cl_uint(members.size()), members.data(), &err);
    EXPECT_ERR(CL_SUCCESS, err);
    return group;
  }
  struct Session {
    Context context;
    Queue queue;
    Program program;
  };
  Session open(cl_device_id device, cl_command_queue_properties props = 0) {
    Session s;
    cl_int err = -1;
    s.context = Context(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    s.queue = Queue(make_queue(s.context, device, props, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    s.program = Program(clCreateProgramWithSource(s.context, 1, &kSource, nullptr, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    EXPECT_CL(CL_SUCCESS, clBuildProgram(s.program, 1, &device, "", nullptr, nullptr));
    return s;
  }
  static std::vector<cl_float> split_of(cl_kernel kernel, cl_device_id group) {
    size_t size = 0;
    EXPECT_CL(CL_SUCCESS, clGetKernelWorkGroupInfo(kernel, group, CL_KERNEL_GROUP_SPLIT_MFLD, 0,
                                                   nullptr, &size));
    std::vector<cl_float> split(size / sizeof(cl_float));
    EXPECT_CL(CL_SUCCESS, clGetKernelWorkGroupInfo(kernel, group, CL_KERNEL_GROUP_SPLIT_MFLD, size,
                                                   split.data(), nullptr));
    return split;
  }
  static size_t members_with_work(const std::vector<cl_float>& split) {
    return size_t(std::count_if(split.begin(), split.end(), [](cl_float f) { return f > 0; }));
  }

  // Runs `rows` over a w x h grid with local size lx x ly; checks every element.
  void check_rows(cl_device_id group, size_t w, size_t h, size_t lx, size_t ly,
                  size_t expected_members) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    Session s = open(group);
    cl_int err = -1;
    Kernel k(clCreateKernel(s.program, "rows", &err));
    ASSERT_ERR(CL_SUCCESS, err);
    std::vector<int> out(w * h, -1);
    Mem buf(clCreateBuffer(s.context, CL_MEM_COPY_HOST_PTR, out.size() * 4, out.data(), &err));
    const int width = int(w);
    ASSERT_CL(CL_SUCCESS, set_mem(k, 0, buf));
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof width, &width));
    const size_t global[2] = {w, h}, local[2] = {lx, ly};
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(s.queue, k, 2, nullptr, global, local, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(s.queue, buf, CL_TRUE, 0, out.size() * 4, out.data(),
                                              0, nullptr, nullptr));
    for (size_t y = 0; y < h; ++y)
      for (size_t x = 0; x < w; ++x)
        ASSERT_EQ(out[y * w + x], int(y * 1000 + x)) << "at " << x << "," << y;
    EXPECT_EQ(members_with_work(split_of(k, group)), expected_members);
  }
};

TEST_F(DeviceGroups, ReportsMembersNameAndCommonLimits) {
  if (emulated_.size() < 2) GTEST_SKIP() << "needs two emulated GPUs";
  cl_device_id group = make_group({emulated_[0], emulated_[1], cpu_});
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(deviceString(group, CL_DEVICE_NAME).rfind("Manifold group", 0), 0u);
  EXPECT_EQ(deviceInfo<cl_device_type>(group, CL_DEVICE_TYPE), cl_device_type(CL_DEVICE_TYPE_GPU));
  size_t size = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(group, CL_DEVICE_GROUP_MEMBERS_MFLD, 0, nullptr, &size));
  ASSERT_EQ(size, 3 * sizeof(cl_device_id));
  std::vector<cl_device_id> members(3);
  ASSERT_CL(CL_SUCCESS,
            clGetDeviceInfo(group, CL_DEVICE_GROUP_MEMBERS_MFLD, size, members.data(), nullptr));
  EXPECT_EQ(members[2], cpu_);
  for (cl_device_id m : members)
    EXPECT_LE(deviceInfo<size_t>(group, CL_DEVICE_MAX_WORK_GROUP_SIZE),
              deviceInfo<size_t>(m, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  EXPECT_TRUE(hasWord(platformString(platform_, CL_PLATFORM_EXTENSIONS), "cl_mfld_device_group"));
  EXPECT_CL(CL_SUCCESS, clGetDeviceInfo(cpu_, CL_DEVICE_GROUP_MEMBERS_MFLD, 0, nullptr, &size));
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(deviceInfo<cl_uint>(group, CL_DEVICE_REFERENCE_COUNT), 1u);
  EXPECT_CL(CL_SUCCESS, clRetainDevice(group));
  EXPECT_EQ(deviceInfo<cl_uint>(group, CL_DEVICE_REFERENCE_COUNT), 2u);
  EXPECT_CL(CL_SUCCESS, clReleaseDevice(group));
  EXPECT_CL(CL_SUCCESS, clReleaseDevice(group));
}

TEST_F(DeviceGroups, RejectsBadRequests) {
  cl_int err = 0;
  EXPECT_EQ(create_(platform_, nullptr, 0, nullptr, &err), nullptr);
  EXPECT_ERR(CL_INVALID_VALUE, err);
  cl_device_id twice[2] = {cpu_, cpu_};
  EXPECT_EQ(create_(platform_, nullptr, 2, twice, &err), nullptr);
  EXPECT_ERR(CL_INVALID_DEVICE, err);
  cl_device_id bogus[1] = {reinterpret_cast<cl_device_id>(platform_)};
  EXPECT_EQ(create_(platform_, nullptr, 1, bogus, &err), nullptr);
  EXPECT_ERR(CL_INVALID_DEVICE, err);
  cl_device_id group = make_group({cpu_});
  cl_device_id nested[1] = {group};
  EXPECT_EQ(create_(platform_, nullptr, 1, nested, &err), nullptr);
  EXPECT_ERR(CL_INVALID_DEVICE, err);
  const cl_device_group_properties_mfld unknown[] = {0x7777, 1, 0};
  EXPECT_EQ(create_(platform_, unknown, 1, &cpu_, &err), nullptr);
  EXPECT_ERR(CL_INVALID_VALUE, err);
  const cl_float negative[1] = {-1.0f};
  const cl_device_group_properties_mfld bad_share[] = {
      CL_DEVICE_GROUP_SHARES_MFLD, cl_device_group_properties_mfld(negative), 0};
  EXPECT_EQ(create_(platform_, bad_share, 1, &cpu_, &err), nullptr);
  EXPECT_ERR(CL_INVALID_VALUE, err);
  size_t size = 0;
  Session s = open(cpu_);
  Kernel k(clCreateKernel(s.program, "add", &err));
  EXPECT_CL(CL_INVALID_VALUE,
            clGetKernelWorkGroupInfo(k, cpu_, CL_KERNEL_GROUP_SPLIT_MFLD, 0, nullptr, &size));
  EXPECT_CL(CL_SUCCESS, clReleaseDevice(group));
}

TEST_F(DeviceGroups, CpuHalvesSplitEveryShapeEvenWhereSizesDoNotDivide) {
  std::vector<cl_device_id> halves = cpu_halves();
  if (halves.size() < 2) GTEST_SKIP() << "needs a CPU of two cores or more";
  cl_device_id group = make_group(halves, {1.0f, 1.0f});
  check_rows(group, 64, 64, 8, 8, 2);
  check_rows(group, 37, 29, 1, 1, 2);  // every row its own group, an odd count
  check_rows(group, 16, 1, 4, 1, 2);   // one row: the columns' groups split
  for (cl_device_id h : halves) clReleaseDevice(h);
  clReleaseDevice(group);
}

TEST_F(DeviceGroups, EmulatedGpusSplitByProvenWritesIn1d2dAnd3d) {
  if (emulated_.size() < 2) GTEST_SKIP() << "needs two emulated GPUs";
  cl_device_id group = make_group({emulated_[0], emulated_[1]}, {1.0f, 3.0f});
  check_rows(group, 64, 64, 8, 8, 2);
  check_rows(group, 37, 29, 1, 1, 2);
  Session s = open(group);
  cl_int err = -1;
  Kernel k(clCreateKernel(s.program, "cube", &err));
  const size_t global[3] = {6, 5, 7}, local[3] = {2, 1, 1};
  std::vector<int> out(6 * 5 * 7, -1);
  Mem buf(clCreateBuffer(s.context, CL_MEM_COPY_HOST_PTR, out.size() * 4, out.data(), &err));
  ASSERT_CL(CL_SUCCESS, set_mem(k, 0, buf));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(s.queue, k, 3, nullptr, global, local, 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(s.queue, buf, CL_TRUE, 0, out.size() * 4, out.data(), 0,
                                            nullptr, nullptr));
  for (size_t z = 0; z < 7; ++z)
    for (size_t y = 0; y < 5; ++y)
      for (size_t x = 0; x < 6; ++x)
        ASSERT_EQ(out[(z * 5 + y) * 6 + x], int(z * 10000 + y * 100 + x));
  EXPECT_EQ(members_with_work(split_of(k, group)), 2u);
  clReleaseDevice(group);
}

// A stencil iterated with two buffers: each part reads its neighbour's edge (a halo) that the
// other member wrote in the previous step.
TEST_F(DeviceGroups, IteratedStencilReadsTheOtherMembersHalo) {
  if (emulated_.size() < 2) GTEST_SKIP() << "needs two emulated GPUs";
  cl_device_id group = make_group({emulated_[0], emulated_[1]}, {1.0f, 1.0f});
  Session s = open(group);
  cl_int err = -1;
  Kernel k(clCreateKernel(s.program, "blur", &err));
  const int n = 1000;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = float((i * 37) % 101);
  Mem a(clCreateBuffer(s.context, CL_MEM_COPY_HOST_PTR, n * 4, host.data(), &err));
  Mem b(clCreateBuffer(s.context, 0, n * 4, nullptr, &err));
  const size_t global = 1024, local = 64;
  for (int step = 0; step < 6; ++step) {
    cl_mem in = step % 2 ? b.get() : a.get(), out = step % 2 ? a.get() : b.get();
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 0, sizeof(cl_mem), &in));
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof(cl_mem), &out));
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 2, sizeof n, &n));
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    std::vector<float> next(n);
    for (int i = 0; i < n; ++i) {
      const float left = i > 0 ? host[i - 1] : host[i], right = i + 1 < n ? host[i + 1] : host[i];
      next[i] = (left + host[i] + right) / 3.0f;
    }
    host = next;
  }
  std::vector<float> got(n);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(s.queue, a, CL_TRUE, 0, n * 4, got.data(), 0, nullptr, nullptr));
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    if (got[i] != host[i] && wrong++ < 8)
      ADD_FAILURE() << "at " << i << ": " << got[i] << " vs " << host[i];
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(members_with_work(split_of(k, group)), 2u);
  clReleaseDevice(group);
}

// A kernel writing two strided outputs: each part's writes are two pieces, disjoint from the
// other part's though their spans interleave.
TEST_F(DeviceGroups, StridedOutputsSplitByPieces) {
  if (emulated_.size() < 2) GTEST_SKIP() << "needs two emulated GPUs";
  cl_device_id group = make_group({emulated_[0], emulated_[1]}, {1.0f, 1.0f});
  Session s = open(group);
  cl_int err = -1;
  Kernel k(clCreateKernel(s.program, "two_outputs", &err));
  const int n = 2048;
  std::vector<float> in(n), out(2 * n, -1.0f);
  for (int i = 0; i < n; ++i) in[i] = float(i);
  Mem mi(clCreateBuffer(s.context, CL_MEM_COPY_HOST_PTR, n * 4, in.data(), &err));
  Mem mo(clCreateBuffer(s.context, CL_MEM_COPY_HOST_PTR, 2 * n * 4, out.data(), &err));
  ASSERT_CL(CL_SUCCESS, set_mem(k, 0, mi));
  ASSERT_CL(CL_SUCCESS, set_mem(k, 1, mo));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 2, sizeof n, &n));
  const size_t global = n, local = 64;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(s.queue, mo, CL_TRUE, 0, 2 * n * 4, out.data(), 0,
                                            nullptr, nullptr));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], 2.0f * float(i)) << "at " << i;
    ASSERT_EQ(out[i + n], float(i) + 1.0f) << "at " << i + n;
  }
  EXPECT_EQ(members_with_work(split_of(k, group)), 2u);
  clReleaseDevice(group);
}

// Global atomics and data-dependent writes keep a kernel whole on one member of different
// memories; its result is still right. Local memory and barriers never stop a split.
TEST_F(DeviceGroups, UnprovableKernelsRunWholeAndLocalMemoryDoesNotStopASplit) {
  if (emulated_.size() < 2) GTEST_SKIP() << "needs two emulated GPUs";
  cl_device_id group = make_group({emulated_[0], emulated_[1]}, {1.0f, 1.0f});
  Session s = open(group);
  cl_int err = -1;
  const int n = 4096;
  std::vector<int> in(n), index(n);
  for (int i = 0; i < n; ++i) {
    in[i] = i * 7;
    index[i] = (i * 1237) % n;  // a permutation
  }
  Mem input(clCreateBuffer(s.context, CL_MEM_COPY_HOST_PTR, n * 4, in.data(), &err));
  Mem indices(clCreateBuffer(s.context, CL_MEM_COPY_HOST_PTR, n * 4, index.data(), &err));
  std::vector<int> zero(n, 0);
  Mem out(clCreateBuffer(s.context, CL_MEM_COPY_HOST_PTR, n * 4, zero.data(), &err));
  const size_t global = n, local = 64;

  Kernel histogram(clCreateKernel(s.program, "histogram", &err));
  ASSERT_CL(CL_SUCCESS, set_mem(histogram, 0, input));
  ASSERT_CL(CL_SUCCESS, set_mem(histogram, 1, out));
  ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(s.queue, histogram, 1, nullptr, &global, &local, 0,
                                               nullptr, nullptr));
  std::vector<int> bins(16);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(s.queue, out, CL_TRUE, 0, 64, bins.data(), 0, nullptr, nullptr));
  std::vector<int> expected(16, 0);
  for (int v : in) ++expected[v & 15];
  EXPECT_EQ(bins, expected);
  EXPECT_EQ(members_with_work(split_of(histogram, group)), 1u);

  Kernel scatter(clCreateKernel(s.program, "scatter", &err));
  ASSERT_CL(CL_SUCCESS, set_mem(scatter, 0, indices));
  ASSERT_CL(CL_SUCCESS, set_mem(scatter, 1, out));
  ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(s.queue, scatter, 1, nullptr, &global, &local, 0,
                                               nullptr, nullptr));
  std::vector<int> got(n);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(s.queue, out, CL_TRUE, 0, n * 4, got.data(), 0, nullptr, nullptr));
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[index[i]], i);
  EXPECT_EQ(members_with_work(split_of(scatter, group)), 1u);

  Kernel sum(clCreateKernel(s.program, "local_sum", &err));
  ASSERT_CL(CL_SUCCESS, set_mem(sum, 0, input));
  ASSERT_CL(CL_SUCCESS, set_mem(sum, 1, out));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(sum, 2, local * 4, nullptr));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(s.queue, sum, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(s.queue, out, CL_TRUE, 0, n * 4, got.data(), 0, nullptr, nullptr));
  for (int g = 0; g < n / 64; ++g) {
    int s_expected = 0;
    for (int l = 0; l < 64; ++l) s_expected += in[g * 64 + l];
    ASSERT_EQ(got[g], s_expected) << "group " << g;
  }
  EXPECT_EQ(members_with_work(split_of(sum, group)), 2u);
  clReleaseDevice(group);
}

// The group's writes are seen by a member's own queue in a context holding both, and a
// profiled launch reports its parts' span.
TEST_F(DeviceGroups, WritesReachOtherQueuesAndProfilingSpansTheParts) {
  if (emulated_.size() < 2) GTEST_SKIP() << "needs two emulated GPUs";
  cl_device_id group = make_group({emulated_[0], emulated_[1]}, {1.0f, 1.0f});
  cl_device_id both[2] = {group, cpu_};
  cl_int err = -1;
  Context context(clCreateContext(nullptr, 2, both, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Queue on_group(make_queue(context, group, CL_QUEUE_PROFILING_ENABLE, &err));
  Queue on_cpu(make_queue(context, cpu_, 0, &err));
  Program program(clCreateProgramWithSource(context, 1, &kSource, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 2, both, "", nullptr, nullptr));
  const int n = 5000;
  std::vector<float> a(n), b(n);
  std::iota(a.begin(), a.end(), 0.0f);
  std::iota(b.begin(), b.end(), 100.0f);
  Mem ma(clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * 4, a.data(), &err));
  Mem mb(clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, n * 4, b.data(), &err));
  Mem mo(clCreateBuffer(context, 0, n * 4, nullptr, &err));
  Kernel add(clCreateKernel(program, "add", &err));
  ASSERT_CL(CL_SUCCESS, set_mem(add, 0, ma));
  ASSERT_CL(CL_SUCCESS, set_mem(add, 1, mb));
  ASSERT_CL(CL_SUCCESS, set_mem(add, 2, mo));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(add, 3, sizeof n, &n));
  const size_t global = 5120, local = 128;
  cl_event done = nullptr;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(on_group, add, 1, nullptr, &global, &local, 0, nullptr, &done));
  Event launched(done);
  std::vector<float> got(n);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(on_cpu, mo, CL_TRUE, 0, n * 4, got.data(), 1, &done, nullptr));
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], a[i] + b[i]) << "at " << i;
  cl_ulong start = 0, end = 0;
  ASSERT_CL(CL_SUCCESS, clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_START, sizeof start,
                                                &start, nullptr));
  ASSERT_CL(CL_SUCCESS,
            clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr));
  EXPECT_GT(start, 0u);
  EXPECT_LE(start, end);
  EXPECT_EQ(members_with_work(split_of(add, group)), 2u);
  clReleaseDevice(group);
}

// Learned shares: after some launches every member still has work on the two halves of one
// machine (equal speeds), and the shares add up to the whole launch.
TEST_F(DeviceGroups, LearnedSharesCoverTheLaunch) {
  std::vector<cl_device_id> halves = cpu_halves();
  if (halves.size() < 2) GTEST_SKIP() << "needs a CPU of two cores or more";
  cl_device_id group = make_group(halves);
  Session s = open(group);
  cl_int err = -1;
  Kernel k(clCreateKernel(s.program, "add", &err));
  const int n = 1 << 16;
  std::vector<float> a(n, 1.0f), b(n, 2.0f);
  Mem ma(clCreateBuffer(s.context, CL_MEM_COPY_HOST_PTR, n * 4, a.data(), &err));
  Mem mb(clCreateBuffer(s.context, CL_MEM_COPY_HOST_PTR, n * 4, b.data(), &err));
  Mem mo(clCreateBuffer(s.context, 0, n * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, set_mem(k, 0, ma));
  ASSERT_CL(CL_SUCCESS, set_mem(k, 1, mb));
  ASSERT_CL(CL_SUCCESS, set_mem(k, 2, mo));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 3, sizeof n, &n));
  const size_t global = n, local = 64;
  for (int i = 0; i < 8; ++i)
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(s.queue, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  std::vector<float> got(n);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(s.queue, mo, CL_TRUE, 0, n * 4, got.data(), 0, nullptr, nullptr));
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], 3.0f);
  const std::vector<cl_float> split = split_of(k, group);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_NEAR(split[0] + split[1], 1.0f, 1e-5f);
  for (cl_device_id h : halves) clReleaseDevice(h);
  clReleaseDevice(group);
}

// A group of the CPU and a GPU needs a binary per target: its CL_PROGRAM_BINARIES holds both,
// builds that same group again (the CPU runs its own part from it), and suits no other device.
TEST_F(DeviceGroups, MixedTargetBinariesBuildTheSameGroupAgain) {
  if (!native_gpu_) GTEST_SKIP() << "needs a GPU of a driver beside the CPU";
  // The whole launch on the CPU: the simulated CUDA driver computes nothing.
  cl_device_id group = make_group({cpu_, native_gpu_}, {1.0f, 0.0f});
  Session built = open(group);
  size_t size = 0;
  ASSERT_CL(CL_SUCCESS,
            clGetProgramInfo(built.program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
  ASSERT_GT(size, 0u);
  std::vector<unsigned char> bundle(size);
  unsigned char* target = bundle.data();
  ASSERT_CL(CL_SUCCESS,
            clGetProgramInfo(built.program, CL_PROGRAM_BINARIES, sizeof target, &target, nullptr));

  // The CPU's own binary is not the group's, and neither device alone takes the group's.
  auto binary_of = [](cl_program program) {
    size_t n = 0;
    EXPECT_CL(CL_SUCCESS,
              clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, nullptr));
    std::vector<unsigned char> out(n);
    unsigned char* p = out.data();
    EXPECT_CL(CL_SUCCESS, clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof p, &p, nullptr));
    return out;
  };
  Session cpu_only = open(cpu_);
  const std::vector<unsigned char> cpu_binary = binary_of(cpu_only.program);
  EXPECT_NE(cpu_binary, bundle);
  auto create = [](cl_context context, cl_device_id device, const std::vector<unsigned char>& b,
                   cl_int* status, cl_int* err) {
    const unsigned char* p = b.data();
    const size_t n = b.size();
    return Program(clCreateProgramWithBinary(context, 1, &device, &n, &p, status, err));
  };
  cl_int status = 0, err = 0;
  Program rejected = create(cpu_only.context, cpu_, bundle, &status, &err);
  EXPECT_ERR(CL_INVALID_BINARY, err);
  EXPECT_ERR(CL_INVALID_BINARY, status);
  rejected = create(built.context, group, cpu_binary, &status, &err);
  EXPECT_ERR(CL_INVALID_BINARY, err) << "a CPU binary for a group with a GPU";
  std::vector<unsigned char> truncated(bundle.begin(), bundle.end() - 16);
  rejected = create(built.context, group, truncated, &status, &err);
  EXPECT_ERR(CL_INVALID_BINARY, err);

  Program again = create(built.context, group, bundle, &status, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  ASSERT_ERR(CL_SUCCESS, status);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(again, 1, &group, "", nullptr, nullptr));
  EXPECT_EQ(binary_of(again), bundle);
  Kernel k(clCreateKernel(again, "add", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const int n = 4096;
  std::vector<float> a(n), b(n, 0.5f);
  std::iota(a.begin(), a.end(), 0.0f);
  Mem ma(clCreateBuffer(built.context, CL_MEM_COPY_HOST_PTR, n * 4, a.data(), &err));
  Mem mb(clCreateBuffer(built.context, CL_MEM_COPY_HOST_PTR, n * 4, b.data(), &err));
  Mem mo(clCreateBuffer(built.context, 0, n * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, set_mem(k, 0, ma));
  ASSERT_CL(CL_SUCCESS, set_mem(k, 1, mb));
  ASSERT_CL(CL_SUCCESS, set_mem(k, 2, mo));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 3, sizeof n, &n));
  const size_t global = n, local = 64;
  ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(built.queue, k, 1, nullptr, &global, &local, 0,
                                               nullptr, nullptr));
  std::vector<float> got(n);
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(built.queue, mo, CL_TRUE, 0, n * 4, got.data(), 0,
                                            nullptr, nullptr));
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], float(i) + 0.5f) << "at " << i;
  clReleaseDevice(group);
}

}  // namespace
