#include "backends/cpu/cpu_driver.h"

#include <algorithm>

#include "backends/cpu/cpu_device.h"
#include "settings/settings.h"

namespace manifold::cpu {

namespace {
// The host CPU first: the default device. Emulated GPUs (tests) after every real device.
const DriverRegistration kCpuDriver(0, []() -> std::unique_ptr<Driver> {
  return std::make_unique<CpuDriver>();
});
const DriverRegistration kEmulatedGpuDriver(90, []() -> std::unique_ptr<Driver> {
  return std::make_unique<EmulatedGpuDriver>();
});
}  // namespace

std::vector<Device*> CpuDriver::probe() { return {new CpuDevice()}; }

std::vector<Device*> EmulatedGpuDriver::probe() {
  std::vector<Device*> devices;
  for (int i = 0; i < settings().emulated_gpus; ++i)
    devices.push_back(new CpuDevice(CpuDevice::EmulatedGpu{i}));
  return devices;
}

}  // namespace manifold::cpu
