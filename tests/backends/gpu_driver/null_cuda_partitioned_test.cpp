// GPU sub-devices in the platform's device list, over the simulated CUDA driver (null_cuda.cpp,
// null_cuda_green.cpp) posing as a GPU of 132 SMs with sm_90's SM groups of 8:
// - MANIFOLD_GPU_PARTITION=N (or I:N): the GPU listed as N equal sub-devices in its place, each a
//   root device as the application sees it (no parent, no partition type, reference count 1),
//   with its SMs, buffers that go round trips on each and between them, programs, and
//   sub-devices of its own;
// - MANIFOLD_DEVICE_GROUPS=gpu/N: a group of the GPU's N sub-devices, which split any kernel as
//   the CPU's parts do (one memory), even one whose writes are not proven.
// Kernels compute nothing there: data is checked through fills and reads, a kernel's split
// through CL_KERNEL_GROUP_SPLIT_MFLD. The ctest entries set the variables; run alone, the binary
// partitions the GPU in two.
#include <dlfcn.h>

#include <CL/cl_manifold.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "cl_test.h"

namespace {

using namespace cltest;

// Before Manifold loads (the ctest entries' own values win).
const bool kEnvironment = [] {
  setenv("MANIFOLD_CUDA_DRIVER", NULL_CUDA_PATH, 0);
  setenv("NULL_CUDA_SM_COUNT", "132", 0);
  if (!std::getenv("MANIFOLD_DEVICE_GROUPS")) setenv("MANIFOLD_GPU_PARTITION", "2", 0);
  unsetenv("MANIFOLD_DISABLE_CUDA");
  return true;
}();

constexpr cl_uint kSms = 132, kGranule = 8, kMaxGroups = kSms / kGranule;

uint64_t hook(const char* name) {
  static void* handle = dlopen(NULL_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
  auto fn = reinterpret_cast<uint64_t (*)()>(handle ? dlsym(handle, name) : nullptr);
  return fn ? fn() : ~uint64_t{0};
}

// The parts MANIFOLD_GPU_PARTITION asks of the first GPU (`N` or `0:N`; 0 when unset).
cl_uint requested_parts() {
  const char* v = std::getenv("MANIFOLD_GPU_PARTITION");
  if (!v) return 0;
  std::string s(v);
  if (s.starts_with("0:")) s = s.substr(2);
  return s.find_first_not_of("0123456789") == std::string::npos && !s.empty()
             ? cl_uint(std::stoul(s))
             : 0;
}

cl_uint units(cl_device_id d) {
  return info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_MAX_COMPUTE_UNITS);
}

// The simulated driver's devices the platform lists (groups left out).
std::vector<cl_device_id> simulated_gpus() {
  cl_platform_id platform = findPlatform();
  std::vector<cl_device_id> out;
  cl_uint n = 0;
  if (!platform || clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 0, nullptr, &n) != CL_SUCCESS)
    return out;
  std::vector<cl_device_id> devices(n);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, n, devices.data(), nullptr);
  for (cl_device_id d : devices) {
    const std::string name = deviceString(d, CL_DEVICE_NAME);
    if (name.find("null CUDA driver") != std::string::npos && !name.starts_with("Manifold group"))
      out.push_back(d);
  }
  return out;
}

class PartitionedRoots : public ::testing::Test {
 protected:
  void SetUp() override {
    parts_ = requested_parts();
    if (parts_ == 0) GTEST_SKIP() << "MANIFOLD_GPU_PARTITION does not partition the first GPU";
    roots_ = simulated_gpus();
    ASSERT_FALSE(roots_.empty()) << "no device of the simulated CUDA driver";
  }
  cl_uint parts_ = 0;
  std::vector<cl_device_id> roots_;
};

