// A GPU as an OpenCL device through a vendor's driver API (CUDA; HIP's module API, which repeats
// it): written once, parameterized by a vendor policy V (backends/cuda/cuda_api.h CudaVendor,
// backends/hip/hip_api.h HipVendor) that provides
//   static constexpr const char* kName;     // backend_name(): "cuda", "hip"
//   static constexpr const char* kDisplay;  // in messages: "CUDA", "HIP"
//   static const gpu::Api& api();           // the loaded function table (driver_api.h)
//   static std::string error_text(CUresult);
//   static constexpr gpu::Partitioning kPartitioning;  // sub-devices: green contexts or CU masks
// Each vendor instantiates these templates once (backends/cuda/cuda_device.cpp,
// backends/hip/hip_device.cpp); the calls go straight through V's table.
#pragma once

#include <array>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/gpu_driver/driver_api.h"
#include "compiler/compiler.h"
#include "compiler/gpu_launch_abi.h"
#include "core/device.h"
#include "core/memory.h"

namespace manifold::gpu {
template <class Api>
class Staging;
struct LaunchRecord;

template <class V>
class DriverDevice;
template <class V>
struct DriverStreamApi;
template <class V>
struct GreenPartition;

// What the vendor knows of a device before the shared code reads its attributes.
struct DeviceFacts {
  std::string name;
  std::string vendor;
  cl_uint vendor_id = 0;
  std::string driver_version;  // CL_DRIVER_VERSION
  std::string version_suffix;  // after "OpenCL 3.0 " in CL_DEVICE_VERSION
  compiler::Target target;     // what programs are compiled for (NVPTX or AMDGPU)
  std::string arch;            // "sm_90", "gfx90a": for logs
};

// A buffer's copy in the GPU's memory (the root buffer's; sub-buffers use it at their origin).
template <class V>
class DriverBacking final : public DeviceBacking {
 public:
  // Who frees the memory: the backing (cuMemAlloc'd), or svm/ (mapped at an SVM address).
  enum class Owner { Backing, Svm };
  static const Api& api() { return V::api(); }
  DriverBacking(DriverDevice<V>& device, CUdeviceptr pointer, Owner owner = Owner::Backing);
  ~DriverBacking() override;
  DriverDevice<V>& device() const { return device_; }
  CUdeviceptr pointer() const { return pointer_; }
  void read_to_host(void* host, size_t offset, size_t size) override;
  void set_registered_host(void* host) { registered_host_ = host; }

 private:
  DriverDevice<V>& device_;
  CUdeviceptr pointer_;
  Owner owner_;
  void* registered_host_ = nullptr;  // host memory this backing page-locked (unlocked with it)
};

// A module loaded from PTX or a code object and its kernels' functions and limits.
template <class V>
class DriverProgram final : public LoadedProgram {
 public:
  struct Kernel {
    CUfunction function = nullptr;
    int max_threads = 0, static_shared = 0, local_bytes = 0, registers = 0;
    int dynamic_shared_limit = 0;  // the device's default; raised with cuFuncSetAttribute
  };
  DriverProgram(DriverDevice<V>& device, CUmodule module) : device_(device), module_(module) {}
  static const Api& api() { return V::api(); }
  ~DriverProgram() override;
  void refine_kernel_info(compiler::KernelInfo& info) const override;

  Kernel* find(const std::string& name) const;
  const void* kernel_handle(std::string_view name) const override {
    return find(std::string(name));
  }
  CUmodule module() const { return module_; }
  bool uses_printf() const override { return uses_printf_; }
  bool uses_printf_ = false;     // the PTX calls CUDA's vprintf
  CUdeviceptr launch_state = 0;  // the shim's __manifold_launch (0: the program never reads it)
  size_t launch_state_size = 0;  // its size: all of GpuLaunchState in PTX, 104 bytes in AMDGPU

  // What the shims' __manifold_launch holds (compiler/gpu_launch_abi.h, GpuLaunchState).
  struct LaunchState {
    uint64_t global_offset[3] = {0, 0, 0};
    uint32_t work_dim = 1, pad = 0;
    uint64_t group_offset[3] = {0, 0, 0};
    uint64_t num_groups[3] = {0, 0, 0};      // 0: the launch's grid is the whole NDRange
    uint64_t global_size[3] = {0, 0, 0};     // where num_groups is set
    uint64_t local_size[3] = {0, 0, 0};      // NVPTX, where num_groups is set: the enqueued size
    uint64_t global_id_base[3] = {0, 0, 0};  // NVPTX: the launch's first global ID
    bool operator==(const LaunchState&) const = default;
  };
  static_assert(sizeof(LaunchState) == sizeof(compiler::GpuLaunchState),
                "compiler/gpu_launch_abi.h's GpuLaunchState");
  // What it last holds, written in stream order when a launch needs other values.
  std::mutex launch_mutex;
  LaunchState launch_written;
  // launch_written.work_dim while the rest is 0 (the usual launch), else 0: read without the lock.
  std::atomic<uint32_t> launch_plain_dims{1};

