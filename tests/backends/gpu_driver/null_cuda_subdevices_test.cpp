// clCreateSubDevices on a CUDA device through green contexts, over the simulated driver
// (null_cuda.cpp, null_cuda_green.cpp) posing as a GPU of 132 SMs with sm_90's SM groups of 8:
// the partition limits, rounding and errors, sub-device properties, reference counts (each
// sub-device's green context goes with it), and what sub-devices share with their GPU: buffers
// (one allocation, no migration), events, programs built for the parent, queues of their own
// (streams of their green context). Kernels compute nothing there: data is checked through fills,
// copies and reads. Run again with NULL_CUDA_NO_GREEN_CONTEXTS (a driver without them): no
// partition scheme, and clCreateSubDevices answers CL_INVALID_VALUE.
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cl_test.h"

namespace {

using namespace cltest;

void* null_driver() {
  static void* handle = dlopen(NULL_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
  return handle;
}
uint64_t hook(const char* name) {
  auto fn = reinterpret_cast<uint64_t (*)()>(dlsym(null_driver(), name));
  return fn ? fn() : ~uint64_t{0};
}
uint64_t green_contexts() { return hook("null_cuda_green_contexts"); }
uint64_t green_streams() { return hook("null_cuda_green_streams"); }
uint64_t allocations() { return hook("null_cuda_allocations"); }

bool without_green_contexts() { return std::getenv("NULL_CUDA_NO_GREEN_CONTEXTS") != nullptr; }

class CudaSubDevices : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Before Manifold loads: the simulated driver, as a GPU of 132 SMs.
    setenv("MANIFOLD_CUDA_DRIVER", NULL_CUDA_PATH, 1);
    unsetenv("MANIFOLD_DISABLE_CUDA");
    setenv("NULL_CUDA_SM_COUNT", "132", 1);
  }

  void SetUp() override {
    ASSERT_NE(null_driver(), nullptr) << dlerror();
    cl_platform_id platform = findPlatform();
    ASSERT_NE(platform, nullptr);
    cl_uint n = 0;
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 0, nullptr, &n));
    std::vector<cl_device_id> devices(n);
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, n, devices.data(), nullptr));
    for (cl_device_id d : devices)
      if (deviceString(d, CL_DEVICE_NAME).find("null CUDA driver") != std::string::npos) gpu_ = d;
    ASSERT_NE(gpu_, nullptr) << "no device of the simulated CUDA driver";
    contexts_before_ = green_contexts();
  }
  void TearDown() override {
    // Every sub-device released: its green context destroyed, after its streams.
    EXPECT_EQ(green_contexts(), contexts_before_);
    EXPECT_EQ(hook("null_cuda_green_leaked_streams"), 0u);
  }

  // clCreateSubDevices with `properties` (0-terminated); the count it reports first.
  std::vector<Device> partition(cl_device_id device,
                                std::vector<cl_device_partition_property> properties,
                                cl_int* error = nullptr) {
    cl_uint n = 0;
    cl_int e = clCreateSubDevices(device, properties.data(), 0, nullptr, &n);
    if (error) *error = e;
    if (e != CL_SUCCESS) return {};
    std::vector<cl_device_id> raw(n);
    cl_uint again = 0;
    e = clCreateSubDevices(device, properties.data(), n, raw.data(), &again);
    EXPECT_EQ(e, CL_SUCCESS);
    EXPECT_EQ(again, n);
    if (error) *error = e;
    std::vector<Device> out;
    for (cl_device_id d : raw) out.emplace_back(d);
    return out;
  }
  static cl_uint units(cl_device_id d) {
    return info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_MAX_COMPUTE_UNITS);
  }
  static std::vector<cl_uint> units(const std::vector<Device>& devices) {
    std::vector<cl_uint> u;
    for (const Device& d : devices) u.push_back(units(d));
    return u;
  }
  cl_int partition_error(std::vector<cl_device_partition_property> properties) {
    cl_uint n = 0;
    return clCreateSubDevices(gpu_, properties.data(), 0, nullptr, &n);
  }

  cl_device_id gpu_ = nullptr;
  uint64_t contexts_before_ = 0;
};

TEST_F(CudaSubDevices, NoPartitionWithoutGreenContexts) {
  if (!without_green_contexts()) GTEST_SKIP() << "the driver has green contexts";
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, gpu_, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 0u);
  EXPECT_EQ(infoVector<cl_device_partition_property>(clGetDeviceInfo, gpu_,
                                                     CL_DEVICE_PARTITION_PROPERTIES),
            std::vector<cl_device_partition_property>{0});
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_EQUALLY, 16, 0}), CL_INVALID_VALUE);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, 16, 16, 0, 0}), CL_INVALID_VALUE);
}

