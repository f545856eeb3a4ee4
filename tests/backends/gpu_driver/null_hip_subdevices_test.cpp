// clCreateSubDevices on a HIP device through CU masks (hipExtStreamCreateWithCUMask), over the
// HIP-over-CUDA shim on the simulated CUDA driver (null_hip: tests/fakes/hip, null_cuda.cpp,
// null_cuda_green.cpp) posing as a GPU of 132 SMs, which the shim shows as 132 CUs and whose CU
// masks it maps onto green contexts of groups of 8 SMs. Counts are exact (a CU is the granule):
// the partition limits and errors, sub-device properties, the CU mask each sub-device's streams
// are made with, reference counts, sub-devices of sub-devices (parts of their parent's mask), and
// what sub-devices share with their GPU: buffers (one allocation), events, programs built for the
// parent. Kernels compute nothing there: data is checked through fills, copies and reads. Run
// again with NULL_CUDA_NO_GREEN_CONTEXTS (the shim then fails every CU-mask stream): no partition
// scheme, and clCreateSubDevices answers CL_INVALID_VALUE.
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cl_test.h"

namespace {

using namespace cltest;

void* null_hip() {
  static void* handle = dlopen(NULL_HIP_PATH, RTLD_NOW | RTLD_LOCAL);
  return handle;
}
uint64_t hook(const char* name) {
  auto fn = reinterpret_cast<uint64_t (*)()>(dlsym(null_hip(), name));
  return fn ? fn() : ~uint64_t{0};
}
uint64_t green_streams() { return hook("null_cuda_green_streams"); }
uint64_t allocations() { return hook("null_cuda_allocations"); }
uint64_t cu_mask_streams() { return hook("null_hip_cu_mask_streams"); }
// The CUs of the last stream made with a CU mask, and the SMs of the green context it runs in.
std::vector<cl_uint> last_mask_cus() {
  auto fn = reinterpret_cast<unsigned (*)(uint32_t*, unsigned)>(
      dlsym(null_hip(), "null_hip_cu_mask_last"));
  if (!fn) return {};
  uint32_t words[16] = {};
  const unsigned n = std::min(fn(words, 16), 16u);
  std::vector<cl_uint> cus;
  for (unsigned w = 0; w < n; ++w)
    for (unsigned b = 0; b < 32; ++b)
      if (words[w] >> b & 1u) cus.push_back(w * 32 + b);
  return cus;
}
unsigned last_mask_sms() {
  auto fn = reinterpret_cast<unsigned (*)()>(dlsym(null_hip(), "null_hip_cu_mask_last_sms"));
  return fn ? fn() : 0;
}
std::vector<cl_uint> cu_range(cl_uint first, cl_uint count) {
  std::vector<cl_uint> cus(count);
  for (cl_uint i = 0; i < count; ++i) cus[i] = first + i;
  return cus;
}

bool without_green_contexts() { return std::getenv("NULL_CUDA_NO_GREEN_CONTEXTS") != nullptr; }

class HipSubDevices : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Before Manifold loads: the HIP backend over null_hip as a GPU of 132 SMs, CUDA's off.
    setenv("MANIFOLD_HIP_RUNTIME", NULL_HIP_PATH, 1);
    setenv("MANIFOLD_DISABLE_CUDA", "1", 1);
    setenv("NULL_CUDA_SM_COUNT", "132", 1);
  }

  void SetUp() override {
    ASSERT_NE(null_hip(), nullptr) << dlerror();
    cl_platform_id platform = findPlatform();
    ASSERT_NE(platform, nullptr);
    cl_uint n = 0;
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 0, nullptr, &n));
    std::vector<cl_device_id> devices(n);
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, n, devices.data(), nullptr));
    for (cl_device_id d : devices)
      if (deviceString(d, CL_DEVICE_VERSION).find("Manifold HIP") != std::string::npos) gpu_ = d;
    ASSERT_NE(gpu_, nullptr) << "no HIP device over null_hip";
    streams_before_ = green_streams();
  }
  void TearDown() override {
    // Every sub-device and queue released: their streams destroyed, none left to a green context.
    EXPECT_EQ(green_streams(), streams_before_);
    EXPECT_EQ(hook("null_cuda_green_leaked_streams"), 0u);
  }

  // clCreateSubDevices with `properties` (0-terminated); the count it reports first.
  static std::vector<Device> partition(cl_device_id device,
                                       std::vector<cl_device_partition_property> properties) {
    cl_uint n = 0;
    cl_int e = clCreateSubDevices(device, properties.data(), 0, nullptr, &n);
    EXPECT_EQ(e, CL_SUCCESS);
    if (e != CL_SUCCESS) return {};
    std::vector<cl_device_id> raw(n);
    cl_uint again = 0;
    EXPECT_CL(CL_SUCCESS, clCreateSubDevices(device, properties.data(), n, raw.data(), &again));
    EXPECT_EQ(again, n);
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
  static cl_int partition_error(cl_device_id device,
                                std::vector<cl_device_partition_property> properties) {
    cl_uint n = 0;
    return clCreateSubDevices(device, properties.data(), 0, nullptr, &n);
  }
  cl_int partition_error(std::vector<cl_device_partition_property> properties) const {
    return partition_error(gpu_, std::move(properties));
  }
  // A fill on a queue of `device` (in a context of its own), finished: the CU-mask streams that
  // its queue makes.
  static void fill_on(cl_device_id device) {
    cl_int err = CL_SUCCESS;
    Context context(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err));
    ASSERT_CL(CL_SUCCESS, err);
    Queue q(clCreateCommandQueueWithProperties(context, device, nullptr, &err));
    ASSERT_CL(CL_SUCCESS, err);
    Mem m(clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, nullptr, &err));
    ASSERT_CL(CL_SUCCESS, err);
    const cl_uint pattern = 0x1234;
    ASSERT_CL(CL_SUCCESS,
              clEnqueueFillBuffer(q, m, &pattern, sizeof pattern, 0, 4096, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clFinish(q));
  }

  cl_device_id gpu_ = nullptr;
  uint64_t streams_before_ = 0;
};

