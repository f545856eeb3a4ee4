// An Intel GPU as an OpenCL device, through the Level Zero loader (loaded with dlopen).
#pragma once

#include <string>

#include "backends/level_zero/ze_api.h"
#include "compiler/compiler.h"
#include "core/device.h"

namespace manifold::level_zero {

// A Level Zero device with its true properties (zeDeviceGet*Properties). Command submission
// (memory, command lists, modules) is not implemented yet: the device reports
// CL_DEVICE_AVAILABLE false, contexts refuse it with CL_DEVICE_NOT_AVAILABLE, and nothing
// reaches the queue or program paths below, which fail clearly should they be reached.
class LevelZeroDevice final : public Device {
 public:
  LevelZeroDevice(const Api& api, ze_driver_handle_t driver, ze_device_handle_t device);

  const char* backend_name() const override { return "level_zero"; }
  const compiler::Target& compiler_target() const override { return target_; }
  std::shared_ptr<const LoadedProgram> load_program(std::span<const uint8_t> binary,
                                                    std::string* error) override;

 private:
  std::shared_ptr<NativeQueue> create_native_queue_impl(bool out_of_order) override;

  ze_device_handle_t device_;
  compiler::Target target_;
};

}  // namespace manifold::level_zero
