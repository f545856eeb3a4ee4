// The HIP instance of the shared driver backend: what only HIP knows of a device (its
// architecture name, vendor, runtime version), and the one instantiation of the shared code for
// HIP.
#include "backends/hip/hip_device.h"

#include <cstdlib>

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

bool target_for_arch(const std::string& arch, compiler::Target* target) {
  if (arch.rfind("sm_", 0) == 0) {  // HIP's NVIDIA platform
    const int sm = std::atoi(arch.c_str() + 3);
    if (sm < 10) return false;
    *target = compiler::nvptx_target(unsigned(sm / 10), unsigned(sm % 10));
    return true;
  }
  if (arch.rfind("gfx", 0) != 0) return false;
  // "gfx90a:sramecc+:xnack-": the processor, then target features with their sign.
  compiler::Target t;
  t.triple = "amdgcn-amd-amdhsa";
  size_t colon = arch.find(':');
  t.cpu = arch.substr(0, colon);
  while (colon != std::string::npos) {
    const size_t next = arch.find(':', colon + 1);
    const std::string feature = arch.substr(colon + 1, next - colon - 1);
    if (!feature.empty() && (feature.back() == '+' || feature.back() == '-')) {
      if (!t.features.empty()) t.features += ',';
      t.features += feature.back() + feature.substr(0, feature.size() - 1);
    }
    colon = next;
  }
  // What every AMDGPU of the GCN/CDNA/RDNA families runs (the AMDGPU pipeline,
  // compiler/amdgpu_pipeline.cpp, compiles for exactly this target).
  t.opencl_c_version = 300;
  t.opencl_c_features = {"__opencl_c_int64", "__opencl_c_fp64"};
  t.extensions = {
      "cl_khr_byte_addressable_store",    "cl_khr_fp64",
      "cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
      "cl_khr_local_int32_base_atomics",  "cl_khr_local_int32_extended_atomics",
      "cl_khr_int64_base_atomics",        "cl_khr_int64_extended_atomics",
  };
  t.fp64 = true;
  t.images = false;  // no image support on HIP devices (texture objects are not wired up)
  *target = std::move(t);
  return true;
}

HipDevice* make_device(CUdevice device, int ordinal) {
  const Api& a = api();
  gpu::DeviceFacts facts;
  facts.arch = arch_name(device);
  if (!target_for_arch(facts.arch, &facts.target))
    fail(CL_DEVICE_NOT_AVAILABLE, "no compiler target for architecture '" + facts.arch + "'");
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
