// The host CPU as an OpenCL device: kernels JIT-compiled for this very CPU, commands run on a
// oneTBB arena with one thread per compute unit. Sub-devices get arenas of their own.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include "compiler/compiler.h"
#include "core/device.h"
#include "core/memory.h"
#include "core/operations.h"

namespace manifold::cpu {

// Bytes of a buffer in the private memory of an emulated GPU (plain host memory).
class PrivateBacking final : public DeviceBacking {
 public:
  PrivateBacking(MemoryPlace place, size_t size);
  ~PrivateBacking() override;
  std::byte* data() const { return data_; }
  void read_to_host(void* host, size_t offset, size_t size) override;

 private:
  std::byte* data_;
};

class CpuDevice final : public Device {
 public:
  // The root device, its limits read from the machine (hwloc, /proc, sysconf).
  CpuDevice();
  // An emulated GPU (MANIFOLD_EMULATED_GPUS): the CPU again, but its buffers live in memory of
  // its own, as a discrete GPU's do, so that the migration layer and mixed-device scheduling
  // can be exercised on a machine without a GPU (CI). Reported as a GPU named "... emulated
  // GPU <index>".
  struct EmulatedGpu {
    int index;
  };
  explicit CpuDevice(EmulatedGpu gpu);
  // A sub-device of `parent` with `compute_units` cores.
  CpuDevice(CpuDevice& parent, cl_uint compute_units, cl_device_partition_property partition_kind,
            std::vector<cl_device_partition_property> partition_type);

  const char* backend_name() const override { return "cpu"; }
  const compiler::Target& compiler_target() const override { return target_; }
  std::shared_ptr<const LoadedProgram> load_program(std::span<const uint8_t> binary,
                                                    std::string* error) override;
  bool shares_host_memory() const override { return !private_memory_; }
  // An emulated GPU reads another's private memory as directly as host memory.
  bool copies_directly_from(const Device& source) const override {
    return private_memory_ && dynamic_cast<const CpuDevice*>(&source) != nullptr;
  }

  // Where `l`'s bytes are for commands of this device: host memory, or the private backing
  // (made on first use) of an emulated GPU.
  std::byte* address(const Location& l);
  std::byte* address(MemObject& mem, size_t offset = 0);  // no reference taken: per launch
  void make_backing(MemObject& mem) override {
    if (memory_place() != kHostPlace) address(mem);
  }
  // DeviceMemory (cpu_memory.cpp): the host's own memory and address space.
  uint64_t allocate(size_t size) override;
  void deallocate(uint64_t address) override;
  size_t mapping_granularity() const override;
  bool reserve_range(uint64_t address, size_t size) override;
  uint64_t reserve_any_range(size_t size, size_t alignment) override;
  bool addresses_are_host_addresses() const override { return true; }
  void release_range(uint64_t address, size_t size) override;
  void map_range(uint64_t address, size_t size) override;
  void unmap_range(uint64_t address, size_t size) override;
  uint64_t import_host(void* host, size_t size) override;

  Device* create_sub_device(cl_uint compute_units, cl_device_partition_property kind,
                            std::vector<cl_device_partition_property> partition_type) override;

 private:
  std::shared_ptr<NativeQueue> create_native_queue_impl(bool out_of_order) override;

  compiler::Target target_;
  tbb::task_arena arena_;
  bool private_memory_ = false;
};

}  // namespace manifold::cpu