TEST_F(PartitionedRoots, ListsEqualSubDevicesAsRoots) {
  if (parts_ > kMaxGroups) {
    // More than the driver's SM groups: the GPU stays whole.
    ASSERT_EQ(roots_.size(), 1u);
    EXPECT_EQ(units(roots_[0]), kSms);
    return;
  }
  ASSERT_EQ(roots_.size(), parts_);
  const cl_uint each = units(roots_[0]);
  // The most SMs each, in the driver's groups of 8, that still make that many.
  EXPECT_EQ(each % kGranule, 0u);
  EXPECT_LE(each * parts_, kSms);
  EXPECT_GT((each + kGranule) * parts_, kSms);
  EXPECT_GE(hook("null_cuda_green_contexts"), parts_);
  for (cl_device_id d : roots_) {
    EXPECT_EQ(units(d), each);
    EXPECT_EQ(info<cl_device_type>(clGetDeviceInfo, d, CL_DEVICE_TYPE),
              cl_device_type(CL_DEVICE_TYPE_GPU));
    EXPECT_EQ(info<cl_device_id>(clGetDeviceInfo, d, CL_DEVICE_PARENT_DEVICE), nullptr);
    size_t size = 1;
    EXPECT_CL(CL_SUCCESS, clGetDeviceInfo(d, CL_DEVICE_PARTITION_TYPE, 0, nullptr, &size));
    EXPECT_EQ(size, 0u);
    // Reference counting as for root devices: retain and release succeed and count nothing.
    EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_REFERENCE_COUNT), 1u);
    EXPECT_CL(CL_SUCCESS, clRetainDevice(d));
    EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_REFERENCE_COUNT), 1u);
    EXPECT_CL(CL_SUCCESS, clReleaseDevice(d));
    EXPECT_CL(CL_SUCCESS, clReleaseDevice(d));
    EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, d, CL_DEVICE_REFERENCE_COUNT), 1u);
  }
  // The whole GPU is not listed.
  cl_uint n = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(findPlatform(), CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
  std::vector<cl_device_id> all(n);
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(findPlatform(), CL_DEVICE_TYPE_ALL, n, all.data(), nullptr));
  for (cl_device_id d : all)
    EXPECT_FALSE(units(d) == kSms &&
                 deviceString(d, CL_DEVICE_NAME).find("null CUDA") != std::string::npos);
}

TEST_F(PartitionedRoots, BuffersGoRoundTripsOnEachAndBetweenThem) {
  cl_int err = CL_SUCCESS;
  Context context(
      clCreateContext(nullptr, cl_uint(roots_.size()), roots_.data(), nullptr, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  constexpr size_t kCount = 4096;
  std::vector<Queue> queues;
  for (cl_device_id d : roots_) {
    queues.emplace_back(clCreateCommandQueueWithProperties(context, d, nullptr, &err));
    ASSERT_CL(CL_SUCCESS, err);
  }
  for (size_t i = 0; i < roots_.size(); ++i) {
    SCOPED_TRACE("device " + std::to_string(i));
    Mem buffer(clCreateBuffer(context, CL_MEM_READ_WRITE, kCount * 4, nullptr, &err));
    ASSERT_CL(CL_SUCCESS, err);
    const cl_uint pattern = 0x5a000000u + cl_uint(i);
    ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(queues[i], buffer, &pattern, sizeof pattern, 0,
                                              kCount * 4, 0, nullptr, nullptr));
    std::vector<cl_uint> out(kCount, 0);
    ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queues[i], buffer, CL_TRUE, 0, kCount * 4, out.data(),
                                              0, nullptr, nullptr));
    EXPECT_EQ(std::count(out.begin(), out.end(), pattern), ptrdiff_t(kCount));
    // Written on one, read on the next: one device memory.
    std::vector<cl_uint> in(kCount);
    for (size_t k = 0; k < kCount; ++k) in[k] = cl_uint(k * 7 + i);
    ASSERT_CL(CL_SUCCESS, clEnqueueWriteBuffer(queues[i], buffer, CL_TRUE, 0, kCount * 4, in.data(),
                                               0, nullptr, nullptr));
    const size_t next = (i + 1) % roots_.size();
    ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queues[next], buffer, CL_TRUE, 0, kCount * 4,
                                              out.data(), 0, nullptr, nullptr));
    EXPECT_EQ(out, in);
  }
}

