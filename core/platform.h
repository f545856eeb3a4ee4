// The one Manifold platform: every device of every backend present on this machine.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.h"
#include "core/device.h"
#include "core/object.h"

namespace manifold {

class Platform : public ApiObject<_cl_platform_id, ObjectKind::Platform, CL_INVALID_PLATFORM> {
 public:
  // The platform, its drivers probed on first use. Thread-safe.
  static Platform& get();

  const std::vector<Device*>& devices() const { return devices_; }
  std::vector<Device*> devices_of_type(cl_device_type type) const;
  // The root device whose memory is place `place` (null for host memory or an unused place).
  const Device* device_at_place(MemoryPlace place) const {
    return place < kMaxMemoryPlaces ? device_at_place_[place] : nullptr;
  }
  const std::vector<cl_name_version>& extensions() const { return extensions_; }
  std::string extensions_string() const;

  static constexpr const char* kName = "Manifold";
  static constexpr const char* kVendor = "Manifold Project";
  static constexpr const char* kIcdSuffix = "MFLD";

 private:
  Platform();
  std::vector<std::unique_ptr<Driver>> drivers_;
  std::vector<Device*> devices_;  // root devices, alive for the process lifetime
  std::vector<cl_name_version> extensions_;
  std::array<const Device*, kMaxMemoryPlaces> device_at_place_{};
};

// MANIFOLD_DEVICES: whether the device listed `index`-th (from 0, among every device found, in
// the order `manifold devices` lists them when nothing is hidden) is shown. `selection` is a
// comma-separated list of indexes, types (cpu, gpu, accelerator) and name fragments (any case);
// a device matching any item is shown, and every device when `selection` is empty.
bool device_selected(const Device& device, size_t index, std::string_view selection);

// Joins cl_name_version names with spaces (CL_*_EXTENSIONS strings).
std::string join_names(const std::vector<cl_name_version>& list);
cl_name_version name_version(const char* name, cl_version version);

// Host clock in ns (CLOCK_MONOTONIC_RAW is not used: profiling must match clGetHostTimer).
uint64_t host_time_ns();

}  // namespace manifold
