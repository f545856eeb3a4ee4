#include "backends/cpu/cpu_driver.h"

#include <algorithm>

#include "backends/cpu/cpu_device.h"
#include "core/settings.h"

namespace manifold::cpu {

std::vector<Device*> CpuDriver::probe() { return {new CpuDevice()}; }

std::vector<Device*> EmulatedGpuDriver::probe() {
  std::vector<Device*> devices;
  for (int i = 0; i < settings().emulated_gpus; ++i)
    devices.push_back(new CpuDevice(CpuDevice::EmulatedGpu{i}));
  return devices;
}

}  // namespace manifold::cpu
