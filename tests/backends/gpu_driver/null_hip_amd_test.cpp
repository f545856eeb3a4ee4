// The HIP backend's AMD path without an AMD GPU: the simulated HIP runtime (null_hip) poses as a
// gfx90a (NULL_HIP_ARCH), so the device shows AMD's facts and compiles for the AMDGPU target
// (triple amdgcn-amd-amdhsa, cpu gfx90a). Until the AMDGPU pipeline is in, a build fails with a
// build log that says why; once it is, the kernel's code object loads and launches (kernels
// compute nothing there).
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cl_test.h"

namespace {

using namespace cltest;

class NullHipAmd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Before Manifold loads (the first OpenCL call).
    setenv("MANIFOLD_HIP_RUNTIME", NULL_HIP_PATH, 1);
    setenv("MANIFOLD_DISABLE_CUDA", "1", 1);
    setenv("NULL_HIP_ARCH", "gfx90a:sramecc+:xnack-", 1);
  }
  void SetUp() override {
    cl_platform_id platform = findPlatform();
    ASSERT_NE(platform, nullptr);
    cl_uint n = 0;
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device_, &n))
        << "the HIP shim did not load (MANIFOLD_DEBUG=1 says why)";
  }
  cl_device_id device_ = nullptr;
};

TEST_F(NullHipAmd, DeviceShowsAmdFacts) {
  EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_VENDOR_ID), 0x1002u);
  EXPECT_EQ(deviceString(device_, CL_DEVICE_VENDOR), "Advanced Micro Devices, Inc.");
  EXPECT_NE(deviceString(device_, CL_DEVICE_VERSION).find("HIP"), std::string::npos);
  EXPECT_NE(deviceString(device_, CL_DRIVER_VERSION).find("gfx90a"), std::string::npos);
  EXPECT_EQ(deviceInfo<cl_bool>(device_, CL_DEVICE_IMAGE_SUPPORT), cl_bool(CL_FALSE));
  EXPECT_GT(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_COMPUTE_UNITS), 0u);
  EXPECT_GT(deviceInfo<cl_ulong>(device_, CL_DEVICE_LOCAL_MEM_SIZE), 0u);
}

TEST_F(NullHipAmd, ProgramsBuildForAmdgpuOrSayWhyNot) {
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const char* source = "kernel void k(global int* a) { a[get_global_id(0)] = 1; }";
  Program program(clCreateProgramWithSource(context, 1, &source, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const cl_int built = clBuildProgram(program, 1, &device_, "", nullptr, nullptr);
  size_t size = 0;
  clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  if (built != CL_SUCCESS) {
    EXPECT_EQ(Err(CL_BUILD_PROGRAM_FAILURE), Err(built));
    EXPECT_NE(log.find_first_not_of(std::string(" \t\n\0", 4)), std::string::npos)
        << "an empty build log";
    GTEST_SKIP() << "no AMDGPU pipeline in this build; the build log says: " << log;
  }
  Kernel kernel(clCreateKernel(program, "k", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem buffer(clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(cl_int), nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  cl_mem b = buffer;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(kernel, 0, sizeof b, &b));
  Queue queue(clCreateCommandQueueWithProperties(context, device_, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const size_t global = 64;
  ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0,
                                               nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clFinish(queue));
}

}  // namespace
