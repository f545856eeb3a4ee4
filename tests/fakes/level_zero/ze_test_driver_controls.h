// What tests can ask of the Level Zero test driver beyond the Level Zero API, through functions
// the driver library exports (find them with dlopen of ZE_ENABLE_ALT_DRIVERS and RTLD_NOLOAD):
// faults, so that tests reach the backend's error paths (zeTestInjectFault with one of the
// faults below and a count), and what the driver saw (zeTestWaitsAppended).
#pragma once

namespace ze_test {

enum Fault : int {
  kFaultRejectModules = 1,      // the next `count` zeModuleCreate fail with a build log
  kFaultOutOfDeviceMemory = 2,  // the next `count` zeMemAllocDevice fail
  kFaultDeviceLost = 3,         // from now on: the device is lost (commands never complete)
  kFaultRefuseLaunches = 4,     // the next `count` zeCommandListAppendLaunchKernel fail
};

using InjectFault = void (*)(int fault, int count);
inline constexpr const char* kInjectFaultSymbol = "zeTestInjectFault";

// How many events appended commands have waited for so far (wait lists and
// zeCommandListAppendWaitOnEvents): waits between queues made on the device, not the host.
using WaitsAppended = unsigned long (*)();
inline constexpr const char* kWaitsAppendedSymbol = "zeTestWaitsAppended";

}  // namespace ze_test
