#include "backends/cpu/cpu_driver.h"

#include "backends/cpu/cpu_device.h"

#include <algorithm>
#include <cstdlib>

namespace manifold::cpu {

std::vector<Device*> CpuDriver::probe() {
  std::vector<Device*> devices{new CpuDevice()};
  // MANIFOLD_EMULATED_GPUS=N: N more CPU devices with memory of their own (tests, CI).
  if (const char* n = std::getenv("MANIFOLD_EMULATED_GPUS"))
    for (int i = 0, count = std::min(std::atoi(n), 8); i < count; ++i)
      devices.push_back(new CpuDevice(CpuDevice::EmulatedGpu{i}));
  return devices;
}

}  // namespace manifold::cpu
