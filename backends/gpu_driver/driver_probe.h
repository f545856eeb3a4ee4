// Device discovery through a vendor's driver table, the same for every vendor of the shared
// driver backend (backends/cuda/cuda_driver.cpp, backends/hip/hip_driver.cpp): a missing library
// or no GPU means no devices, and MANIFOLD_DEBUG says why; a device that fails to open is
// skipped with its reason.
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "backends/gpu_driver/driver_api.h"
#include "core/device.h"
#include "core/log.h"

namespace manifold::gpu {

// `load` loads the vendor's table (nullptr with *why); `make_device(handle, ordinal)` opens one
// device; `version_label` names what Api::driver_version is in the summary line.
template <class V, class Load, class MakeDevice>
std::vector<Device*> probe_devices(Load load, MakeDevice make_device, const char* version_label) {
  std::string why;
  const Api* a = load(&why);
  if (!a) {
    log_debug("%s: no devices: %s", V::kName, why.c_str());
    return {};
  }
  int count = 0;
  if (CUresult r = a->cuDeviceGetCount(&count); r != CUDA_SUCCESS || count == 0) {
    log_debug("%s: no devices (device count: %s, %d)", V::kName, V::error_text(r).c_str(), count);
    return {};
  }
  std::vector<Device*> devices;
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    if (a->cuDeviceGet(&device, i) != CUDA_SUCCESS) continue;
    try {
      devices.push_back(make_device(device, i));
    } catch (const std::exception& e) {
      log_debug("%s: device %d skipped: %s", V::kName, i, e.what());
    }
  }
  log_debug("%s: %s %d, %zu device(s)", V::kName, version_label, a->driver_version, devices.size());
  return devices;
}

}  // namespace manifold::gpu