 private:
  friend class DriverDevice<V>;
  DriverDevice<V>& device_;
  CUmodule module_;
  std::unordered_map<std::string, Kernel> kernels_;
};

// One launch into `stream` (driver_ops_impl.h).
template <class V>
CUresult launch_record(const LaunchRecord& record, CUstream stream);

// A GPU, or a sub-device of one: the same GPU restricted to some of its compute units (CUDA: a
// group of its SMs, a green context of its own and its streams in it; HIP: streams made with a
// mask of its CUs, in the GPU's own context), sharing its root device's memory, programs and
// staging (driver_partition_impl.h).
template <class V>
class DriverDevice final : public Device {
 public:
  DriverDevice(CUdevice device, int ordinal, DeviceFacts facts);
  ~DriverDevice() override;

  // clCreateSubDevices by V::kPartitioning: counts in SMs, rounded down as the driver splits
  // green contexts (on sm_90 groups of 8), or in CUs, exact (CU masks).
  std::vector<cl_uint> partition_units(cl_device_partition_property kind,
                                       const std::vector<cl_uint>& requested) const override;
  std::vector<Device*> create_sub_devices(
      cl_device_partition_property kind, const std::vector<cl_uint>& requested,
      const std::vector<cl_device_partition_property>& partition_type) override;
  // The device whose memory, programs and staging this one uses: itself, or the GPU it was
  // partitioned from.
  DriverDevice& root() const { return *root_; }
  // A stream of this device: in its green context or with its CU mask where it has one
  // (non-blocking but for CU-mask streams, which HIP makes with default flags).
  CUstream create_stream();

  static const Api& api() { return V::api(); }
  const char* backend_name() const override { return V::kName; }
  const compiler::Target& compiler_target() const override { return target_; }
  std::shared_ptr<const LoadedProgram> load_program(std::span<const uint8_t> binary,
                                                    std::string* error) override;

  // Makes this context the calling thread's current one: always a driver call. Before what
  // works in the current context: allocations, module loading, stream and event creation, and
  // everything but launches (execute()).
  void make_current() const {
    api().cuCtxSetCurrent(context_);
    thread_current() = context_;
  }
  // Before a launch into one of this device's streams. Such work carries the stream's context:
  // the driver (bench/launch_throughput/ctx_mismatch.c checks it) takes a launch, an async copy
  // or memset, an event record or query on a stream whatever context is current, even none. So
  // only a thread that has not made this context current yet pays the driver call, a cost
  // that would otherwise come with every launch; an application that switches the thread's context
  // itself in between still gets its launches right (gpu_e2e ApplicationSwitchesCudaContexts).
  void ensure_current() const {
    if (thread_current() != context_) make_current();
  }
  CUcontext context() const { return context_; }
  // The context this thread last made current through Manifold.
  [[gnu::visibility("hidden")]] static CUcontext& thread_current() {
    static thread_local CUcontext current = nullptr;
    return current;
  }
  int max_dynamic_shared() const { return max_shared_optin_; }
  // Dynamic shared memory a kernel may use before it must opt in to more (cuFuncSetAttribute).
  int default_dynamic_shared() const { return default_shared_; }
  // The most blocks one launch may have per dimension (a larger NDRange is split).
  const std::array<uint64_t, 3>& max_grid() const { return max_grid_; }

  // ---- Memory ----
  // The device address of `mem` (its root's backing plus its origin), made on first use (its
  // contents arrive by migration, scheduler/migration.h). Throws CL_MEM_OBJECT_ALLOCATION_FAILURE.
  CUdeviceptr address(MemObject& mem);
  void make_backing(MemObject& mem) override { address(mem); }
  // The device address of `image`'s descriptor (compiler/image_abi.h) in this GPU's memory, what
  // kernels receive for the image: made on first use (the pixels' address is fixed from then on)
  // and freed with the image.
  CUdeviceptr image_descriptor_address(MemObject& image);
  // DeviceMemory (driver_memory_impl.h): cuMemAlloc, the driver's virtual memory management,
  // mapped page-locked host memory.
  uint64_t allocate(size_t size) override;
  void deallocate(uint64_t address) override;
  size_t mapping_granularity() const override;
  bool reserve_range(uint64_t address, size_t size) override;
  uint64_t reserve_any_range(size_t size, size_t alignment) override;
  void release_range(uint64_t address, size_t size) override;
  void map_range(uint64_t address, size_t size) override;
  void unmap_range(uint64_t address, size_t size) override;
  uint64_t import_host(void* host, size_t size) override;
  void release_import(void* host) override;

