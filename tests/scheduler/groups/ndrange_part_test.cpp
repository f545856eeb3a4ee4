// clEnqueueNDRangeKernelPartMFLD (include/CL/cl_manifold.h) on the CPU: a part runs exactly its
// work-groups, which see the ids of the whole NDRange; parts that cover the NDRange run every
// work-item once; bad parts and devices that run no parts are refused.
#include <CL/cl_manifold.h>

#include <vector>

#include "cl_test.h"

using namespace cltest;

namespace {

const char* kSource = R"CLC(
kernel void ids(global int* group, global int* item, global int* runs) {
  size_t x = get_global_id(0) - get_global_offset(0), y = get_global_id(1);
  size_t i = y * (get_global_size(0)) + x;
  group[i] = (int)(get_group_id(1) * 100 + get_group_id(0));
  item[i] = (int)(get_global_id(1) * 1000 + get_global_id(0));
  if (get_num_groups(0) != get_global_size(0) / get_local_size(0)) item[i] = -2;
  runs[i] += 1;
}
)CLC";

cl_int set_mem(cl_kernel kernel, cl_uint index, cl_mem mem) {
  return clSetKernelArg(kernel, index, sizeof mem, &mem);
}

class NDRangePart : public ::testing::Test {
 protected:
  // An 8x6 NDRange at offset (4, 0), work-groups of 2x3: 4x2 groups.
  static constexpr size_t kW = 8, kH = 6, kLx = 2, kLy = 3, kN = kW * kH;
  static constexpr size_t kOffset[2] = {4, 0}, kGlobal[2] = {kW, kH}, kLocal[2] = {kLx, kLy};

