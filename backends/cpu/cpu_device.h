// The host CPU as an OpenCL device: kernels JIT-compiled for this very CPU, commands run on a
// oneTBB arena with one thread per compute unit. Sub-devices get arenas of their own.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include "compiler/compiler.h"
#include "core/device.h"

namespace manifold::cpu {

class CpuDevice final : public Device {
 public:
  // The root device, its limits read from the machine (hwloc, /proc, sysconf).
  CpuDevice();
  // A sub-device of `parent` with `compute_units` cores.
  CpuDevice(CpuDevice& parent, cl_uint compute_units, cl_device_partition_property partition_kind,
            std::vector<cl_device_partition_property> partition_type);

  const char* backend_name() const override { return "cpu"; }
  const compiler::Target& compiler_target() const override { return target_; }
  std::shared_ptr<const LoadedProgram> load_program(std::span<const uint8_t> binary,
                                                    std::string* error) override;
  bool shares_host_memory() const override { return true; }
  Device* create_sub_device(cl_uint compute_units, cl_device_partition_property kind,
                            std::vector<cl_device_partition_property> partition_type) override;

 private:
  std::shared_ptr<NativeQueue> create_native_queue_impl(bool out_of_order) override;

  compiler::Target target_;
  tbb::task_arena arena_;
};

}  // namespace manifold::cpu