class CudaSubDevicesGreen : public CudaSubDevices {
 protected:
  void SetUp() override {
    if (without_green_contexts()) GTEST_SKIP() << "NULL_CUDA_NO_GREEN_CONTEXTS";
    CudaSubDevices::SetUp();
  }
  void TearDown() override {
    if (!without_green_contexts()) CudaSubDevices::TearDown();
  }
};

TEST_F(CudaSubDevicesGreen, ReportsSchemesAndLimits) {
  EXPECT_EQ(units(gpu_), 132u);
  // The spec's bound, the SM count (the driver makes at most 16 groups of 8 of them).
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, gpu_, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 132u);
  EXPECT_EQ(partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 1, 0}).size(), 16u);
  EXPECT_EQ(infoVector<cl_device_partition_property>(clGetDeviceInfo, gpu_,
                                                     CL_DEVICE_PARTITION_PROPERTIES),
            (std::vector<cl_device_partition_property>{CL_DEVICE_PARTITION_EQUALLY,
                                                       CL_DEVICE_PARTITION_BY_COUNTS}));
  EXPECT_EQ(
      info<cl_device_affinity_domain>(clGetDeviceInfo, gpu_, CL_DEVICE_PARTITION_AFFINITY_DOMAIN),
      0u);
  EXPECT_EQ(info<cl_device_id>(clGetDeviceInfo, gpu_, CL_DEVICE_PARENT_DEVICE), nullptr);
}

// Counts round down to groups of 8 SMs (one group at least).
TEST_F(CudaSubDevicesGreen, EquallyRoundsToGroupsOfEight) {
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 16, 0})),
            std::vector<cl_uint>(8, 16));
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 12, 0})),
            std::vector<cl_uint>(16, 8));
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 1, 0})),
            std::vector<cl_uint>(16, 8));
  // Half the SMs: two of 64.
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 66, 0})),
            (std::vector<cl_uint>{64, 64}));
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 64, 0})),
            (std::vector<cl_uint>{64, 64}));
}

TEST_F(CudaSubDevicesGreen, ByCountsRoundToTheDriversGroups) {
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_BY_COUNTS, 16, 40,
                                   CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0})),
            (std::vector<cl_uint>{16, 40}));
  // The first group in 8s (the GPU's resource), the next ones in 2s (a green context's), down
  // to one group at least.
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_BY_COUNTS, 3, 5, 1,
                                   CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0})),
            (std::vector<cl_uint>{8, 4, 2}));
  // Counts of the whole device: the last takes what is left (CTS api, device_partition).
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_BY_COUNTS, 1, 131,
                                   CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0})),
            (std::vector<cl_uint>{8, 124}));
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_BY_COUNTS, 64, 64,
                                   CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0})),
            (std::vector<cl_uint>{64, 64}));
}

TEST_F(CudaSubDevicesGreen, InvalidRequests) {
  const cl_device_partition_property end = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
  cl_uint n = 0;
  EXPECT_CL(CL_INVALID_VALUE, clCreateSubDevices(gpu_, nullptr, 0, nullptr, &n));
  EXPECT_EQ(partition_error({0}), CL_INVALID_VALUE);
  EXPECT_EQ(partition_error({0x4242, 1, 0}), CL_INVALID_VALUE);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
                             CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE, 0}),
            CL_INVALID_VALUE);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_EQUALLY, 0, 0}), CL_INVALID_VALUE);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_EQUALLY, 133, 0}),
            CL_INVALID_DEVICE_PARTITION_COUNT);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_EQUALLY, 132, 0}), CL_DEVICE_PARTITION_FAILED);
  // Valid counts rounded down: one sub-device of 128, two of 64.
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_EQUALLY, 130, 0}), CL_SUCCESS);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, 66, 66, end, 0}), CL_SUCCESS);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, 0, end, 0}),
            CL_INVALID_DEVICE_PARTITION_COUNT);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, 8, -1, end, 0}),
            CL_INVALID_DEVICE_PARTITION_COUNT);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, end, 0}),
            CL_INVALID_DEVICE_PARTITION_COUNT);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, 100, 40, end, 0}),
            CL_INVALID_DEVICE_PARTITION_COUNT);
  std::vector<cl_device_partition_property> many{CL_DEVICE_PARTITION_BY_COUNTS};
  for (int i = 0; i < 17; ++i) many.push_back(2);
  many.push_back(end);
  many.push_back(0);
  // More sub-devices than groups of 8: BY_COUNTS splits what is left after the first in 2s.
  EXPECT_EQ(partition_error(many), CL_SUCCESS);
  many.assign(1, CL_DEVICE_PARTITION_BY_COUNTS);
  for (int i = 0; i < 70; ++i) many.push_back(1);
  many.push_back(end);
  many.push_back(0);
  EXPECT_EQ(partition_error(many), CL_DEVICE_PARTITION_FAILED);
  // CTS api negative_create_sub_devices: one count above CL_DEVICE_PARTITION_MAX_SUB_DEVICES.
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, 133, end, 0}),
            CL_INVALID_DEVICE_PARTITION_COUNT);
  // out_devices too small for the 8 sub-devices.
  const cl_device_partition_property equally[] = {CL_DEVICE_PARTITION_EQUALLY, 16, 0};
  cl_device_id two[2] = {};
  EXPECT_CL(CL_INVALID_VALUE, clCreateSubDevices(gpu_, equally, 2, two, nullptr));
  EXPECT_EQ(two[0], nullptr);
}