TEST_F(HipSubDevices, NoPartitionWithoutGreenContexts) {
  if (!without_green_contexts()) GTEST_SKIP() << "the driver under the shim has green contexts";
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, gpu_, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 0u);
  EXPECT_EQ(infoVector<cl_device_partition_property>(clGetDeviceInfo, gpu_,
                                                     CL_DEVICE_PARTITION_PROPERTIES),
            std::vector<cl_device_partition_property>{0});
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_EQUALLY, 16, 0}), CL_INVALID_VALUE);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, 16, 16, 0, 0}), CL_INVALID_VALUE);
}

class HipSubDevicesMasks : public HipSubDevices {
 protected:
  void SetUp() override {
    if (without_green_contexts()) GTEST_SKIP() << "NULL_CUDA_NO_GREEN_CONTEXTS";
    HipSubDevices::SetUp();
  }
  void TearDown() override {
    if (!without_green_contexts()) HipSubDevices::TearDown();
  }
};

TEST_F(HipSubDevicesMasks, ReportsSchemesAndLimits) {
  EXPECT_EQ(units(gpu_), 132u);
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, gpu_, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 132u);
  EXPECT_EQ(infoVector<cl_device_partition_property>(clGetDeviceInfo, gpu_,
                                                     CL_DEVICE_PARTITION_PROPERTIES),
            (std::vector<cl_device_partition_property>{CL_DEVICE_PARTITION_EQUALLY,
                                                       CL_DEVICE_PARTITION_BY_COUNTS}));
  EXPECT_EQ(
      info<cl_device_affinity_domain>(clGetDeviceInfo, gpu_, CL_DEVICE_PARTITION_AFFINITY_DOMAIN),
      0u);
  EXPECT_EQ(info<cl_device_id>(clGetDeviceInfo, gpu_, CL_DEVICE_PARENT_DEVICE), nullptr);
  // One CU each: as many sub-devices as CUs.
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 1, 0})),
            std::vector<cl_uint>(132, 1));
}

// A CU is the granule: counts as asked, EQUALLY as many as fit.
TEST_F(HipSubDevicesMasks, CountsAreExact) {
  const cl_device_partition_property end = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 16, 0})),
            std::vector<cl_uint>(8, 16));
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 12, 0})),
            std::vector<cl_uint>(11, 12));
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 66, 0})),
            (std::vector<cl_uint>{66, 66}));
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 131, 0})),
            (std::vector<cl_uint>{131}));
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_BY_COUNTS, 16, 40, end, 0})),
            (std::vector<cl_uint>{16, 40}));
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_BY_COUNTS, 3, 5, 1, end, 0})),
            (std::vector<cl_uint>{3, 5, 1}));
  EXPECT_EQ(units(partition(gpu_, {CL_DEVICE_PARTITION_BY_COUNTS, 1, 131, end, 0})),
            (std::vector<cl_uint>{1, 131}));
  std::vector<cl_device_partition_property> ones{CL_DEVICE_PARTITION_BY_COUNTS};
  ones.insert(ones.end(), 132, 1);
  ones.push_back(end);
  ones.push_back(0);
  EXPECT_EQ(units(partition(gpu_, ones)), std::vector<cl_uint>(132, 1));
}

