// Sub-devices of a real NVIDIA GPU (label gpu): green contexts from clCreateSubDevices, a program
// built for the GPU running on two of its sub-devices at once, an event of one sub-device ordering
// the other's kernel, and one buffer shared by the GPU and its sub-devices. Skipped, visibly, where
// no CUDA device reports a partition scheme (no GPU, or a driver without green contexts).
#include <string>
#include <vector>

#include "cl_test.h"

namespace {

using namespace cltest;

cl_device_id partitionable_cuda_gpu() {
  cl_platform_id platform = findPlatform();
  if (!platform) return nullptr;
  cl_uint n = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 0, nullptr, &n) != CL_SUCCESS) return nullptr;
  std::vector<cl_device_id> devices(n);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, n, devices.data(), nullptr);
  for (cl_device_id d : devices) {
    if (deviceString(d, CL_DEVICE_VERSION).find("Manifold CUDA") == std::string::npos) continue;
    const auto schemes = infoVector<cl_device_partition_property>(clGetDeviceInfo, d,
                                                                  CL_DEVICE_PARTITION_PROPERTIES);
    if (std::find(schemes.begin(), schemes.end(), CL_DEVICE_PARTITION_EQUALLY) != schemes.end())
      return d;
  }
  return nullptr;
}

TEST(CudaSubDevicesGpu, KernelsOnTwoSubDevices) {
  cl_device_id gpu = partitionable_cuda_gpu();
  if (!gpu) GTEST_SKIP() << "no CUDA device with a partition scheme";
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
  const char* source =
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
  for (size_t i = 0; i < kCount; ++i) {
    cl_uint v = cl_uint(i) * k;
    for (int r = 0; r < 64; ++r) v = v * 1664525u + 1013904223u;
    wrong += out[i] != v + 1;
  }
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
  for (size_t i = 0; i < kCount; ++i) {
    cl_uint v = cl_uint(i % half) * cl_uint(i < half ? 2 : 3);
    for (int r = 0; r < 64; ++r) v = v * 1664525u + 1013904223u;
    wrong += out[i] != v;
  }
  EXPECT_EQ(wrong, 0u);
}

}  // namespace
