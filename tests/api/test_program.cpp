// Program entry points through the loader: the cases the unit tests (tests/unit) leave out.
#include "cl_test.h"

namespace {

using namespace cltest;

class ProgramTest : public ContextTest {
 protected:
  cl_program compiled(const char* source) {
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(context_, 1, &source, nullptr, &err);
    EXPECT_CL_OK(err);
    EXPECT_CL_OK(clCompileProgram(p, 1, &device_, "", 0, nullptr, nullptr, nullptr, nullptr));
    return p;
  }
};

// "clLinkProgram ... returns a valid non-zero program object" and "CL_LINK_PROGRAM_FAILURE if
// there is a failure to link the compiled binaries": the failed program is still returned, so
// that the application can read the link log.
TEST_F(ProgramTest, FailedLinkReturnsTheProgramWithItsLog) {
  cl_program uses = compiled(
      "void missing(global int* p);\n"
      "kernel void k(global int* p) { missing(p); }\n");
  cl_int err = CL_SUCCESS;
  cl_program linked = clLinkProgram(context_, 1, &device_, "", 1, &uses, nullptr, nullptr, &err);
  EXPECT_ERR(CL_LINK_PROGRAM_FAILURE, err);
  ASSERT_NE(linked, nullptr);
  cl_build_status status = CL_BUILD_NONE;
  EXPECT_CL_OK(clGetProgramBuildInfo(linked, device_, CL_PROGRAM_BUILD_STATUS, sizeof(status),
                                     &status, nullptr));
  EXPECT_EQ(status, CL_BUILD_ERROR);
  size_t log_size = 0;
  EXPECT_CL_OK(clGetProgramBuildInfo(linked, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &log_size));
  std::string log(log_size, '\0');
  EXPECT_CL_OK(
      clGetProgramBuildInfo(linked, device_, CL_PROGRAM_BUILD_LOG, log_size, log.data(), nullptr));
  EXPECT_NE(log.find("missing"), std::string::npos) << log;
  EXPECT_CL_OK(clReleaseProgram(linked));
  EXPECT_CL_OK(clReleaseProgram(uses));
}

// A link that succeeds after a failed one: the failure left nothing behind.
TEST_F(ProgramTest, LinkSucceedsWithTheMissingDefinition) {
  cl_program uses = compiled(
      "int twice(int x);\n"
      "kernel void k(global int* p) { p[0] = twice(p[0]); }\n");
  cl_program defines = compiled("int twice(int x) { return 2 * x; }\n");
  cl_program inputs[] = {uses, defines};
  cl_int err = CL_SUCCESS;
  cl_program linked = clLinkProgram(context_, 1, &device_, "", 2, inputs, nullptr, nullptr, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  cl_kernel k = clCreateKernel(linked, "k", &err);
  ASSERT_ERR(CL_SUCCESS, err);
  int value = 21;
  Mem buf = makeBuffer(sizeof(int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &value);
  cl_mem m = buf;
  EXPECT_CL_OK(clSetKernelArg(k, 0, sizeof(cl_mem), &m));
  EXPECT_CL_OK(clEnqueueTask(queue_, k, 0, nullptr, nullptr));
  EXPECT_CL_OK(
      clEnqueueReadBuffer(queue_, m, CL_TRUE, 0, sizeof(int), &value, 0, nullptr, nullptr));
  if (!kernelsComputeNothing(device_)) {
    EXPECT_EQ(value, 42);
  }
  clReleaseKernel(k);
  clReleaseProgram(linked);
  clReleaseProgram(uses);
  clReleaseProgram(defines);
}

}  // namespace