TEST_F(HipSubDevicesMasks, InvalidRequests) {
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
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, 0, end, 0}),
            CL_INVALID_DEVICE_PARTITION_COUNT);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, 8, -1, end, 0}),
            CL_INVALID_DEVICE_PARTITION_COUNT);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, end, 0}),
            CL_INVALID_DEVICE_PARTITION_COUNT);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, 100, 40, end, 0}),
            CL_INVALID_DEVICE_PARTITION_COUNT);
  EXPECT_EQ(partition_error({CL_DEVICE_PARTITION_BY_COUNTS, 133, end, 0}),
            CL_INVALID_DEVICE_PARTITION_COUNT);
  // More sub-devices than CL_DEVICE_PARTITION_MAX_SUB_DEVICES.
  std::vector<cl_device_partition_property> many{CL_DEVICE_PARTITION_BY_COUNTS};
  many.insert(many.end(), 133, 1);
  many.push_back(end);
  many.push_back(0);
  EXPECT_EQ(partition_error(many), CL_INVALID_DEVICE_PARTITION_COUNT);
  // out_devices too small for the 8 sub-devices.
  const cl_device_partition_property equally[] = {CL_DEVICE_PARTITION_EQUALLY, 16, 0};
  cl_device_id two[2] = {};
  EXPECT_CL(CL_INVALID_VALUE, clCreateSubDevices(gpu_, equally, 2, two, nullptr));
  EXPECT_EQ(two[0], nullptr);
  // A one-CU sub-device cannot be partitioned further.
  std::vector<Device> one = partition(gpu_, {CL_DEVICE_PARTITION_BY_COUNTS, 1, end, 0});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, one[0], CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 0u);
  EXPECT_EQ(partition_error(one[0], {CL_DEVICE_PARTITION_EQUALLY, 1, 0}),
            CL_DEVICE_PARTITION_FAILED);
}

TEST_F(HipSubDevicesMasks, SubDeviceProperties) {
  std::vector<Device> subs = partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 33, 0});
  ASSERT_EQ(subs.size(), 4u);
  for (const Device& d : subs) {
    EXPECT_EQ(info<cl_device_id>(clGetDeviceInfo, d, CL_DEVICE_PARENT_DEVICE), gpu_);
    EXPECT_EQ(info<cl_device_type>(clGetDeviceInfo, d, CL_DEVICE_TYPE),
              cl_device_type(CL_DEVICE_TYPE_GPU));
    EXPECT_EQ(units(d), 33u);
    EXPECT_EQ(
        infoVector<cl_device_partition_property>(clGetDeviceInfo, d, CL_DEVICE_PARTITION_TYPE),
        (std::vector<cl_device_partition_property>{CL_DEVICE_PARTITION_EQUALLY, 33, 0}));
    EXPECT_EQ(info<cl_ulong>(clGetDeviceInfo, d, CL_DEVICE_GLOBAL_MEM_SIZE),
              info<cl_ulong>(clGetDeviceInfo, gpu_, CL_DEVICE_GLOBAL_MEM_SIZE));
    EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 33u);
    EXPECT_EQ(infoVector<cl_device_partition_property>(clGetDeviceInfo, d,
                                                       CL_DEVICE_PARTITION_PROPERTIES),
              (std::vector<cl_device_partition_property>{CL_DEVICE_PARTITION_EQUALLY,
                                                         CL_DEVICE_PARTITION_BY_COUNTS}));
  }
  std::vector<Device> counted = partition(
      gpu_, {CL_DEVICE_PARTITION_BY_COUNTS, 8, 24, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0});
  ASSERT_EQ(counted.size(), 2u);
  EXPECT_EQ(infoVector<cl_device_partition_property>(clGetDeviceInfo, counted[1],
                                                     CL_DEVICE_PARTITION_TYPE),
            (std::vector<cl_device_partition_property>{CL_DEVICE_PARTITION_BY_COUNTS, 8, 24,
                                                       CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0}));
}

