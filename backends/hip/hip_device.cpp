// The HIP instance of the shared driver backend: what only HIP knows of a device (its
// architecture name, vendor, runtime version), and the one instantiation of the shared code for
// HIP.
#include "backends/hip/hip_device.h"

#include "backends/gpu_driver/driver_device_impl.h"
#include "backends/gpu_driver/driver_memory_impl.h"
#include "backends/gpu_driver/driver_ops_impl.h"

namespace manifold::gpu {
template class DriverBacking<hip::HipVendor>;
template class DriverProgram<hip::HipVendor>;
template class DriverDevice<hip::HipVendor>;
template struct DriverStreamApi<hip::HipVendor>;
}  // namespace manifold::gpu

namespace manifold::hip {

bool target_for_arch(const std::string& arch, compiler::Target* target, std::string* why) {
  // HIP names AMD GPUs "gfxNNN[:feature±]" and, on its NVIDIA platform, "sm_XY": both are
  // compiler targets by name (compiler/target_names.cpp); nothing else is a GPU.
  if (arch.rfind("gfx", 0) != 0 && arch.rfind("sm_", 0) != 0) {
    if (why) *why = "unknown GPU architecture '" + arch + "'";
    return false;
  }
  std::optional<compiler::Target> named = compiler::target_named(arch, why);
  if (!named) return false;
  *target = std::move(*named);
  return true;
}

HipDevice* make_device(CUdevice device, int ordinal) {
  const Api& a = api();
  gpu::DeviceFacts facts;
  facts.arch = arch_name(device);
  std::string why;
  if (facts.arch.empty())
    fail(CL_DEVICE_NOT_AVAILABLE, "the HIP runtime does not say the GPU's architecture");
  if (!target_for_arch(facts.arch, &facts.target, &why)) fail(CL_DEVICE_NOT_AVAILABLE, why);
  char name[256] = {};
  a.cuDeviceGetName(name, sizeof(name) - 1, device);
  facts.name = name;
  const bool nvidia = facts.target.triple.rfind("nvptx", 0) == 0;
  facts.vendor = nvidia ? "NVIDIA Corporation" : "Advanced Micro Devices, Inc.";
  facts.vendor_id = nvidia ? 0x10de : 0x1002;
  // hipDriverGetVersion: major * 10000000 + minor * 100000 + patch.
  const int v = a.driver_version;
  facts.driver_version = "Manifold " MANIFOLD_VERSION " (HIP " + std::to_string(v / 10000000) +
                         "." + std::to_string(v / 100000 % 100) + ", " + facts.arch + ")";
  facts.version_suffix = "Manifold HIP";
  return new HipDevice(device, ordinal, std::move(facts));
}

}  // namespace manifold::hip
