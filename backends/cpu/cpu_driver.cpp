#include "backends/cpu/cpu_driver.h"

#include "backends/cpu/cpu_device.h"

namespace manifold::cpu {

std::vector<Device*> CpuDriver::probe() { return {new CpuDevice()}; }

}  // namespace manifold::cpu