// Each sub-device's streams carry its CUs; the shim runs them in the green context of the SM
// groups (of 8) those CUs belong to.
TEST_F(HipSubDevicesMasks, StreamsOnTheirComputeUnits) {
  std::vector<Device> subs = partition(
      gpu_, {CL_DEVICE_PARTITION_BY_COUNTS, 16, 48, 68, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0});
  ASSERT_EQ(subs.size(), 3u);
  const cl_uint first[] = {0, 16, 64}, count[] = {16, 48, 68};
  const unsigned sms[] = {16, 48, 64};  // CUs 128-131 are the last group's
  for (int i = 0; i < 3; ++i) {
    const uint64_t before = cu_mask_streams();
    fill_on(subs[i]);
    EXPECT_GT(cu_mask_streams(), before) << "sub-device " << i;
    EXPECT_EQ(last_mask_cus(), cu_range(first[i], count[i])) << "sub-device " << i;
    EXPECT_EQ(last_mask_sms(), sms[i]) << "sub-device " << i;
  }
  // Masks within one group share its SMs.
  std::vector<Device> small = partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 4, 0});
  ASSERT_EQ(small.size(), 33u);
  fill_on(small[1]);
  EXPECT_EQ(last_mask_cus(), cu_range(4, 4));
  EXPECT_EQ(last_mask_sms(), 8u);
  // The GPU's own queues are no CU-mask streams.
  const uint64_t before = cu_mask_streams();
  fill_on(gpu_);
  EXPECT_EQ(cu_mask_streams(), before);
}

TEST_F(HipSubDevicesMasks, RetainRelease) {
  std::vector<Device> subs = partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 32, 0});
  ASSERT_EQ(subs.size(), 4u);
  cl_device_id d = subs[0];
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_REFERENCE_COUNT), 1u);
  EXPECT_CL(CL_SUCCESS, clRetainDevice(d));
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_REFERENCE_COUNT), 2u);
  EXPECT_CL(CL_SUCCESS, clReleaseDevice(d));
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_REFERENCE_COUNT), 1u);
  fill_on(d);
  subs.erase(subs.begin());  // the last reference: the sub-device and its streams go
  // The root device is not reference counted.
  EXPECT_CL(CL_SUCCESS, clRetainDevice(gpu_));
  EXPECT_CL(CL_SUCCESS, clReleaseDevice(gpu_));
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, gpu_, CL_DEVICE_REFERENCE_COUNT), 1u);
}

// Sub-devices of a sub-device: parts of its mask, CUs numbered as the GPU numbers them.
TEST_F(HipSubDevicesMasks, SubDevicesOfSubDevices) {
  std::vector<Device> halves = partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 66, 0});
  ASSERT_EQ(halves.size(), 2u);
  std::vector<Device> quarters = partition(halves[1], {CL_DEVICE_PARTITION_EQUALLY, 16, 0});
  EXPECT_EQ(units(quarters), std::vector<cl_uint>(4, 16));
  for (const Device& q : quarters)
    EXPECT_EQ(info<cl_device_id>(clGetDeviceInfo, q, CL_DEVICE_PARENT_DEVICE), halves[1].get());
  ASSERT_EQ(quarters.size(), 4u);
  fill_on(quarters[0]);
  EXPECT_EQ(last_mask_cus(), cu_range(66, 16));
  fill_on(quarters[3]);
  EXPECT_EQ(last_mask_cus(), cu_range(66 + 48, 16));
  std::vector<Device> counted = partition(
      halves[0], {CL_DEVICE_PARTITION_BY_COUNTS, 3, 9, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0});
  EXPECT_EQ(units(counted), (std::vector<cl_uint>{3, 9}));
  ASSERT_EQ(counted.size(), 2u);
  // And again: a part of a part.
  std::vector<Device> eighths = partition(counted[1], {CL_DEVICE_PARTITION_EQUALLY, 4, 0});
  ASSERT_EQ(eighths.size(), 2u);
  fill_on(eighths[1]);
  EXPECT_EQ(last_mask_cus(), cu_range(3 + 4, 4));
  // Beyond the parent's units: an invalid count.
  EXPECT_EQ(partition_error(counted[1], {CL_DEVICE_PARTITION_BY_COUNTS, 5, 5,
                                         CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0}),
            CL_INVALID_DEVICE_PARTITION_COUNT);
  // A sub-device outlives its parent's last application reference.
  Device keep = quarters[0];
  halves.clear();
  quarters.clear();
  EXPECT_EQ(units(keep), 16u);
  fill_on(keep);
  EXPECT_EQ(last_mask_cus(), cu_range(66, 16));
}