TEST_F(PartitionedRoots, ProgramsBuildAndKernelsLaunchOnEach) {
  cl_int err = CL_SUCCESS;
  Context context(
      clCreateContext(nullptr, cl_uint(roots_.size()), roots_.data(), nullptr, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const char* source = "kernel void fill(global uint* a, uint v) { a[get_global_id(0)] = v; }";
  Program program(clCreateProgramWithSource(context, 1, &source, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 0, nullptr, "", nullptr, nullptr));
  Kernel kernel(clCreateKernel(program, "fill", &err));
  ASSERT_CL(CL_SUCCESS, err);
  Mem buffer(clCreateBuffer(context, CL_MEM_READ_WRITE, 1024 * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const cl_mem mem = buffer.get();
  const cl_uint v = 3;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(kernel, 0, sizeof mem, &mem));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(kernel, 1, sizeof v, &v));
  for (cl_device_id d : roots_) {
    Queue queue(clCreateCommandQueueWithProperties(context, d, nullptr, &err));
    ASSERT_CL(CL_SUCCESS, err);
    const size_t global = 1024;
    EXPECT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0,
                                                 nullptr, nullptr));
    EXPECT_CL(CL_SUCCESS, clFinish(queue));
  }
}

TEST_F(PartitionedRoots, SubDevicesOfARootNameItAsParent) {
  if (parts_ > kMaxGroups) GTEST_SKIP() << "the GPU stays whole";
  cl_device_id root = roots_[0];
  const cl_uint each = units(root);
  // A green context's SMs split in steps of 2.
  const cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, each / 2, 0};
  cl_device_id subs[2] = {};
  cl_uint n = 0;
  ASSERT_CL(CL_SUCCESS, clCreateSubDevices(root, props, 2, subs, &n));
  ASSERT_EQ(n, 2u);
  for (cl_device_id s : subs) {
    EXPECT_EQ(info<cl_device_id>(clGetDeviceInfo, s, CL_DEVICE_PARENT_DEVICE), root);
    EXPECT_EQ(units(s), each / 2);
    EXPECT_EQ(
        infoVector<cl_device_partition_property>(clGetDeviceInfo, s, CL_DEVICE_PARTITION_TYPE),
        (std::vector<cl_device_partition_property>{props[0], props[1], 0}));
    EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, s, CL_DEVICE_REFERENCE_COUNT), 1u);
    EXPECT_CL(CL_SUCCESS, clReleaseDevice(s));
  }
}

// MANIFOLD_DEVICE_GROUPS=gpu/N: the group of the simulated GPU's sub-devices.
class GpuSplitGroups : public ::testing::Test {
 protected:
  void SetUp() override {
    cl_platform_id platform = findPlatform();
    ASSERT_NE(platform, nullptr);
    cl_uint n = 0;
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
    std::vector<cl_device_id> devices(n);
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr));
    for (cl_device_id d : devices) {
      const std::string name = deviceString(d, CL_DEVICE_NAME);
      if (name.starts_with("Manifold group") && name.find("null CUDA") != std::string::npos) {
        group_ = d;
        break;
      }
    }
    if (!group_) GTEST_SKIP() << "no group of GPU sub-devices (MANIFOLD_DEVICE_GROUPS=gpu/N)";
    size_t size = 0;
    ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(group_, CL_DEVICE_GROUP_MEMBERS_MFLD, 0, nullptr, &size));
    members_.resize(size / sizeof(cl_device_id));
    ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(group_, CL_DEVICE_GROUP_MEMBERS_MFLD, size,
                                          members_.data(), nullptr));
  }
  cl_device_id group_ = nullptr;
  std::vector<cl_device_id> members_;
};

