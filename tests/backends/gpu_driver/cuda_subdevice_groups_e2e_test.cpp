// A device group of a real GPU's sub-devices (label gpu; the ctest entry sets
// MANIFOLD_DEVICE_GROUPS=gpu/2): kernels split over the sub-devices' one memory and compute what
// the GPU alone computes, affine writes and scattered writes alike, launch after launch. Skipped,
// visibly, where no group of GPU sub-devices is listed (no GPU, a driver without green contexts).
#include <CL/cl_manifold.h>

#include <string>
#include <vector>

#include "cl_test.h"

namespace {

using namespace cltest;

// The group whose members are sub-devices of a GPU, and those members.
cl_device_id subdevice_group(std::vector<cl_device_id>* members) {
  cl_platform_id platform = findPlatform();
  if (!platform) return nullptr;
  cl_uint n = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 0, nullptr, &n) != CL_SUCCESS) return nullptr;
  std::vector<cl_device_id> devices(n);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, n, devices.data(), nullptr);
  for (cl_device_id d : devices) {
    size_t size = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_GROUP_MEMBERS_MFLD, 0, nullptr, &size) != CL_SUCCESS ||
        size < 2 * sizeof(cl_device_id))
      continue;
    members->assign(size / sizeof(cl_device_id), nullptr);
    clGetDeviceInfo(d, CL_DEVICE_GROUP_MEMBERS_MFLD, size, members->data(), nullptr);
    bool subs = true;
    for (cl_device_id m : *members)
      subs = subs && info<cl_device_id>(clGetDeviceInfo, m, CL_DEVICE_PARENT_DEVICE) != nullptr;
    if (subs) return d;
  }
  return nullptr;
}

TEST(CudaSubDeviceGroupsGpu, KernelsSplitOverSubDevicesComputeTheSameResults) {
  std::vector<cl_device_id> members;
  cl_device_id group = subdevice_group(&members);
  if (!group) GTEST_SKIP() << "no group of GPU sub-devices (MANIFOLD_DEVICE_GROUPS=gpu/2)";
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(nullptr, 1, &group, nullptr, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Queue queue(clCreateCommandQueueWithProperties(context, group, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const char* source =
      "kernel void mix(global uint* a, uint k) {\n"
      "  size_t i = get_global_id(0);\n"
      "  uint v = (uint)i * k;\n"
      "  for (int r = 0; r < 256; ++r) v = v * 1664525u + 1013904223u;\n"
      "  a[i] = v;\n"
      "}\n"
      "kernel void scatter(global uint* out, global const uint* at, global const uint* in) {\n"
      "  size_t i = get_global_id(0);\n"
      "  out[at[i]] = in[i] + 1u;\n"
      "}\n";
  Program program(clCreateProgramWithSource(context, 1, &source, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &group, "", nullptr, nullptr));
  constexpr size_t kCount = size_t(1) << 22;
  Mem a(clCreateBuffer(context, CL_MEM_READ_WRITE, kCount * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Mem out(clCreateBuffer(context, CL_MEM_READ_WRITE, kCount * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  // A permutation: element i goes to (i * 40503 + 7) mod 2^22 (40503 is odd).
  std::vector<cl_uint> at(kCount);
  for (size_t i = 0; i < kCount; ++i) at[i] = cl_uint((i * 40503u + 7u) & (kCount - 1));
  Mem at_buffer(clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, kCount * 4,
                               at.data(), &err));
  ASSERT_CL(CL_SUCCESS, err);
  Kernel mix(clCreateKernel(program, "mix", &err));
  ASSERT_CL(CL_SUCCESS, err);
  Kernel scatter(clCreateKernel(program, "scatter", &err));
  ASSERT_CL(CL_SUCCESS, err);
  const cl_mem a_mem = a.get(), out_mem = out.get(), at_mem = at_buffer.get();
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(scatter, 0, sizeof(cl_mem), &out_mem));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(scatter, 1, sizeof(cl_mem), &at_mem));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(scatter, 2, sizeof(cl_mem), &a_mem));
  std::vector<cl_uint> got(kCount), expected(kCount), scattered(kCount);
  for (cl_uint k = 1; k <= 3; ++k) {
    SCOPED_TRACE("launch " + std::to_string(k));
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(mix, 0, sizeof(cl_mem), &a_mem));
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(mix, 1, sizeof k, &k));
    const size_t global = kCount, local = 256;
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(queue, mix, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(queue, scatter, 1, nullptr, &global, &local, 0,
                                                 nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue, a, CL_TRUE, 0, kCount * 4, got.data(), 0,
                                              nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue, out, CL_TRUE, 0, kCount * 4, scattered.data(),
                                              0, nullptr, nullptr));
    for (size_t i = 0; i < kCount; ++i) {
      cl_uint v = cl_uint(i) * k;
      for (int r = 0; r < 256; ++r) v = v * 1664525u + 1013904223u;
      expected[i] = v;
    }
    ASSERT_EQ(got, expected);
    size_t wrong = 0;
    for (size_t i = 0; i < kCount; ++i) wrong += scattered[at[i]] != expected[i] + 1u;
    EXPECT_EQ(wrong, 0u);
  }
  // Both kernels ran in parts on every member (one memory: even the scatter splits).
  for (cl_kernel kernel : {mix.get(), scatter.get()}) {
    size_t size = 0;
    ASSERT_CL(CL_SUCCESS, clGetKernelWorkGroupInfo(kernel, group, CL_KERNEL_GROUP_SPLIT_MFLD, 0,
                                                   nullptr, &size));
    std::vector<cl_float> split(size / sizeof(cl_float));
    ASSERT_CL(CL_SUCCESS, clGetKernelWorkGroupInfo(kernel, group, CL_KERNEL_GROUP_SPLIT_MFLD, size,
                                                   split.data(), nullptr));
    ASSERT_EQ(split.size(), members.size());
    for (cl_float f : split) EXPECT_GT(f, 0.0f);
  }
}

}  // namespace
