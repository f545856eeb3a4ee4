#include "backends/cpu/cpu_driver.h"

#include <algorithm>

#include "backends/cpu/cpu_device.h"
#include "core/settings.h"

namespace manifold::cpu {

std::vector<Device*> CpuDriver::probe() {
  std::vector<Device*> devices{new CpuDevice()};
  // MANIFOLD_EMULATED_GPUS=N: N more CPU devices with memory of their own (tests, CI).
  for (int i = 0; i < settings().emulated_gpus; ++i)
    devices.push_back(new CpuDevice(CpuDevice::EmulatedGpu{i}));
  return devices;
}

}  // namespace manifold::cpu
