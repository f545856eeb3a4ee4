// Sub-devices of a real GPU (label gpu), on each backend that partitions it: CUDA's (green
// contexts) and HIP's (CU masks; on an NVIDIA GPU through the HIP-over-CUDA shim,
// MANIFOLD_HIP_RUNTIME=libhip_over_cuda.so, which maps them onto green contexts). A program built
// for the GPU running on two of its sub-devices at once, an event of one sub-device ordering the
// other's kernel, one buffer shared by the GPU and its sub-devices, and a kernel on a sub-device
// of a sub-device. Skipped, visibly, where no device of the backend reports a partition scheme
// (no GPU, no HIP runtime, or a driver without green contexts).
#include <algorithm>
#include <string>
#include <vector>

#include "cl_test.h"

namespace {

using namespace cltest;

// The first GPU of `backend` ("CUDA", "HIP": CL_DEVICE_VERSION's "Manifold CUDA") that partitions
// equally.
cl_device_id partitionable_gpu(const std::string& backend) {
  cl_platform_id platform = findPlatform();
  if (!platform) return nullptr;
  cl_uint n = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 0, nullptr, &n) != CL_SUCCESS) return nullptr;
  std::vector<cl_device_id> devices(n);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, n, devices.data(), nullptr);
  for (cl_device_id d : devices) {
    if (deviceString(d, CL_DEVICE_VERSION).find("Manifold " + backend) == std::string::npos ||
        kernelsComputeNothing(d))
      continue;
    const auto schemes = infoVector<cl_device_partition_property>(clGetDeviceInfo, d,
                                                                  CL_DEVICE_PARTITION_PROPERTIES);
    if (std::find(schemes.begin(), schemes.end(), CL_DEVICE_PARTITION_EQUALLY) != schemes.end())
      return d;
  }
  return nullptr;
}

// The mark kernel's value for work-item i with factor k.
cl_uint marked_value(size_t i, cl_uint k) {
  cl_uint v = cl_uint(i) * k;
  for (int r = 0; r < 64; ++r) v = v * 1664525u + 1013904223u;
  return v;
}

const char* const kSource =
    "kernel void mark(global uint* a, uint k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint v = (uint)i * k;\n"
    "  for (int r = 0; r < 64; ++r) v = v * 1664525u + 1013904223u;\n"
    "  a[i] = v;\n"
    "}\n"
    "kernel void plus_one(global const uint* a, global uint* b) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] = a[i] + 1u;\n"
    "}\n";

class GpuSubDevices : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    gpu_ = partitionable_gpu(GetParam());
    if (!gpu_) GTEST_SKIP() << "no " << GetParam() << " device with a partition scheme";
  }
  cl_device_id gpu_ = nullptr;
};

TEST_P(GpuSubDevices, KernelsOnTwoSubDevices) {
  cl_device_id gpu = gpu_;
  const cl_uint sms = info<cl_uint>(clGetDeviceInfo, gpu, CL_DEVICE_MAX_COMPUTE_UNITS);
  // The largest equal split into at least two (counts round down to the driver's SM groups).
  cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 0, 0};
  cl_uint count = 0;
  for (cl_uint n = sms / 2; n > 0 && count < 2; --n) {
    props[1] = n;
    if (clCreateSubDevices(gpu, props, 0, nullptr, &count) != CL_SUCCESS) count = 0;
  }
  ASSERT_GE(count, 2u);
  std::vector<cl_device_id> subs(count);
  ASSERT_CL(CL_SUCCESS, clCreateSubDevices(gpu, props, count, subs.data(), nullptr));
  std::vector<Device> owned;
  for (cl_device_id d : subs) owned.emplace_back(d);
  const cl_uint sub_sms = info<cl_uint>(clGetDeviceInfo, subs[0], CL_DEVICE_MAX_COMPUTE_UNITS);
  EXPECT_GT(sub_sms, 0u);
  EXPECT_LE(sub_sms * 2, sms);

  cl_device_id devices[] = {gpu, subs[0], subs[1]};
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(nullptr, 3, devices, nullptr, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const char* source = kSource;
  Program program(clCreateProgramWithSource(context, 1, &source, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &gpu, "", nullptr, nullptr));  // the parent's
  Kernel mark(clCreateKernel(program, "mark", &err));
  ASSERT_CL(CL_SUCCESS, err);
  Kernel plus_one(clCreateKernel(program, "plus_one", &err));
  ASSERT_CL(CL_SUCCESS, err);
  Queue q0(clCreateCommandQueueWithProperties(context, subs[0], nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Queue q1(clCreateCommandQueueWithProperties(context, subs[1], nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Queue qp(clCreateCommandQueueWithProperties(context, gpu, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);

  constexpr size_t kCount = size_t(1) << 22;
  Mem a(clCreateBuffer(context, CL_MEM_READ_WRITE, kCount * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Mem b(clCreateBuffer(context, CL_MEM_READ_WRITE, kCount * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  cl_mem am = a, bm = b;
  const cl_uint k = 7;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(mark, 0, sizeof am, &am));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(mark, 1, sizeof k, &k));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(plus_one, 0, sizeof am, &am));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(plus_one, 1, sizeof bm, &bm));
  // a on sub-device 0; b from a on sub-device 1, after sub-device 0's event; read on the GPU.
  const size_t global = kCount;
  Event marked, added;
  ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(q0, mark, 1, nullptr, &global, nullptr, 0, nullptr,
                                               marked.out()));
  ASSERT_CL(CL_SUCCESS, clFlush(q0));
  cl_event wait = marked;
  ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(q1, plus_one, 1, nullptr, &global, nullptr, 1, &wait,
                                               added.out()));
  std::vector<cl_uint> out(kCount);
  cl_event wait_added = added;
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(qp, b, CL_TRUE, 0, kCount * 4, out.data(), 1,
                                            &wait_added, nullptr));
  size_t wrong = 0;
  for (size_t i = 0; i < kCount; ++i) wrong += out[i] != marked_value(i, k) + 1;
  EXPECT_EQ(wrong, 0u);

  // Both sub-devices at once, each on its half of one buffer (sub-buffers), read on the parent.
  const size_t half = kCount / 2;
  cl_buffer_region regions[2] = {{0, half * 4}, {half * 4, half * 4}};
  Queue* queues[2] = {&q0, &q1};
  Mem parts[2];
  for (int s = 0; s < 2; ++s) {
    parts[s].reset(
        clCreateSubBuffer(a, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &regions[s], &err));
    ASSERT_CL(CL_SUCCESS, err);
    Kernel part(clCreateKernel(program, "mark", &err));
    ASSERT_CL(CL_SUCCESS, err);
    cl_mem pm = parts[s];
    const cl_uint ks = cl_uint(s + 2);
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(part, 0, sizeof pm, &pm));
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(part, 1, sizeof ks, &ks));
    ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(*queues[s], part, 1, nullptr, &half, nullptr, 0,
                                                 nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clFlush(*queues[s]));
  }
  ASSERT_CL(CL_SUCCESS, clFinish(q0));
  ASSERT_CL(CL_SUCCESS, clFinish(q1));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(qp, a, CL_TRUE, 0, kCount * 4, out.data(), 0, nullptr, nullptr));
  wrong = 0;
  for (size_t i = 0; i < kCount; ++i)
    wrong += out[i] != marked_value(i % half, cl_uint(i < half ? 2 : 3));
  EXPECT_EQ(wrong, 0u);
}

