// MANIFOLD_DEVICES and MANIFOLD_DISABLE_<BACKEND> through the ICD loader. Each test runs in a
// process whose environment ctest sets (tests/api/CMakeLists.txt: device_selection.*), with two
// emulated GPUs beside the CPU device.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

cl_platform_id manifold_platform() {
  cl_platform_id platform = nullptr;
  cl_uint count = 0;
  EXPECT_EQ(clGetPlatformIDs(1, &platform, &count), CL_SUCCESS);
  EXPECT_EQ(count, 1u);
  return platform;
}

struct Listed {
  cl_int status;
  std::vector<std::string> names;
  std::vector<cl_device_type> types;
};

Listed list_devices() {
  Listed listed{};
  cl_uint count = 0;
  listed.status = clGetDeviceIDs(manifold_platform(), CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
  if (listed.status != CL_SUCCESS) return listed;
  std::vector<cl_device_id> devices(count);
  EXPECT_EQ(clGetDeviceIDs(manifold_platform(), CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr),
            CL_SUCCESS);
  for (cl_device_id d : devices) {
    char name[256] = {};
    cl_device_type type = 0;
    EXPECT_EQ(clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof(name), name, nullptr), CL_SUCCESS);
    EXPECT_EQ(clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(type), &type, nullptr), CL_SUCCESS);
    listed.names.emplace_back(name);
    listed.types.push_back(type);
  }
  return listed;
}

// MANIFOLD_DEVICES=gpu
TEST(DeviceSelection, ByType) {
  const Listed listed = list_devices();
  ASSERT_EQ(listed.status, CL_SUCCESS);
  ASSERT_EQ(listed.types.size(), 2u);
  for (cl_device_type type : listed.types) EXPECT_TRUE(type & CL_DEVICE_TYPE_GPU);
}

// MANIFOLD_DEVICES=0,GPU 1 : the CPU by its index, the second emulated GPU by a name fragment in
// another case.
TEST(DeviceSelection, ByIndexAndNameFragment) {
  const Listed listed = list_devices();
  ASSERT_EQ(listed.status, CL_SUCCESS);
  ASSERT_EQ(listed.names.size(), 2u);
  EXPECT_TRUE(listed.types[0] & CL_DEVICE_TYPE_CPU);
  EXPECT_NE(listed.names[1].find("emulated GPU 1"), std::string::npos) << listed.names[1];
}

// MANIFOLD_DEVICES=no-such-device: the platform is there, with no device.
TEST(DeviceSelection, NothingMatches) { EXPECT_EQ(list_devices().status, CL_DEVICE_NOT_FOUND); }

// MANIFOLD_DISABLE_CPU=1: only the emulated GPUs.
TEST(DeviceSelection, DisabledBackend) {
  const Listed listed = list_devices();
  ASSERT_EQ(listed.status, CL_SUCCESS);
  ASSERT_EQ(listed.types.size(), 2u);
  for (cl_device_type type : listed.types) EXPECT_FALSE(type & CL_DEVICE_TYPE_CPU);
}

// MANIFOLD_DISABLE_CPU=0: a variable set to 0 disables nothing.
TEST(DeviceSelection, DisableSetToZero) {
  const Listed listed = list_devices();
  ASSERT_EQ(listed.status, CL_SUCCESS);
  ASSERT_EQ(listed.types.size(), 3u);
  EXPECT_TRUE(listed.types[0] & CL_DEVICE_TYPE_CPU);
}

}  // namespace