  void SetUp() override {
    std::string why;
    platform_ = findPlatform(&why);
    if (!platform_) GTEST_SKIP() << why;
    part_ = reinterpret_cast<clEnqueueNDRangeKernelPartMFLD_fn>(
        clGetExtensionFunctionAddressForPlatform(platform_, "clEnqueueNDRangeKernelPartMFLD"));
    ASSERT_NE(part_, nullptr) << "clEnqueueNDRangeKernelPartMFLD is not found";
    cl_uint n = 0;
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
    std::vector<cl_device_id> all(n);
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, n, all.data(), nullptr));
    for (cl_device_id d : all)
      if (!cpu_ && isCpuDevice(d) &&
          deviceString(d, CL_DEVICE_NAME).find("Manifold group") == std::string::npos)
        cpu_ = d;
    if (!cpu_) GTEST_SKIP() << "no CPU device";
    cl_int err = -1;
    context_ = Context(clCreateContext(nullptr, 1, &cpu_, nullptr, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    queue_ = Queue(clCreateCommandQueueWithProperties(context_, cpu_, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    program_ = Program(clCreateProgramWithSource(context_, 1, &kSource, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    ASSERT_CL(CL_SUCCESS, clBuildProgram(program_, 1, &cpu_, "", nullptr, nullptr));
    kernel_ = Kernel(clCreateKernel(program_, "ids", &err));
    ASSERT_ERR(CL_SUCCESS, err);
    for (int b = 0; b < 3; ++b) {
      const std::vector<int> init(kN, b == 2 ? 0 : -1);
      bufs_[b] = Mem(clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, kN * 4,
                                    const_cast<int*>(init.data()), &err));
      ASSERT_ERR(CL_SUCCESS, err);
      ASSERT_CL(CL_SUCCESS, set_mem(kernel_, cl_uint(b), bufs_[b]));
    }
  }

  cl_int run_part(const size_t* first, const size_t* count, const size_t* local = kLocal) {
    return part_(queue_, kernel_, 2, kOffset, kGlobal, local, first, count, 0, nullptr, nullptr);
  }
  std::vector<int> read(int b) {
    std::vector<int> out(kN);
    EXPECT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue_, bufs_[b], CL_TRUE, 0, kN * 4, out.data(), 0,
                                              nullptr, nullptr));
    return out;
  }
  // Checks that the work-items of groups [gx0, gx1) x [gy0, gy1) ran `times` times with the
  // whole NDRange's ids, and that no other work-item ran.
  void expect_ran(size_t gx0, size_t gx1, size_t gy0, size_t gy1, int times) {
    const std::vector<int> group = read(0), item = read(1), runs = read(2);
    for (size_t y = 0; y < kH; ++y)
      for (size_t x = 0; x < kW; ++x) {
        const size_t i = y * kW + x, gx = x / kLx, gy = y / kLy;
        const bool inside = gx >= gx0 && gx < gx1 && gy >= gy0 && gy < gy1;
        SCOPED_TRACE("item " + std::to_string(x) + "," + std::to_string(y));
        ASSERT_EQ(runs[i], inside ? times : 0);
        ASSERT_EQ(group[i], inside ? int(gy * 100 + gx) : -1);
        ASSERT_EQ(item[i], inside ? int(y * 1000 + x + kOffset[0]) : -1);
      }
  }

  cl_platform_id platform_ = nullptr;
  clEnqueueNDRangeKernelPartMFLD_fn part_ = nullptr;
  cl_device_id cpu_ = nullptr;
  Context context_;
  Queue queue_;
  Program program_;
  Kernel kernel_;
  Mem bufs_[3];
};

TEST_F(NDRangePart, APartRunsExactlyItsGroupsWithWholeRangeIds) {
  const size_t first[2] = {1, 1}, count[2] = {2, 1};
  ASSERT_CL(CL_SUCCESS, run_part(first, count));
  expect_ran(1, 3, 1, 2, 1);
}

TEST_F(NDRangePart, TwoPartsCoverTheRangeOnce) {
  const size_t first_a[2] = {0, 0}, count_a[2] = {4, 1};
  const size_t first_b[2] = {0, 1}, count_b[2] = {4, 1};
  ASSERT_CL(CL_SUCCESS, run_part(first_a, count_a));
  expect_ran(0, 4, 0, 1, 1);
  cl_event done = nullptr;
  ASSERT_CL(CL_SUCCESS, part_(queue_, kernel_, 2, kOffset, kGlobal, kLocal, first_b, count_b, 0,
                              nullptr, &done));
  ASSERT_CL(CL_SUCCESS, clWaitForEvents(1, &done));
  cl_command_type type = 0;
  ASSERT_CL(CL_SUCCESS, clGetEventInfo(done, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(type, cl_command_type(CL_COMMAND_NDRANGE_KERNEL));
  clReleaseEvent(done);
  expect_ran(0, 4, 0, 2, 1);
}

TEST_F(NDRangePart, TheWholeRangeAsOnePart) {
  const size_t first[2] = {0, 0}, count[2] = {4, 2};
  ASSERT_CL(CL_SUCCESS, run_part(first, count));
  expect_ran(0, 4, 0, 2, 1);
}

TEST_F(NDRangePart, BadPartsAreRefused) {
  const size_t first[2] = {0, 0}, count[2] = {1, 1};
  EXPECT_CL(CL_INVALID_VALUE, run_part(nullptr, count));
  EXPECT_CL(CL_INVALID_VALUE, run_part(first, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, run_part(nullptr, nullptr));
  const size_t zero[2] = {1, 0};
  EXPECT_CL(CL_INVALID_VALUE, run_part(first, zero));
  const size_t past[2] = {4, 0};
  EXPECT_CL(CL_INVALID_VALUE, run_part(past, count));
  const size_t late[2] = {3, 1}, too_many[2] = {2, 1};
  EXPECT_CL(CL_INVALID_VALUE, run_part(late, too_many));
  const size_t all_rows[2] = {1, 3};
  EXPECT_CL(CL_INVALID_VALUE, run_part(first, all_rows));
  EXPECT_CL(CL_INVALID_WORK_GROUP_SIZE, run_part(first, count, nullptr));
  // An empty NDRange has no work-groups to take a part of.
  const size_t empty[2] = {0, kH};
  EXPECT_CL(CL_INVALID_VALUE,
            part_(queue_, kernel_, 2, nullptr, empty, kLocal, first, count, 0, nullptr, nullptr));
  // Nothing ran.
  expect_ran(0, 0, 0, 0, 0);
}

TEST_F(NDRangePart, ErrorsOfClEnqueueNDRangeKernel) {
  const size_t first[2] = {0, 0}, count[2] = {1, 1};
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE, part_(nullptr, kernel_, 2, kOffset, kGlobal, kLocal, first,
                                            count, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_KERNEL,
            part_(queue_, nullptr, 2, kOffset, kGlobal, kLocal, first, count, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_WORK_DIMENSION,
            part_(queue_, kernel_, 0, kOffset, kGlobal, kLocal, first, count, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST,
            part_(queue_, kernel_, 2, kOffset, kGlobal, kLocal, first, count, 1, nullptr, nullptr));
  const size_t huge_local[2] = {kW, kH * 1000};
  EXPECT_NE(CL_SUCCESS, run_part(first, count, huge_local));
  cl_int err = -1;
  Kernel unset(clCreateKernel(program_, "ids", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_CL(CL_INVALID_KERNEL_ARGS,
            part_(queue_, unset, 2, kOffset, kGlobal, kLocal, first, count, 0, nullptr, nullptr));
  expect_ran(0, 0, 0, 0, 0);
}

TEST_F(NDRangePart, AGroupRunsNoParts) {
  auto create = reinterpret_cast<clCreateDeviceGroupMFLD_fn>(
      clGetExtensionFunctionAddressForPlatform(platform_, "clCreateDeviceGroupMFLD"));
  ASSERT_NE(create, nullptr);
  cl_int err = -1;
  cl_device_id group = create(platform_, nullptr, 1, &cpu_, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  {
    Context context(clCreateContext(nullptr, 1, &group, nullptr, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    Queue queue(clCreateCommandQueueWithProperties(context, group, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    Program program(clCreateProgramWithSource(context, 1, &kSource, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &group, "", nullptr, nullptr));
    Kernel kernel(clCreateKernel(program, "ids", &err));
    ASSERT_ERR(CL_SUCCESS, err);
    Mem buf(clCreateBuffer(context, CL_MEM_READ_WRITE, kN * 4, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    for (cl_uint a = 0; a < 3; ++a) ASSERT_CL(CL_SUCCESS, set_mem(kernel, a, buf));
    const size_t first[2] = {0, 0}, count[2] = {1, 1};
    EXPECT_CL(CL_INVALID_OPERATION,
              part_(queue, kernel, 2, kOffset, kGlobal, kLocal, first, count, 0, nullptr, nullptr));
  }
  EXPECT_CL(CL_SUCCESS, clReleaseDevice(group));
}

}  // namespace