TEST_F(CudaSubDevicesGreen, SubDeviceProperties) {
  std::vector<Device> subs = partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 16, 0});
  ASSERT_EQ(subs.size(), 8u);
  EXPECT_EQ(green_contexts(), contexts_before_ + 8);
  for (const Device& d : subs) {
    EXPECT_EQ(info<cl_device_id>(clGetDeviceInfo, d, CL_DEVICE_PARENT_DEVICE), gpu_);
    EXPECT_EQ(info<cl_device_type>(clGetDeviceInfo, d, CL_DEVICE_TYPE),
              cl_device_type(CL_DEVICE_TYPE_GPU));
    EXPECT_EQ(units(d), 16u);
    EXPECT_EQ(
        infoVector<cl_device_partition_property>(clGetDeviceInfo, d, CL_DEVICE_PARTITION_TYPE),
        (std::vector<cl_device_partition_property>{CL_DEVICE_PARTITION_EQUALLY, 16, 0}));
    // The parent's memory.
    EXPECT_EQ(info<cl_ulong>(clGetDeviceInfo, d, CL_DEVICE_GLOBAL_MEM_SIZE),
              info<cl_ulong>(clGetDeviceInfo, gpu_, CL_DEVICE_GLOBAL_MEM_SIZE));
    // A green context's SMs split again (in 2s): the bound is its SM count.
    EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 16u);
  }
  std::vector<Device> counted = partition(
      gpu_, {CL_DEVICE_PARTITION_BY_COUNTS, 8, 24, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0});
  ASSERT_EQ(counted.size(), 2u);
  EXPECT_EQ(infoVector<cl_device_partition_property>(clGetDeviceInfo, counted[1],
                                                     CL_DEVICE_PARTITION_TYPE),
            (std::vector<cl_device_partition_property>{CL_DEVICE_PARTITION_BY_COUNTS, 8, 24,
                                                       CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0}));
}

TEST_F(CudaSubDevicesGreen, RetainRelease) {
  std::vector<Device> subs = partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 32, 0});
  ASSERT_EQ(subs.size(), 4u);
  cl_device_id d = subs[0];
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_REFERENCE_COUNT), 1u);
  EXPECT_CL(CL_SUCCESS, clRetainDevice(d));
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_REFERENCE_COUNT), 2u);
  EXPECT_CL(CL_SUCCESS, clReleaseDevice(d));
  EXPECT_EQ(green_contexts(), contexts_before_ + 4);
  subs.erase(subs.begin());  // the last reference: its green context goes
  EXPECT_EQ(green_contexts(), contexts_before_ + 3);
  // The root device is not reference counted.
  EXPECT_CL(CL_SUCCESS, clRetainDevice(gpu_));
  EXPECT_CL(CL_SUCCESS, clReleaseDevice(gpu_));
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, gpu_, CL_DEVICE_REFERENCE_COUNT), 1u);
}

TEST_F(CudaSubDevicesGreen, SubDevicesOfSubDevices) {
  std::vector<Device> halves = partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 64, 0});
  ASSERT_EQ(halves.size(), 2u);
  std::vector<Device> quarters = partition(halves[1], {CL_DEVICE_PARTITION_EQUALLY, 16, 0});
  EXPECT_EQ(units(quarters), std::vector<cl_uint>(4, 16));
  for (const Device& q : quarters)
    EXPECT_EQ(info<cl_device_id>(clGetDeviceInfo, q, CL_DEVICE_PARENT_DEVICE), halves[1].get());
  EXPECT_EQ(units(partition(halves[0], {CL_DEVICE_PARTITION_BY_COUNTS, 3, 9,
                                        CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0})),
            (std::vector<cl_uint>{2, 8}));
  // The sub-device outlives its parent's last application reference, and the parent lives
  // as long as its sub-devices.
  Device keep = quarters[0];
  halves.clear();
  quarters.clear();
  EXPECT_EQ(units(keep), 16u);
}

