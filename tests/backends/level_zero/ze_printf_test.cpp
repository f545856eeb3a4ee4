// printf on the Level Zero backend's device, through the real loader and the test driver: the
// SPIR-V pipeline's OpenCL.std printf, read back by the driver's SPIR-V reader, prints when the
// launch completes, as Intel's driver does, and one launch prints at most
// CL_DEVICE_PRINTF_BUFFER_SIZE bytes: the calls that no longer fit return -1.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ze_test_devices.h"

namespace {

cl_device_id test_driver_device() { return ze_test::find_device(true); }

class LevelZeroPrintf : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = test_driver_device();
    ASSERT_NE(device_, nullptr) << "the test driver's device (ZE_ENABLE_ALT_DRIVERS)";
    cl_int error = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &error);
    ASSERT_EQ(error, CL_SUCCESS);
    queue_ = clCreateCommandQueueWithProperties(context_, device_, nullptr, &error);
    ASSERT_EQ(error, CL_SUCCESS);
  }
  void TearDown() override {
    if (kernel_) clReleaseKernel(kernel_);
    if (program_) clReleaseProgram(program_);
    if (status_) clReleaseMemObject(status_);
    if (queue_) clReleaseCommandQueue(queue_);
    if (context_) clReleaseContext(context_);
  }

  void build(const std::string& source, const char* name) {
    const char* text = source.c_str();
    cl_int error = CL_SUCCESS;
    program_ = clCreateProgramWithSource(context_, 1, &text, nullptr, &error);
    ASSERT_EQ(error, CL_SUCCESS);
    if (clBuildProgram(program_, 1, &device_, "", nullptr, nullptr) != CL_SUCCESS) {
      size_t size = 0;
      clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      FAIL() << log;
    }
    kernel_ = clCreateKernel(program_, name, &error);
    ASSERT_EQ(error, CL_SUCCESS);
  }

  // Runs the kernel over `items` work-items (its first argument: one int per item for
  // printf's results); what the launch printed, and the results.
  std::string run(size_t items, size_t group, std::vector<cl_int>* results) {
    cl_int error = CL_SUCCESS;
    if (status_) clReleaseMemObject(status_);
    status_ = clCreateBuffer(context_, CL_MEM_READ_WRITE, items * sizeof(cl_int), nullptr, &error);
    EXPECT_EQ(error, CL_SUCCESS);
    EXPECT_EQ(clSetKernelArg(kernel_, 0, sizeof status_, &status_), CL_SUCCESS);
    testing::internal::CaptureStdout();
    EXPECT_EQ(
        clEnqueueNDRangeKernel(queue_, kernel_, 1, nullptr, &items, &group, 0, nullptr, nullptr),
        CL_SUCCESS);
    EXPECT_EQ(clFinish(queue_), CL_SUCCESS);
    std::string printed = testing::internal::GetCapturedStdout();
    results->assign(items, 7);
    EXPECT_EQ(clEnqueueReadBuffer(queue_, status_, CL_TRUE, 0, items * sizeof(cl_int),
                                  results->data(), 0, nullptr, nullptr),
              CL_SUCCESS);
    return printed;
  }

  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  cl_kernel kernel_ = nullptr;
  cl_mem status_ = nullptr;
};

TEST_F(LevelZeroPrintf, ScalarsStringsAndVectors) {
  build(R"CL(
kernel void say(global int* status, int v, float f) {
  if (get_global_id(0) != 0) { status[get_global_id(0)] = 0; return; }
  status[0] = printf("v=%d f=%.2f s=%s %v4hlu|%v2hlf|%c\n", v, f, "text", (uint4)(5, 6, 7, 8),
                     (float2)(0.5f, f), 'x');
})CL",
        "say");
  const cl_int v = 42;
  const cl_float f = 2.25f;
  ASSERT_EQ(clSetKernelArg(kernel_, 1, sizeof v, &v), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(kernel_, 2, sizeof f, &f), CL_SUCCESS);
  std::vector<cl_int> results;
  EXPECT_EQ(run(64, 32, &results), "v=42 f=2.25 s=text 5,6,7,8|0.500000,2.250000|x\n");
  EXPECT_EQ(results, std::vector<cl_int>(64, 0));
}

TEST_F(LevelZeroPrintf, ALaunchPrintsAtMostTheBufferSize) {
  size_t buffer_size = 0;
  ASSERT_EQ(clGetDeviceInfo(device_, CL_DEVICE_PRINTF_BUFFER_SIZE, sizeof buffer_size, &buffer_size,
                            nullptr),
            CL_SUCCESS);
  ASSERT_EQ(buffer_size, size_t(ze_test::kPrintfBufferSize));
  // Lines of 64 bytes: "item 00000000 ", dots, a newline.
  constexpr size_t kLine = 64;
  build(
      "kernel void lines(global int* status) {\n"
      "  status[get_global_id(0)] = printf(\"item %08u " +
          std::string(kLine - 15, '.') + "\\n\", (uint)get_global_id(0));\n}\n",
      "lines");
  const size_t fit = buffer_size / kLine, items = (fit / 256 + 8) * 256;
  std::vector<cl_int> results;
  const std::string printed = run(items, 256, &results);
  const size_t printed_calls = size_t(std::count(results.begin(), results.end(), 0));
  EXPECT_EQ(printed_calls, fit);
  EXPECT_EQ(size_t(std::count(results.begin(), results.end(), -1)), items - fit);
  EXPECT_EQ(printed.size(), fit * kLine);
  EXPECT_EQ(size_t(std::count(printed.begin(), printed.end(), '\n')), fit);
  // Each launch has the whole buffer again.
  const std::string again = run(256, 256, &results);
  EXPECT_EQ(again.size(), 256 * kLine);
  EXPECT_EQ(results, std::vector<cl_int>(256, 0));
}

}  // namespace