// A sub-device of a sub-device (a quarter of the GPU) runs the GPU's program; its result is read
// on the GPU itself.
TEST_P(GpuSubDevices, KernelOnASubDeviceOfASubDevice) {
  // Halves, then halves of the second half (each split as the driver rounds it).
  const auto split_in_two = [](cl_device_id d) {
    std::vector<Device> out;
    const cl_uint n = info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_MAX_COMPUTE_UNITS);
    cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 0, 0};
    cl_uint count = 0;
    for (cl_uint each = n / 2; each > 0 && count < 2; --each) {
      props[1] = each;
      if (clCreateSubDevices(d, props, 0, nullptr, &count) != CL_SUCCESS) count = 0;
    }
    if (count < 2) return out;
    std::vector<cl_device_id> raw(count);
    if (clCreateSubDevices(d, props, count, raw.data(), nullptr) != CL_SUCCESS) return out;
    for (cl_device_id s : raw) out.emplace_back(s);
    return out;
  };
  std::vector<Device> halves = split_in_two(gpu_);
  ASSERT_GE(halves.size(), 2u);
  std::vector<Device> quarters = split_in_two(halves[1]);
  if (quarters.size() < 2) GTEST_SKIP() << "the driver does not split a half of the GPU again";
  cl_device_id quarter = quarters[1];
  EXPECT_EQ(info<cl_device_id>(clGetDeviceInfo, quarter, CL_DEVICE_PARENT_DEVICE), halves[1].get());
  EXPECT_LE(info<cl_uint>(clGetDeviceInfo, quarter, CL_DEVICE_MAX_COMPUTE_UNITS) * 2,
            info<cl_uint>(clGetDeviceInfo, halves[1], CL_DEVICE_MAX_COMPUTE_UNITS));

  cl_device_id devices[] = {gpu_, quarter};
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(nullptr, 2, devices, nullptr, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const char* source = kSource;
  Program program(clCreateProgramWithSource(context, 1, &source, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &gpu_, "", nullptr, nullptr));
  Kernel mark(clCreateKernel(program, "mark", &err));
  ASSERT_CL(CL_SUCCESS, err);
  constexpr size_t kCount = size_t(1) << 20;
  Mem a(clCreateBuffer(context, CL_MEM_READ_WRITE, kCount * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  cl_mem am = a;
  const cl_uint k = 5;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(mark, 0, sizeof am, &am));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(mark, 1, sizeof k, &k));
  Queue q(clCreateCommandQueueWithProperties(context, quarter, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Queue qp(clCreateCommandQueueWithProperties(context, gpu_, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const size_t global = kCount;
  Event done;
  for (int i = 0; i < 40; ++i)  // past a launch batch
    ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(q, mark, 1, nullptr, &global, nullptr, 0, nullptr,
                                                 i == 39 ? done.out() : nullptr));
  ASSERT_CL(CL_SUCCESS, clFlush(q));
  std::vector<cl_uint> out(kCount);
  cl_event wait = done;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(qp, a, CL_TRUE, 0, kCount * 4, out.data(), 1, &wait, nullptr));
  size_t wrong = 0;
  for (size_t i = 0; i < kCount; ++i) wrong += out[i] != marked_value(i, k);
  EXPECT_EQ(wrong, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, GpuSubDevices, ::testing::Values("CUDA", "HIP"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           return std::string(p.param);
                         });

}  // namespace
