// A device as another process needs to know it to stand in for it: everything clGetDeviceInfo
// reports and the compiler target its programs are built for, as bytes. manifold-server gets it
// from its own platform (clGetDeviceInfo CL_DEVICE_DESCRIPTION_MFLD) and sends it to clients,
// whose remote devices report the same values and build programs for the same target.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "core/device.h"

namespace manifold {

struct DeviceDescription {
  DeviceInfo info;
  compiler::Target target;
  std::string backend;  // Device::backend_name()
  // Whether kernels of the device may run a part of an NDRange's work-groups.
  bool runs_partial_ranges = false;
  // The compiler that builds for it (compiler::producer_id()): programs built by another one do
  // not load.
  std::string producer;
};

std::vector<std::byte> encode_device_description(const DeviceDescription& description);
// nullopt, with the reason in *error, for bytes of another format version or malformed bytes.
std::optional<DeviceDescription> decode_device_description(std::span<const std::byte> bytes,
                                                           std::string* error);

// The description of `device` (what CL_DEVICE_DESCRIPTION_MFLD returns).
DeviceDescription describe_device(const Device& device);

}  // namespace manifold
