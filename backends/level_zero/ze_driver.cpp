#include "backends/level_zero/ze_driver.h"

#include "backends/level_zero/ze_api.h"
#include "backends/level_zero/ze_device.h"
#include "core/log.h"

namespace manifold::level_zero {

namespace {
// Intel GPUs through the Level Zero loader, loaded with dlopen: none where it is absent.
const DriverRegistration kLevelZeroDriver(30, []() -> std::unique_ptr<Driver> {
  return std::make_unique<LevelZeroDriver>();
});
}  // namespace

std::vector<Device*> LevelZeroDriver::probe() {
  std::string why;
  const Api* a = load_api(&why);
  if (!a) {
    log_debug("level_zero: no devices: %s", why.c_str());
    return {};
  }
  if (ze_result_t r = a->zeInit(ZE_INIT_FLAG_GPU_ONLY); r != ZE_RESULT_SUCCESS) {
    log_debug("level_zero: no devices: zeInit: %s (no Level Zero GPU driver)",
              result_text(r).c_str());
    return {};
  }
  uint32_t driver_count = 0;
  if (ze_result_t r = a->zeDriverGet(&driver_count, nullptr);
      r != ZE_RESULT_SUCCESS || driver_count == 0) {
    log_debug("level_zero: no devices: zeDriverGet: %s, %u driver(s)", result_text(r).c_str(),
              driver_count);
    return {};
  }
  std::vector<ze_driver_handle_t> drivers(driver_count);
  if (a->zeDriverGet(&driver_count, drivers.data()) != ZE_RESULT_SUCCESS) return {};
  drivers.resize(driver_count);
  std::vector<Device*> devices;
  for (ze_driver_handle_t driver : drivers) {
    uint32_t count = 0;
    if (a->zeDeviceGet(driver, &count, nullptr) != ZE_RESULT_SUCCESS || count == 0) continue;
    std::vector<ze_device_handle_t> found(count);
    if (a->zeDeviceGet(driver, &count, found.data()) != ZE_RESULT_SUCCESS) continue;
    found.resize(count);
    for (ze_device_handle_t device : found) {
      try {
        devices.push_back(new LevelZeroDevice(*a, driver, device));
      } catch (const std::exception& e) {
        log_debug("level_zero: device skipped: %s", e.what());
      }
    }
  }
  log_debug("level_zero: %zu driver(s), %zu device(s)", drivers.size(), devices.size());
  return devices;
}

}  // namespace manifold::level_zero