TEST_F(GpuSplitGroups, MembersAreEqualSubDevicesOfTheGpu) {
  ASSERT_GE(members_.size(), 2u);
  const std::vector<cl_device_id> gpus = simulated_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  const cl_uint each = units(members_[0]);
  cl_uint total = 0;
  for (cl_device_id m : members_) {
    EXPECT_EQ(info<cl_device_id>(clGetDeviceInfo, m, CL_DEVICE_PARENT_DEVICE), gpus[0]);
    EXPECT_EQ(units(m), each);
    // As requested; each part has the SMs the driver made of that count.
    const auto type =
        infoVector<cl_device_partition_property>(clGetDeviceInfo, m, CL_DEVICE_PARTITION_TYPE);
    ASSERT_EQ(type.size(), 3u);
    EXPECT_EQ(type[0], CL_DEVICE_PARTITION_EQUALLY);
    EXPECT_GE(type[1], cl_device_partition_property(each));
    EXPECT_EQ(type[2], 0);
    total += units(m);
  }
  EXPECT_LE(total, kSms);
  EXPECT_EQ(units(group_), total);
  EXPECT_EQ(info<cl_device_type>(clGetDeviceInfo, group_, CL_DEVICE_TYPE),
            cl_device_type(CL_DEVICE_TYPE_GPU));
  // The members' common limits.
  EXPECT_EQ(info<cl_ulong>(clGetDeviceInfo, group_, CL_DEVICE_GLOBAL_MEM_SIZE),
            info<cl_ulong>(clGetDeviceInfo, members_[0], CL_DEVICE_GLOBAL_MEM_SIZE));
  EXPECT_EQ(info<size_t>(clGetDeviceInfo, group_, CL_DEVICE_MAX_WORK_GROUP_SIZE),
            info<size_t>(clGetDeviceInfo, members_[0], CL_DEVICE_MAX_WORK_GROUP_SIZE));
  const std::string name = deviceString(group_, CL_DEVICE_NAME);
  EXPECT_TRUE(name.starts_with("Manifold group (")) << name;
}

TEST_F(GpuSplitGroups, KernelsSplitOverTheMembersOneMemory) {
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(nullptr, 1, &group_, nullptr, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Queue queue(clCreateCommandQueueWithProperties(context, group_, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  // Affine writes, and writes through an index no compiler can bound: in one memory both split.
  const char* source =
      "kernel void affine(global uint* a) { a[get_global_id(0)] = 1; }\n"
      "kernel void scatter(global uint* a, global const uint* at) {\n"
      "  a[at[get_global_id(0)]] = 2;\n"
      "}\n";
  Program program(clCreateProgramWithSource(context, 1, &source, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &group_, "", nullptr, nullptr));
  constexpr size_t kCount = 1 << 16;
  Mem a(clCreateBuffer(context, CL_MEM_READ_WRITE, kCount * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  Mem at(clCreateBuffer(context, CL_MEM_READ_ONLY, kCount * 4, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, err);
  const cl_uint zero = 0;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueFillBuffer(queue, at, &zero, 4, 0, kCount * 4, 0, nullptr, nullptr));
  for (const char* name : {"affine", "scatter"}) {
    SCOPED_TRACE(name);
    Kernel kernel(clCreateKernel(program, name, &err));
    ASSERT_CL(CL_SUCCESS, err);
    const cl_mem args[] = {a.get(), at.get()};
    for (cl_uint i = 0; i < (std::string(name) == "scatter" ? 2u : 1u); ++i)
      ASSERT_CL(CL_SUCCESS, clSetKernelArg(kernel, i, sizeof(cl_mem), &args[i]));
    const size_t global = kCount, local = 64;
    ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0,
                                                 nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clFinish(queue));
    size_t size = 0;
    ASSERT_CL(CL_SUCCESS, clGetKernelWorkGroupInfo(kernel, group_, CL_KERNEL_GROUP_SPLIT_MFLD, 0,
                                                   nullptr, &size));
    std::vector<cl_float> split(size / sizeof(cl_float));
    ASSERT_CL(CL_SUCCESS, clGetKernelWorkGroupInfo(kernel, group_, CL_KERNEL_GROUP_SPLIT_MFLD, size,
                                                   split.data(), nullptr));
    ASSERT_EQ(split.size(), members_.size());
    for (size_t m = 0; m < split.size(); ++m) EXPECT_GT(split[m], 0.0f) << "member " << m;
  }
}

}  // namespace