// One context of the GPU and two of its sub-devices: a buffer filled on one sub-device, copied on
// the other after an event of the first, and read on the parent, with one allocation per buffer.
TEST_F(CudaSubDevicesGreen, BuffersAndEventsAcrossSiblingsAndParent) {
  std::vector<Device> subs = partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 64, 0});
  ASSERT_EQ(subs.size(), 2u);
  cl_device_id devices[] = {gpu_, subs[0], subs[1]};
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(nullptr, 3, devices, nullptr, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const uint64_t streams_before = green_streams();
  Queue q[3];
  for (int i = 0; i < 3; ++i) {
    q[i].reset(clCreateCommandQueueWithProperties(context, devices[i], nullptr, &err));
    ASSERT_CL(CL_SUCCESS, err);
  }
  constexpr size_t kCount = 1 << 16;
  const uint64_t allocations_before = allocations();
  Mem a(clCreateBuffer(context, CL_MEM_READ_WRITE, kCount * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Mem b(clCreateBuffer(context, CL_MEM_READ_WRITE, kCount * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const cl_uint pattern = 0x5eed1234;
  Event filled, copied;
  ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(q[1], a, &pattern, sizeof pattern, 0, kCount * 4, 0,
                                            nullptr, filled.out()));
  ASSERT_CL(CL_SUCCESS, clFlush(q[1]));
  cl_event after_fill = filled;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueCopyBuffer(q[2], a, b, 0, 0, kCount * 4, 1, &after_fill, copied.out()));
  std::vector<cl_uint> out(kCount, 0);
  cl_event after_copy = copied;
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(q[0], b, CL_TRUE, 0, kCount * 4, out.data(), 1,
                                            &after_copy, nullptr));
  EXPECT_EQ(std::count(out.begin(), out.end(), pattern), std::ptrdiff_t(kCount));
  // And back the other way: written from the host through the parent, read on a sub-device.
  std::vector<cl_uint> in(kCount);
  for (size_t i = 0; i < kCount; ++i) in[i] = cl_uint(i * 7);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(q[0], a, CL_TRUE, 0, kCount * 4, in.data(), 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(q[2], a, CL_TRUE, 0, kCount * 4, out.data(), 0, nullptr, nullptr));
  EXPECT_EQ(out, in);
  // One device memory: each buffer allocated once, whichever device used it.
  EXPECT_EQ(allocations() - allocations_before, 2u);
  // The sub-devices' queues run in streams of their green contexts.
  EXPECT_GE(green_streams(), streams_before + 2);
  for (int i = 0; i < 3; ++i) ASSERT_CL(CL_SUCCESS, clFinish(q[i]));
}

// A context of sub-devices only (no parent in it): its buffers live in the GPU's memory still.
TEST_F(CudaSubDevicesGreen, ContextOfSubDevicesOnly) {
  std::vector<Device> subs = partition(
      gpu_, {CL_DEVICE_PARTITION_BY_COUNTS, 16, 48, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0});
  ASSERT_EQ(subs.size(), 2u);
  cl_device_id devices[] = {subs[0], subs[1]};
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(nullptr, 2, devices, nullptr, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const cl_queue_properties props[] = {
      CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE, 0};
  Queue q0(clCreateCommandQueueWithProperties(context, subs[0], props, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Queue q1(clCreateCommandQueueWithProperties(context, subs[1], nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  std::vector<cl_uint> in(4096, 0xabcdef01u), out(4096, 0);
  Mem m(clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, in.size() * 4, in.data(),
                       &err));
  ASSERT_CL(CL_SUCCESS, err);
  Event written;
  const cl_uint zero = 0;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueFillBuffer(q0, m, &zero, 4, 0, 1024 * 4, 0, nullptr, written.out()));
  cl_event wait = written;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(q1, m, CL_TRUE, 0, out.size() * 4, out.data(), 1, &wait, nullptr));
  EXPECT_EQ(std::count(out.begin(), out.begin() + 1024, 0u), 1024);
  EXPECT_EQ(std::count(out.begin() + 1024, out.end(), 0xabcdef01u), 3072);
  // The read waited for the fill on the device: the fill's own end may be reported a moment later.
  ASSERT_CL(CL_SUCCESS, clWaitForEvents(1, &wait));
  cl_ulong start = 0, end = 0;
  EXPECT_CL(CL_SUCCESS, clGetEventProfilingInfo(written, CL_PROFILING_COMMAND_START, sizeof start,
                                                &start, nullptr));
  EXPECT_CL(CL_SUCCESS,
            clGetEventProfilingInfo(written, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr));
  EXPECT_LE(start, end);
}

// Coarse-grain SVM in a context of the GPU and two sub-devices: one mapping of the GPU's memory at
// the SVM address serves all three (svm/ maps it once, on the GPU).
TEST_F(CudaSubDevicesGreen, SvmSharedWithTheGpu) {
  if (!(info<cl_device_svm_capabilities>(clGetDeviceInfo, gpu_, CL_DEVICE_SVM_CAPABILITIES) &
        CL_DEVICE_SVM_COARSE_GRAIN_BUFFER))
    GTEST_SKIP() << "no SVM on the simulated GPU";
  std::vector<Device> subs = partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 64, 0});
  ASSERT_EQ(subs.size(), 2u);
  cl_device_id devices[] = {gpu_, subs[0], subs[1]};
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(nullptr, 3, devices, nullptr, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Queue q0(clCreateCommandQueueWithProperties(context, subs[0], nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Queue q1(clCreateCommandQueueWithProperties(context, subs[1], nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  constexpr size_t kBytes = 1 << 20;
  void* a = clSVMAlloc(context, CL_MEM_READ_WRITE, kBytes, 0);
  void* b = clSVMAlloc(context, CL_MEM_READ_WRITE, kBytes, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const cl_uint pattern = 0x0badcafe;
  Event filled;
  ASSERT_CL(CL_SUCCESS, clEnqueueSVMMemFill(q0, a, &pattern, 4, kBytes, 0, nullptr, filled.out()));
  cl_event wait = filled;
  ASSERT_CL(CL_SUCCESS, clEnqueueSVMMemcpy(q1, CL_TRUE, b, a, kBytes, 1, &wait, nullptr));
  std::vector<cl_uint> out(kBytes / 4);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueSVMMemcpy(q0, CL_TRUE, out.data(), b, kBytes, 0, nullptr, nullptr));
  EXPECT_EQ(std::count(out.begin(), out.end(), pattern), std::ptrdiff_t(out.size()));
  clSVMFree(context, a);
  clSVMFree(context, b);
}

// A program built for the parent serves its sub-devices: build status from the parent's build,
// kernels enqueued on a sub-device's queue without a build of its own.
TEST_F(CudaSubDevicesGreen, ProgramBuiltForParent) {
  std::vector<Device> subs = partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 32, 0});
  ASSERT_EQ(subs.size(), 4u);
  cl_device_id devices[] = {gpu_, subs[0], subs[3]};
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(nullptr, 3, devices, nullptr, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const char* source = "kernel void scale(global uint* a, uint k) { a[get_global_id(0)] *= k; }";
  Program program(clCreateProgramWithSource(context, 1, &source, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &gpu_, "", nullptr, nullptr));
  for (cl_device_id d : {subs[0].get(), subs[3].get()}) {
    cl_build_status status = CL_BUILD_NONE;
    EXPECT_CL(CL_SUCCESS, clGetProgramBuildInfo(program, d, CL_PROGRAM_BUILD_STATUS, sizeof status,
                                                &status, nullptr));
    EXPECT_EQ(status, CL_BUILD_SUCCESS);
  }
  Kernel kernel(clCreateKernel(program, "scale", &err));
  ASSERT_CL(CL_SUCCESS, err);
  Mem m(clCreateBuffer(context, CL_MEM_READ_WRITE, 1024 * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const cl_uint k = 3;
  cl_mem buffer = m;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(kernel, 0, sizeof(cl_mem), &buffer));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(kernel, 1, sizeof k, &k));
  size_t wg = 0;
  EXPECT_CL(CL_SUCCESS, clGetKernelWorkGroupInfo(kernel, subs[0], CL_KERNEL_WORK_GROUP_SIZE,
                                                 sizeof wg, &wg, nullptr));
  EXPECT_GT(wg, 0u);
  const size_t global = 1024, local = 64;
  for (cl_device_id d : {subs[0].get(), subs[3].get(), gpu_}) {
    Queue q(clCreateCommandQueueWithProperties(context, d, nullptr, &err));
    ASSERT_CL(CL_SUCCESS, err);
    for (int i = 0; i < 40; ++i)  // past a launch batch: graphs of the sub-device's launches too
      ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &global, &local, 0,
                                                   nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clFinish(q));
  }
}

}  // namespace
