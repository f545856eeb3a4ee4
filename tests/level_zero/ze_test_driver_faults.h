// Faults the Level Zero test driver can be told to produce, so that tests reach the backend's
// error paths: call zeTestInjectFault (exported by the driver library; find it with dlopen of
// ZE_ENABLE_ALT_DRIVERS and RTLD_NOLOAD) with one of these and a count.
#pragma once

namespace ze_test {

enum Fault : int {
  kFaultRejectModules = 1,      // the next `count` zeModuleCreate fail with a build log
  kFaultOutOfDeviceMemory = 2,  // the next `count` zeMemAllocDevice fail
  kFaultDeviceLost = 3,         // from now on: the device is lost (commands never complete)
};

using InjectFault = void (*)(int fault, int count);
inline constexpr const char* kInjectFaultSymbol = "zeTestInjectFault";

}  // namespace ze_test
