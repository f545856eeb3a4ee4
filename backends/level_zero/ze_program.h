// Programs on a Level Zero device: the SPIR-V pipeline's module loaded with zeModuleCreate,
// kernels made with zeKernelCreate when the application makes kernel objects, and launches.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backends/level_zero/ze_device.h"
#include "core/backend.h"

namespace manifold {
struct KernelOp;
}

namespace manifold::level_zero {

class CommandStream;

// A Level Zero kernel. Its arguments and group size are state of the kernel object, so each
// launch sets them and appends under `mutex` (the driver copies them at the append).
struct ZeKernel {
  ze_kernel_handle_t handle = nullptr;
  std::mutex mutex;
};

class ZeProgram final : public LoadedProgram {
 public:
  // nullptr with *error (the driver's build log) when the module does not build.
  static std::shared_ptr<ZeProgram> load(LevelZeroDevice& device, std::span<const uint8_t> spirv,
                                         std::string* error);
  ZeProgram(const Api& api, ze_module_handle_t module) : api_(api), module_(module) {}
  ~ZeProgram() override;

  // The kernel `name` (made on first request); null when the module has no such kernel.
  const void* kernel_handle(std::string_view name) const override;

 private:
  const Api& api_;
  ze_module_handle_t module_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::unique_ptr<ZeKernel>, std::less<>> kernels_;
};

// Sets `op`'s arguments and group size on its kernel and runs it on `list`. Throws what cannot
// launch (images, non-uniform work-groups, partial NDRanges: not yet
// supported; global offsets where the loader lacks zeKernelSetGlobalOffsetExp).
void launch_kernel(LevelZeroDevice& device, CommandStream& stream, const KernelOp& op);

}  // namespace manifold::level_zero