  // Copies from another GPU of the same vendor's memory into this one's, in `stream` (peer access
  // enabled on first use; without it the driver stages through host memory).
  void copy_from_peer(CUdeviceptr dst, DriverDevice& peer, CUdeviceptr src, size_t size,
                      CUstream stream);
  // Makes a command buffer's graph at finalize (driver_ops_impl.h).
  void prepare_recorded(const OperationList& list) override;
  bool copies_directly_from(const Device& source) const override {
    return dynamic_cast<const DriverDevice*>(&source) != nullptr;
  }
  // A stream of its own for copies that the calling thread waits for (DriverBacking::read_to_host).
  CUstream copy_stream();
  // Host memory the device can DMA directly (page-locked by Manifold).
  bool is_pinned(const void* host, size_t size) const;
  // Copies between host memory and the device in stream order; pageable host memory goes
  // through pinned staging buffers (the host side blocks until its part is done).
  void copy_to_device(CUdeviceptr dst, const void* src, size_t size, CUstream stream);
  void copy_to_host(void* dst, CUdeviceptr src, size_t size, CUstream stream);

 private:
  // `what`, with the cause the stream reports after a failed copy.
  std::string copy_failure(const char* what, CUstream stream);
  friend class DriverBacking<V>;
  std::shared_ptr<NativeQueue> create_native_queue_impl(bool out_of_order) override;
  void pin(void* host, size_t size);
  void unpin(void* host);

  CUdevice device_;
  CUcontext context_ = nullptr;
  int max_shared_optin_ = 48 * 1024;
  int default_shared_ = 48 * 1024;
  std::array<uint64_t, 3> max_grid_{2147483647, 65535, 65535};
  compiler::Target target_;

  mutable std::shared_mutex pinned_mutex_;
  std::map<uintptr_t, size_t> pinned_;  // start -> size

  // Pageable transfers (backends/gpu_stream/staging.h): pinned chunks or page-locking.
  std::unique_ptr<Staging<DriverStreamApi<V>>> staging_;

  // Physical memory mapped into reserved ranges, by address (map_range/unmap_range).
  std::mutex mapped_mutex_;
  std::map<uint64_t, std::pair<CUmemGenericAllocationHandle, size_t>> mapped_;

  std::once_flag copy_stream_once_;
  CUstream copy_stream_ = nullptr;
  // Peer access to other GPUs' memory, enabled on first use (direct NVLink/PCIe copies).
  std::mutex peer_mutex_;
  std::vector<const DriverDevice*> peers_;
  void enable_peer_access(const DriverDevice& peer);

  // Partitions (driver_partition_impl.h).
  struct Plan;
  // Sub-device `part` of `plan`, a partition of `parent`.
  DriverDevice(DriverDevice& parent, const Plan& plan, size_t part,
               std::vector<cl_device_partition_property> partition_type);
  // The units of a partition, and with `make` what makes each sub-device (green contexts: each
  // group's descriptor; CU masks: each mask). False where the device cannot be split so.
  bool plan(cl_device_partition_property kind, const std::vector<cl_uint>& requested, bool make,
            Plan& out) const;
  bool plan_green(cl_device_partition_property kind, const std::vector<cl_uint>& requested,
                  bool make, Plan& out) const;
  bool plan_cu_masks(cl_device_partition_property kind, const std::vector<cl_uint>& requested,
                     Plan& out) const;
  bool sm_resource(CUdevResource& resource) const;
  void set_partition_limits();
  void set_green_limits();
  void set_cu_mask_limits();
  // This device's CUs by their index on the GPU (CU masks).
  std::vector<cl_uint> compute_unit_indices() const;
  DriverDevice* root_ = this;
  CUgreenCtx green_ = nullptr;  // a sub-device's (green contexts)
  std::shared_ptr<GreenPartition<V>> partition_;
  std::vector<uint32_t> cu_mask_;  // a sub-device's CUs, as the GPU numbers them (CU masks)
};

}  // namespace manifold::gpu
