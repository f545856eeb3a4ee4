// What the device-group tests share: two emulated GPUs (set before the platform starts), the
// platform's clCreateDeviceGroupMFLD, the CPU, the emulated GPUs and a driver's GPU if any, and
// the CPU's two halves.
#pragma once

#include <CL/cl_manifold.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "cl_test.h"

namespace group_test {

using namespace cltest;

inline const bool kEmulated = [] {
  return setenv("MANIFOLD_EMULATED_GPUS", "2", /*overwrite=*/0) == 0;
}();

class GroupFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kEmulated);
    std::string why;
    platform_ = findPlatform(&why);
    if (!platform_) GTEST_SKIP() << why;
    create_ = reinterpret_cast<clCreateDeviceGroupMFLD_fn>(
        clGetExtensionFunctionAddressForPlatform(platform_, "clCreateDeviceGroupMFLD"));
    ASSERT_NE(create_, nullptr) << "clCreateDeviceGroupMFLD is not found";
    cl_uint n = 0;
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
    std::vector<cl_device_id> all(n);
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, n, all.data(), nullptr));
    for (cl_device_id d : all) {
      const std::string name = deviceString(d, CL_DEVICE_NAME);
      if (name.find("Manifold group") != std::string::npos) continue;
      const bool emulated = name.find("emulated GPU") != std::string::npos;
      if (emulated) emulated_.push_back(d);
      if (isCpuDevice(d) && !cpu_) cpu_ = d;
      if (!isCpuDevice(d) && !emulated && !native_gpu_) native_gpu_ = d;
    }
    ASSERT_NE(cpu_, nullptr);
  }

  // The CPU's two halves (sub-devices of one core each on a two-core machine); the caller
  // releases them.
  std::vector<cl_device_id> cpu_halves() {
    const cl_uint units = deviceInfo<cl_uint>(cpu_, CL_DEVICE_MAX_COMPUTE_UNITS);
    if (units < 2) return {};
    const cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY,
                                                  cl_device_partition_property(units / 2), 0};
    std::vector<cl_device_id> halves(2);
    cl_uint got = 0;
    EXPECT_CL(CL_SUCCESS, clCreateSubDevices(cpu_, props, 2, halves.data(), &got));
    halves.resize(std::min<cl_uint>(got, 2));
    return halves;
  }

  cl_platform_id platform_ = nullptr;
  clCreateDeviceGroupMFLD_fn create_ = nullptr;
  cl_device_id cpu_ = nullptr;
  cl_device_id native_gpu_ = nullptr;  // a GPU of a driver (CUDA, HIP, Level Zero), not emulated
  std::vector<cl_device_id> emulated_;
};

}  // namespace group_test
