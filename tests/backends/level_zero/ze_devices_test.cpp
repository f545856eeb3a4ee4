// The Level Zero backend's device discovery through the real loader (libze_loader.so.1): with
// the test driver selected (ZE_ENABLE_ALT_DRIVERS, set by ctest for WithTestDriver only) the
// platform lists its GPU with the properties the driver reports; without it, nothing extra.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ze_test_devices.h"

namespace {

using ze_test::manifold_platform;

std::vector<cl_device_id> all_devices(cl_platform_id platform) {
  cl_uint count = 0;
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
  std::vector<cl_device_id> devices(count);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr);
  return devices;
}

std::string text_info(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  clGetDeviceInfo(device, what, 0, nullptr, &size);
  std::string s(size, '\0');
  clGetDeviceInfo(device, what, size, s.data(), nullptr);
  if (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <class T>
T info(cl_device_id device, cl_device_info what) {
  T value{};
  EXPECT_EQ(clGetDeviceInfo(device, what, sizeof value, &value, nullptr), CL_SUCCESS);
  return value;
}

std::vector<cl_device_id> level_zero_devices(cl_platform_id platform) {
  std::vector<cl_device_id> out;
  for (cl_device_id d : all_devices(platform))
    if (text_info(d, CL_DEVICE_VERSION).find("Level Zero") != std::string::npos) out.push_back(d);
  return out;
}

TEST(WithTestDriver, ListsTheGpuWithTheDriversProperties) {
  cl_platform_id platform = manifold_platform();
  ASSERT_NE(platform, nullptr);
  const std::vector<cl_device_id> devices = level_zero_devices(platform);
  ASSERT_EQ(devices.size(), 1u) << "the test driver's root device (tiles are sub-devices)";
  cl_device_id d = devices[0];
  EXPECT_EQ(text_info(d, CL_DEVICE_NAME), ze_test::kName);
  EXPECT_EQ(info<cl_device_type>(d, CL_DEVICE_TYPE), cl_device_type(CL_DEVICE_TYPE_GPU));
  EXPECT_EQ(info<cl_uint>(d, CL_DEVICE_VENDOR_ID), ze_test::kVendorId);
  EXPECT_EQ(info<cl_uint>(d, CL_DEVICE_MAX_CLOCK_FREQUENCY), ze_test::kClockMhz);
  EXPECT_EQ(info<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS),
            ze_test::kSlices * ze_test::kSubslicesPerSlice * ze_test::kEusPerSubslice);
  EXPECT_EQ(info<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE), ze_test::kMaxGroupSize);
  EXPECT_EQ(info<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE), ze_test::kMaxAlloc);
  EXPECT_EQ(info<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE), ze_test::kSharedLocalMemory);
  // The driver's argument size, within what 255 SPIR-V parameters of 8 bytes can carry.
  EXPECT_EQ(info<size_t>(d, CL_DEVICE_MAX_PARAMETER_SIZE),
            std::min<size_t>(ze_test::kMaxArgumentsSize, 255 * 8));
  EXPECT_EQ(info<size_t>(d, CL_DEVICE_PRINTF_BUFFER_SIZE), ze_test::kPrintfBufferSize);
  EXPECT_GE(info<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE), ze_test::kMemory);
  EXPECT_EQ(info<size_t>(d, CL_DEVICE_PROFILING_TIMER_RESOLUTION),
            size_t(1000000000ull / ze_test::kTimerTicksPerSecond));
  // SPIR-V is what the device's compiler target emits: the IL list names it.
  EXPECT_NE(text_info(d, CL_DEVICE_IL_VERSION).find("SPIR-V"), std::string::npos);

  // Available: contexts take it.
  EXPECT_EQ(info<cl_bool>(d, CL_DEVICE_AVAILABLE), cl_bool(CL_TRUE));
  cl_int error = CL_INVALID_VALUE;
  cl_context context = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &error);
  EXPECT_EQ(error, CL_SUCCESS);
  ASSERT_NE(context, nullptr);
  clReleaseContext(context);
}

TEST(WithoutTestDriver, ListsNoLevelZeroDevice) {
  cl_platform_id platform = manifold_platform();
  ASSERT_NE(platform, nullptr);
  EXPECT_TRUE(level_zero_devices(platform).empty());
  for (cl_device_id d : all_devices(platform))
    EXPECT_NE(text_info(d, CL_DEVICE_NAME), ze_test::kName);
}

}  // namespace
