// An Intel GPU as an OpenCL device, through the Level Zero loader (loaded with dlopen).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/level_zero/ze_api.h"
#include "compiler/compiler.h"
#include "core/device.h"
#include "core/event.h"
#include "core/memory.h"

namespace manifold::level_zero {

class LevelZeroDevice;
class CommandStream;
class EventPool;
class HostImports;
struct ZeEvent;

// A buffer's memory on a Level Zero device (zeMemAllocDevice), freed with the backing.
class ZeBacking final : public DeviceBacking {
 public:
  ZeBacking(LevelZeroDevice& device, void* pointer);
  ~ZeBacking() override;
  void read_to_host(void* host, size_t offset, size_t size) override;
  void* pointer() const { return pointer_; }
  LevelZeroDevice& device() const { return device_; }

 private:
  LevelZeroDevice& device_;
  void* pointer_;
};

// Throws manifold::Error (`code`, or CL_MEM_OBJECT_ALLOCATION_FAILURE / CL_OUT_OF_HOST_MEMORY
// for the driver's out-of-memory results) when `result` is not success.
void check_ze(ze_result_t result, cl_int code, const char* call);

// A Level Zero device with its true properties (zeDeviceGet*Properties), one Level Zero context
// of its own, buffers in device memory, an immediate command list per queue (ze_queue.cpp) and
// programs as Level Zero modules of the SPIR-V pipeline's output (ze_program.cpp). A device with
// several tiles (zeDeviceGetSubDevices) splits by affinity domain into one sub-device per tile,
// which shares its root's context and memory (ze_sub_devices.cpp).
class LevelZeroDevice final : public Device {
 public:
  // `parent`: the device whose tile `device` is (null for a root device).
  LevelZeroDevice(const Api& api, ze_driver_handle_t driver, ze_device_handle_t device,
                  LevelZeroDevice* parent = nullptr);
  ~LevelZeroDevice() override;

  const char* backend_name() const override { return "level_zero"; }
  // Its launches take whole NDRanges only (ze_program.cpp).
  bool runs_partial_ranges() const override { return false; }
  const compiler::Target& compiler_target() const override { return target_; }
  std::shared_ptr<const LoadedProgram> load_program(std::span<const uint8_t> binary,
                                                    std::string* error) override;

  // One sub-device per tile (CL_DEVICE_AFFINITY_DOMAIN_NUMA or NEXT_PARTITIONABLE).
  AffinityPartition affinity_partition(cl_device_affinity_domain requested) const override;
  Device* create_affinity_sub_device(
      cl_uint index, std::vector<cl_device_partition_property> partition_type) override;

  // DeviceMemory: plain device allocations; host memory imported into the driver, used at its
  // own address (ze_host_imports.h).
  uint64_t allocate(size_t size) override;
  void deallocate(uint64_t address) override;
  uint64_t import_host(void* host, size_t size) override;
  void release_import(void* host) override;

  // The device address of `mem` (its root's backing plus its origin), made on first use.
  void* address(MemObject& mem);
  void make_backing(MemObject& mem) override { address(mem); }

  // Copies between any two of host and device memory and waits for the copy (the device's
  // own command list, not any queue's: DeviceBacking::read_to_host). Thread: any.
  void copy_and_wait(void* dst, const void* src, size_t size);

  const Api& api() const { return api_; }
  ze_context_handle_t context() const { return context_; }
  ze_device_handle_t handle() const { return device_; }
  EventPool& events() { return *events_; }

  // The driver reported the device lost (`call` said so): every later command fails at once.
  void mark_lost(const char* call);
  bool lost() const { return lost_.load(std::memory_order_acquire); }

  // Profiling: the start of `first`'s command and the end of `last`'s (timestamped events of
  // completed commands), in the host clock, become `event`'s START and END.
  void stamp_device_times(Event& event, const ZeEvent& first, const ZeEvent& last);

 private:
  std::shared_ptr<NativeQueue> create_native_queue_impl(bool out_of_order) override;
  // A root device makes its own context; a tile takes its parent's, so that one allocation
  // serves the root and every tile (ze_sub_devices.cpp).
  void init_context(LevelZeroDevice* parent);
  // Finds the tiles and fills the partition properties from them.
  void init_partitions();
  // The root device: it allocates the buffers its tiles share, and outlives them.
  LevelZeroDevice& root_device();

  const Api& api_;
  ze_driver_handle_t driver_;
  ze_device_handle_t device_;
  ze_context_handle_t context_ = nullptr;
  std::vector<ze_device_handle_t> tiles_;
  HostImports* host_imports_ = nullptr;  // the driver's; null where it cannot import
  compiler::Target target_;
  std::unique_ptr<EventPool> events_;
  std::atomic<bool> lost_{false};
  // Device timestamps: nanoseconds per tick, and the bits a kernel timestamp keeps.
  double ns_per_tick_ = 1;
  uint64_t kernel_timestamp_mask_ = ~uint64_t(0);
  // copy_and_wait's command list, made on first use.
  std::mutex copy_mutex_;
  std::unique_ptr<CommandStream> copy_stream_;
};

}  // namespace manifold::level_zero
