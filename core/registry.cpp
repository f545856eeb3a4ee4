// The drivers and platform setups the layers above core registered at start-up.
#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/log.h"
#include "settings/settings.h"

namespace manifold {
namespace {

// Function-local statics: registrations run from other translation units' static initializers,
// in an order C++ leaves open.
std::vector<std::pair<int, DriverFactory>>& driver_factories() {
  static std::vector<std::pair<int, DriverFactory>> factories;
  return factories;
}
std::vector<PlatformSetup>& platform_setups() {
  static std::vector<PlatformSetup> setups;
  return setups;
}
std::vector<DeviceComposer>& device_composers() {
  static std::vector<DeviceComposer> composers;
  return composers;
}

// MANIFOLD_DISABLE_<NAME>: the driver's name in capitals, '-' as '_'.
std::string disable_variable(const char* driver_name) {
  std::string variable = "MANIFOLD_DISABLE_";
  for (const char* c = driver_name; *c; ++c)
    variable += *c == '-' ? '_' : char(std::toupper(static_cast<unsigned char>(*c)));
  return variable;
}

}  // namespace

DriverRegistration::DriverRegistration(int order, DriverFactory make) {
  driver_factories().emplace_back(order, make);
}

PlatformSetupRegistration::PlatformSetupRegistration(PlatformSetup setup) {
  platform_setups().push_back(setup);
}

std::vector<std::unique_ptr<Driver>> make_registered_drivers() {
  auto factories = driver_factories();
  std::stable_sort(factories.begin(), factories.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::unique_ptr<Driver>> drivers;
  for (const auto& [order, make] : factories) {
    std::unique_ptr<Driver> driver = make();
    const std::string variable = disable_variable(driver->name());
    if (settings().disabled_backends.count(variable)) {
      log_debug("%s: disabled by %s", driver->name(), variable.c_str());
      continue;
    }
    drivers.push_back(std::move(driver));
  }
  return drivers;
}

void run_platform_setups(std::span<Device* const> devices) {
  for (PlatformSetup setup : platform_setups()) setup(devices);
}

DeviceComposerRegistration::DeviceComposerRegistration(DeviceComposer compose) {
  device_composers().push_back(compose);
}

std::vector<Device*> run_device_composers(std::span<Device* const> devices) {
  std::vector<Device*> made;
  for (DeviceComposer compose : device_composers()) {
    std::vector<Device*> more = compose(devices);
    made.insert(made.end(), more.begin(), more.end());
  }
  return made;
}

}  // namespace manifold