// One context of the GPU and two of its sub-devices: a buffer filled on one sub-device, copied on
// the other after an event of the first, and read on the parent, with one allocation per buffer.
TEST_F(HipSubDevicesMasks, BuffersAndEventsAcrossSiblingsAndParent) {
  std::vector<Device> subs = partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 64, 0});
  ASSERT_EQ(subs.size(), 2u);
  cl_device_id devices[] = {gpu_, subs[0], subs[1]};
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(nullptr, 3, devices, nullptr, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
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
  std::vector<cl_uint> in(kCount);
  for (size_t i = 0; i < kCount; ++i) in[i] = cl_uint(i * 7);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(q[0], a, CL_TRUE, 0, kCount * 4, in.data(), 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(q[2], a, CL_TRUE, 0, kCount * 4, out.data(), 0, nullptr, nullptr));
  EXPECT_EQ(out, in);
  // One device memory: each buffer allocated once, whichever device used it.
  EXPECT_EQ(allocations() - allocations_before, 2u);
  for (int i = 0; i < 3; ++i) ASSERT_CL(CL_SUCCESS, clFinish(q[i]));
}

// A program built for the parent serves its sub-devices without a build of their own: kernels on
// two sub-devices, the second after the first's event, on one buffer; read on the parent.
TEST_F(HipSubDevicesMasks, KernelsOfTheParentsProgramOnTwoSubDevices) {
  std::vector<Device> subs = partition(gpu_, {CL_DEVICE_PARTITION_EQUALLY, 32, 0});
  ASSERT_EQ(subs.size(), 4u);
  cl_device_id devices[] = {gpu_, subs[0], subs[3]};
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(nullptr, 3, devices, nullptr, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const char* source =
      "kernel void scale(global uint* a, uint k) { a[get_global_id(0)] *= k; }\n"
      "kernel void plus_one(global const uint* a, global uint* b) {\n"
      "  b[get_global_id(0)] = a[get_global_id(0)] + 1u;\n"
      "}\n";
  Program program(clCreateProgramWithSource(context, 1, &source, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &gpu_, "", nullptr, nullptr));
  for (cl_device_id d : {subs[0].get(), subs[3].get()}) {
    cl_build_status status = CL_BUILD_NONE;
    EXPECT_CL(CL_SUCCESS, clGetProgramBuildInfo(program, d, CL_PROGRAM_BUILD_STATUS, sizeof status,
                                                &status, nullptr));
    EXPECT_EQ(status, CL_BUILD_SUCCESS);
  }
  Kernel scale(clCreateKernel(program, "scale", &err));
  ASSERT_CL(CL_SUCCESS, err);
  Kernel plus_one(clCreateKernel(program, "plus_one", &err));
  ASSERT_CL(CL_SUCCESS, err);
  const uint64_t allocations_before = allocations();
  Mem a(clCreateBuffer(context, CL_MEM_READ_WRITE, 1024 * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Mem b(clCreateBuffer(context, CL_MEM_READ_WRITE, 1024 * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const cl_uint k = 3;
  cl_mem am = a, bm = b;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(scale, 0, sizeof am, &am));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(scale, 1, sizeof k, &k));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(plus_one, 0, sizeof am, &am));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(plus_one, 1, sizeof bm, &bm));
  size_t wg = 0;
  EXPECT_CL(CL_SUCCESS, clGetKernelWorkGroupInfo(scale, subs[0], CL_KERNEL_WORK_GROUP_SIZE,
                                                 sizeof wg, &wg, nullptr));
  EXPECT_GT(wg, 0u);
  Queue q0(clCreateCommandQueueWithProperties(context, subs[0], nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Queue q1(clCreateCommandQueueWithProperties(context, subs[3], nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Queue qp(clCreateCommandQueueWithProperties(context, gpu_, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const size_t global = 1024, local = 64;
  Event scaled, added;
  for (int i = 0; i < 40; ++i)  // past a launch batch: graphs of the sub-device's launches too
    ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(q0, scale, 1, nullptr, &global, &local, 0, nullptr,
                                                 i == 39 ? scaled.out() : nullptr));
  ASSERT_CL(CL_SUCCESS, clFlush(q0));
  cl_event wait = scaled;
  ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(q1, plus_one, 1, nullptr, &global, &local, 1, &wait,
                                               added.out()));
  std::vector<cl_uint> out(1024);
  cl_event wait_added = added;
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(qp, b, CL_TRUE, 0, out.size() * 4, out.data(), 1,
                                            &wait_added, nullptr));
  cl_int status = CL_QUEUED;
  ASSERT_CL(CL_SUCCESS, clGetEventInfo(scaled, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                       &status, nullptr));
  EXPECT_EQ(status, CL_COMPLETE);
  EXPECT_EQ(allocations() - allocations_before, 2u);  // one GPU memory for all three devices
  for (Queue* q : {&q0, &q1, &qp}) ASSERT_CL(CL_SUCCESS, clFinish(*q));
}

}  // namespace
