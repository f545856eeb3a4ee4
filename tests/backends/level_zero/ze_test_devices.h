// The devices the Level Zero tests use, found through the ICD loader: the test driver's GPU and
// the CPU device of the Manifold platform.
#pragma once

#include <CL/cl.h>

#include <string>
#include <vector>

#include "tests/fakes/level_zero/ze_test_driver_values.h"

namespace ze_test {

inline cl_platform_id manifold_platform() {
  cl_uint count = 0;
  clGetPlatformIDs(0, nullptr, &count);
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  for (cl_platform_id p : platforms) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (std::string(name).find("Manifold") != std::string::npos) return p;
  }
  return nullptr;
}

inline std::string device_text(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  clGetDeviceInfo(device, what, 0, nullptr, &size);
  std::string s(size, '\0');
  clGetDeviceInfo(device, what, size, s.data(), nullptr);
  if (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

// The test driver's root device (`level_zero`), or the CPU device; null when absent.
inline cl_device_id find_device(bool level_zero) {
  cl_platform_id platform = manifold_platform();
  if (!platform) return nullptr;
  cl_uint count = 0;
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
  std::vector<cl_device_id> devices(count);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr);
  for (cl_device_id d : devices) {
    cl_device_type type = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    if (level_zero ? device_text(d, CL_DEVICE_NAME) == kName : type == CL_DEVICE_TYPE_CPU) return d;
  }
  return nullptr;
}

}  // namespace ze_test
