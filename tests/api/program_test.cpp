// Program entry points through the loader: the cases api_kernel_test.cpp leaves out.
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
  // Runs kernel "k" of `program` once on a buffer holding `value`; expects `expected` back
  // (where kernels compute anything).
  void expectKernelTurns(cl_program program, int value, int expected) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(program, "k", &err);
    ASSERT_ERR(CL_SUCCESS, err);
    Mem buf = makeBuffer(sizeof(int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &value);
    cl_mem m = buf;
    EXPECT_CL_OK(clSetKernelArg(k, 0, sizeof(cl_mem), &m));
    EXPECT_CL_OK(clEnqueueTask(queue_, k, 0, nullptr, nullptr));
    EXPECT_CL_OK(
        clEnqueueReadBuffer(queue_, m, CL_TRUE, 0, sizeof(int), &value, 0, nullptr, nullptr));
    if (!kernelsComputeNothing(device_)) {
      EXPECT_EQ(expected, value);
    }
    clReleaseKernel(k);
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
  expectKernelTurns(linked, 21, 42);
  clReleaseProgram(linked);
  clReleaseProgram(uses);
  clReleaseProgram(defines);
}

// CTS compiler execute_after_serialize_reload_object/library and program_binary_type: a
// compiled object saved with CL_PROGRAM_BINARIES and reloaded with clCreateProgramWithBinary is
// linked as it is (its build status is CL_BUILD_NONE until then), into a library or executable.
TEST_F(ProgramTest, ReloadedCompiledObjectLinksIntoLibraryAndExecutable) {
  cl_program object = compiled("kernel void k(global int* p) { p[get_global_id(0)] += 3; }\n");
  size_t size = 0;
  ASSERT_CL(CL_SUCCESS,
            clGetProgramInfo(object, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
  std::vector<unsigned char> bytes(size);
  unsigned char* binaries[] = {bytes.data()};
  ASSERT_CL(CL_SUCCESS,
            clGetProgramInfo(object, CL_PROGRAM_BINARIES, sizeof binaries, binaries, nullptr));
  const unsigned char* reload[] = {bytes.data()};
  cl_int status = CL_INVALID_VALUE, err = CL_INVALID_VALUE;
  cl_program reloaded =
      clCreateProgramWithBinary(context_, 1, &device_, &size, reload, &status, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  cl_program_binary_type type = 0;
  EXPECT_CL_OK(clGetProgramBuildInfo(reloaded, device_, CL_PROGRAM_BINARY_TYPE, sizeof type, &type,
                                     nullptr));
  EXPECT_EQ(CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, type);
  cl_program library =
      clLinkProgram(context_, 1, &device_, "-create-library", 1, &reloaded, nullptr, nullptr, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_CL_OK(
      clGetProgramBuildInfo(library, device_, CL_PROGRAM_BINARY_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(CL_PROGRAM_BINARY_TYPE_LIBRARY, type);
  cl_program executable =
      clLinkProgram(context_, 1, &device_, "", 1, &reloaded, nullptr, nullptr, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  expectKernelTurns(executable, 4, 7);
  for (cl_program p : {executable, library, reloaded, object}) EXPECT_CL_OK(clReleaseProgram(p));
}

// CTS compiler compile_and_link_status_options_log: with pfn_notify the step runs on a build
// thread, and the status an application reads as soon as the call returns is
// CL_BUILD_IN_PROGRESS (or already the outcome), never CL_BUILD_NONE.
TEST_F(ProgramTest, AsynchronousStepsReportInProgressAtOnce) {
  static std::atomic<int> notified{0};
  auto notify = [](cl_program, void*) { notified.fetch_add(1); };
  for (int round = 0; round < 3; ++round) {
    const char* source = "kernel void k(global float* p) { p[0] = sqrt(p[0]); }";
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(context_, 1, &source, nullptr, &err);
    ASSERT_ERR(CL_SUCCESS, err);
    const int before = notified.load();
    if (round == 0) {
      ASSERT_CL(CL_SUCCESS,
                clCompileProgram(p, 1, &device_, "", 0, nullptr, nullptr, notify, nullptr));
    } else {
      ASSERT_CL(CL_SUCCESS, clBuildProgram(p, 1, &device_, "", notify, nullptr));
    }
    cl_build_status status = CL_BUILD_NONE;
    ASSERT_CL(CL_SUCCESS, clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_STATUS, sizeof status,
                                                &status, nullptr));
    EXPECT_TRUE(status == CL_BUILD_IN_PROGRESS || status == CL_BUILD_SUCCESS) << status;
    while (notified.load() == before) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_CL(CL_SUCCESS, clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_STATUS, sizeof status,
                                                &status, nullptr));
    EXPECT_EQ(CL_BUILD_SUCCESS, status);
    EXPECT_CL_OK(clReleaseProgram(p));
  }
}

// CTS basic progvar_*: CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE counts the program-scope
// variables in the global address space (it was always 0).
TEST_F(ProgramTest, GlobalVariableTotalSizeCountsProgramScopeGlobals) {
  size_t max_size = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(device_, CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE,
                                        sizeof max_size, &max_size, nullptr));
  if (max_size == 0) GTEST_SKIP() << "no program-scope global variables on this device";
  const char* source =
      "global int table[10];\n"
      "global float scale = 2.0f;\n"
      "constant int fixed[4] = {1, 2, 3, 4};\n"
      "kernel void k(global int* p) {\n"
      "  table[p[3]] = p[4];\n"
      "  scale = p[5];\n"
      "  p[0] = table[p[1]] + (int)scale + fixed[p[2]];\n"
      "}\n";
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(context_, 1, &source, nullptr, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(p, 1, &device_, "-cl-std=CL3.0", nullptr, nullptr));
  size_t total = 0;
  ASSERT_CL(CL_SUCCESS,
            clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
                                  sizeof total, &total, nullptr));
  EXPECT_GE(total, 40u);  // the table at least (the optimizer may keep scale in a register)
  EXPECT_CL_OK(clReleaseProgram(p));
}

// clGetKernelSubGroupInfo agrees with what the device reports and with itself: a work-group is
// cut into sub-groups of the device's width along its linear local ids (the CPU's vector width,
// a warp on CUDA), the last one partial.
TEST_F(ProgramTest, KernelSubGroupInfo) {
  const char* source =
      "kernel void k(global uint* p) { p[get_global_id(0)] = get_sub_group_size(); }\n";
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context_, 1, &source, nullptr, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  const cl_uint device_max = deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_NUM_SUB_GROUPS);
  const cl_int built = clBuildProgram(program, 1, &device_, "-cl-std=CL3.0", nullptr, nullptr);
  if (device_max == 0) {
    // Without sub-groups the builtins are not declared, and the query is refused.
    EXPECT_NE(built, CL_SUCCESS);
    clReleaseProgram(program);
    program = compiled("kernel void k(global uint* p) { p[0] = 1; }");
    ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &device_, "", nullptr, nullptr));
    cl_kernel k = clCreateKernel(program, "k", &err);
    ASSERT_ERR(CL_SUCCESS, err);
    size_t value = 0, local = 64;
    EXPECT_CL(CL_INVALID_OPERATION,
              clGetKernelSubGroupInfo(k, device_, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                      sizeof local, &local, sizeof value, &value, nullptr));
    EXPECT_FALSE(deviceInfo<cl_bool>(device_, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS));
    clReleaseKernel(k);
    clReleaseProgram(program);
    return;
  }
  ASSERT_CL(CL_SUCCESS, built);
  cl_kernel k = clCreateKernel(program, "k", &err);
  ASSERT_ERR(CL_SUCCESS, err);
  auto query = [&](cl_kernel_sub_group_info param, const std::vector<size_t>& input) {
    size_t value = 0, size = 0;
    EXPECT_CL(CL_SUCCESS, clGetKernelSubGroupInfo(k, device_, param, input.size() * sizeof(size_t),
                                                  input.data(), sizeof value, &value, &size));
    EXPECT_EQ(size, sizeof(size_t));
    return value;
  };
  const size_t width = query(CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {4096});
  ASSERT_GE(width, 1u);
  ASSERT_LE(width, 128u);  // ballots hold 128 lanes
  size_t kernel_max = 0;
  ASSERT_CL(CL_SUCCESS, clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_WORK_GROUP_SIZE,
                                                 sizeof kernel_max, &kernel_max, nullptr));
  // Local sizes in 1, 2 and 3 dimensions: the widest sub-group and the count.
  const std::vector<std::vector<size_t>> locals = {
      {1}, {7}, {width}, {width + 1}, {3 * width}, {5, 7}, {width, 2}, {3, 4, 5}, {2, 2, 2}};
  for (const std::vector<size_t>& local : locals) {
    size_t items = 1;
    for (size_t l : local) items *= l;
    SCOPED_TRACE(std::to_string(items) + " work-items in " + std::to_string(local.size()) +
                 " dimension(s)");
    EXPECT_EQ(query(CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, local), std::min(width, items));
    EXPECT_EQ(query(CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, local), (items + width - 1) / width);
  }
  const size_t max_sub_groups = query(CL_KERNEL_MAX_NUM_SUB_GROUPS, {});
  EXPECT_EQ(max_sub_groups, (kernel_max + width - 1) / width);
  EXPECT_LE(max_sub_groups, device_max);
  EXPECT_EQ(query(CL_KERNEL_COMPILE_NUM_SUB_GROUPS, {}), 0u);
  // A local size giving each count: its count query answers that count; none beyond the kernel's
  // work-group limit (all zeros).
  for (size_t count : {size_t(1), size_t(2), max_sub_groups}) {
    size_t local[3] = {9, 9, 9};
    ASSERT_CL(CL_SUCCESS,
              clGetKernelSubGroupInfo(k, device_, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                                      sizeof count, &count, sizeof local, local, nullptr));
    EXPECT_LE(local[0] * local[1] * local[2], kernel_max);
    EXPECT_EQ(query(CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, {local[0], local[1], local[2]}), count);
  }
  {
    const size_t count = max_sub_groups + 1;
    size_t local[3] = {9, 9, 9};
    ASSERT_CL(CL_SUCCESS,
              clGetKernelSubGroupInfo(k, device_, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                                      sizeof count, &count, sizeof local, local, nullptr));
    EXPECT_EQ(local[0] + local[1] + local[2], 0u);
  }
  // Bad input: no local size, a size that is not 1 to 3 size_t values, a short result.
  size_t value = 0, local = 64;
  EXPECT_CL(CL_INVALID_VALUE,
            clGetKernelSubGroupInfo(k, device_, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, 0,
                                    nullptr, sizeof value, &value, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clGetKernelSubGroupInfo(k, device_, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, 3, &local,
                                    sizeof value, &value, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clGetKernelSubGroupInfo(k, device_, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                    sizeof local, &local, 2, &value, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clGetKernelSubGroupInfo(k, device_, CL_KERNEL_WORK_GROUP_SIZE, sizeof local, &local,
                                    sizeof value, &value, nullptr));
  // The extension's spelling, where reported, answers alike.
  auto khr = reinterpret_cast<clGetKernelSubGroupInfoKHR_fn>(
      clGetExtensionFunctionAddressForPlatform(platform_, "clGetKernelSubGroupInfoKHR"));
  ASSERT_NE(khr, nullptr);
  value = 0;
  EXPECT_CL(CL_SUCCESS, khr(k, device_, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, sizeof local,
                            &local, sizeof value, &value, nullptr));
  EXPECT_EQ(value, std::min<size_t>(width, 64));
  // cl_khr_subgroups comes with independent forward progress of sub-groups.
  const bool khr_subgroups =
      hasWord(deviceString(device_, CL_DEVICE_EXTENSIONS), "cl_khr_subgroups");
  EXPECT_EQ(khr_subgroups,
            deviceInfo<cl_bool>(device_, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS) != 0);
  clReleaseKernel(k);
  EXPECT_CL_OK(clReleaseProgram(program));
}

}  // namespace
