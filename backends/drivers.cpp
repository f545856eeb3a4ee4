// The drivers compiled into this build, in the order their devices are listed.
#include "backends/cpu/cpu_driver.h"
#include "core/backend.h"

namespace manifold {

std::vector<std::unique_ptr<Driver>> make_drivers() {
  std::vector<std::unique_ptr<Driver>> drivers;
  drivers.push_back(std::make_unique<cpu::CpuDriver>());
  return drivers;
}

}  // namespace manifold
