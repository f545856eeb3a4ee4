#include "backends/level_zero/ze_device.h"

#include "backends/level_zero/ze_events.h"
#include "backends/level_zero/ze_host_imports.h"
#include "backends/level_zero/ze_program.h"
#include "backends/level_zero/ze_queue.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "core/platform.h"

namespace manifold::level_zero {
namespace {

void check_ze(ze_result_t result, const char* call) {
  level_zero::check_ze(result, CL_DEVICE_NOT_AVAILABLE, call);
}

cl_device_fp_config fp_config(uint32_t flags) {
  cl_device_fp_config config = 0;
  if (flags & ZE_DEVICE_FP_FLAG_DENORM) config |= CL_FP_DENORM;
  if (flags & ZE_DEVICE_FP_FLAG_INF_NAN) config |= CL_FP_INF_NAN;
  if (flags & ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST) config |= CL_FP_ROUND_TO_NEAREST;
  if (flags & ZE_DEVICE_FP_FLAG_ROUND_TO_ZERO) config |= CL_FP_ROUND_TO_ZERO;
  if (flags & ZE_DEVICE_FP_FLAG_ROUND_TO_INF) config |= CL_FP_ROUND_TO_INF;
  if (flags & ZE_DEVICE_FP_FLAG_FMA) config |= CL_FP_FMA;
  if (flags & ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT) config |= CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT;
  if (flags & ZE_DEVICE_FP_FLAG_SOFT_FLOAT) config |= CL_FP_SOFT_FLOAT;
  return config;
}

}  // namespace

LevelZeroDevice::LevelZeroDevice(const Api& a, ze_driver_handle_t driver, ze_device_handle_t device,
                                 LevelZeroDevice* parent)
    : api_(a), driver_(driver), device_(device) {
  ze_device_properties_t props{};
  check_ze(a.zeDeviceGetProperties(device, &props), "zeDeviceGetProperties");
  if (props.type != ZE_DEVICE_TYPE_GPU)
    fail(CL_DEVICE_NOT_AVAILABLE,
         "not a GPU (Level Zero device type " + std::to_string(props.type) + ")");
  ze_device_compute_properties_t compute{};
  check_ze(a.zeDeviceGetComputeProperties(device, &compute), "zeDeviceGetComputeProperties");
  ze_device_module_properties_t module{};
  check_ze(a.zeDeviceGetModuleProperties(device, &module), "zeDeviceGetModuleProperties");
  uint32_t memory_count = 0;
  check_ze(a.zeDeviceGetMemoryProperties(device, &memory_count, nullptr),
           "zeDeviceGetMemoryProperties");
  std::vector<ze_device_memory_properties_t> memories(memory_count);
  if (memory_count)
    check_ze(a.zeDeviceGetMemoryProperties(device, &memory_count, memories.data()),
             "zeDeviceGetMemoryProperties");
  uint32_t cache_count = 0;
  check_ze(a.zeDeviceGetCacheProperties(device, &cache_count, nullptr),
           "zeDeviceGetCacheProperties");
  std::vector<ze_device_cache_properties_t> caches(cache_count);
  if (cache_count)
    check_ze(a.zeDeviceGetCacheProperties(device, &cache_count, caches.data()),
             "zeDeviceGetCacheProperties");
  uint32_t api_version = 0;
  check_ze(a.zeDriverGetApiVersion(driver, &api_version), "zeDriverGetApiVersion");
  ze_driver_properties_t driver_props{};
  check_ze(a.zeDriverGetProperties(driver, &driver_props), "zeDriverGetProperties");
  uint32_t sub_devices = 0;
  if (a.zeDeviceGetSubDevices(device, &sub_devices, nullptr) != ZE_RESULT_SUCCESS) sub_devices = 0;

  compiler::SpirvDeviceFeatures features;
  features.fp16 = module.flags & ZE_DEVICE_MODULE_FLAG_FP16;
  features.fp64 = module.flags & ZE_DEVICE_MODULE_FLAG_FP64;
  features.int64_atomics = module.flags & ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
  target_ = compiler::spirv_target(features);

  DeviceInfo& d = info_;
  d.type = CL_DEVICE_TYPE_GPU;
  d.name = std::string(props.name, strnlen(props.name, sizeof props.name));
  d.vendor = props.vendorId == 0x8086 ? "Intel(R) Corporation" : "Level Zero device vendor";
  d.vendor_id = props.vendorId;
  const uint32_t major = api_version >> 16, minor = api_version & 0xffff;
  d.driver_version = "Manifold " MANIFOLD_VERSION " (Level Zero " + std::to_string(major) + "." +
                     std::to_string(minor) + ", driver " +
                     std::to_string(driver_props.driverVersion) + ")";
  d.version_suffix = "Manifold Level Zero";
  // Intel's OpenCL drivers count execution units as compute units.
  d.max_compute_units =
      std::max(1u, props.numSlices * props.numSubslicesPerSlice * props.numEUsPerSubslice);
  d.max_clock_frequency = props.coreClockRate;
  d.max_work_group_size = compute.maxTotalGroupSize;
  d.max_work_item_sizes = {compute.maxGroupSizeX, compute.maxGroupSizeY, compute.maxGroupSizeZ};
  uint64_t total = 0;
  for (const ze_device_memory_properties_t& m : memories) total += m.totalSize;
  d.global_mem_size = total;
  d.max_mem_alloc_size = props.maxMemAllocSize;
  d.max_constant_buffer_size = props.maxMemAllocSize;
  size_t cache_size = 0;
  for (const ze_device_cache_properties_t& c : caches) cache_size += c.cacheSize;
  d.global_mem_cache_type = cache_size ? CL_READ_WRITE_CACHE : CL_NONE;
  d.global_mem_cache_size = cache_size;
  d.global_mem_cacheline_size = 64;
  d.local_mem_type = CL_LOCAL;
  d.local_mem_size = compute.maxSharedLocalMemory;
  // SPIR-V functions take at most 255 parameters: with 8-byte arguments, 2040 bytes.
  constexpr size_t kSpirvParameterBytes = 255 * 8;
  d.max_parameter_size = std::min<size_t>(module.maxArgumentsSize, kSpirvParameterBytes);
  d.printf_buffer_size = module.printfBufferSize;
  d.error_correction_support = props.flags & ZE_DEVICE_PROPERTY_FLAG_ECC;
  d.host_unified_memory = props.flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
  // zeDeviceProperties' timerResolution: nanoseconds per tick up to API 1.1, ticks per second
  // from 1.2 on.
  if (api_version >= ((1u << 16) | 2u))
    ns_per_tick_ = props.timerResolution ? 1e9 / double(props.timerResolution) : 1;
  else
    ns_per_tick_ = props.timerResolution ? double(props.timerResolution) : 1;
  d.profiling_timer_resolution = std::max<size_t>(1, size_t(ns_per_tick_));
  if (props.kernelTimestampValidBits && props.kernelTimestampValidBits < 64)
    kernel_timestamp_mask_ = (uint64_t(1) << props.kernelTimestampValidBits) - 1;
  // Out-of-order queues run in order on one list (a valid schedule); profiling times come from
  // the commands' timestamp events.
  d.queue_on_host_properties = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
  d.single_fp_config = fp_config(module.fp32flags);
  d.double_fp_config = features.fp64 ? fp_config(module.fp64flags) : 0;
  d.half_fp_config = features.fp16 ? fp_config(module.fp16flags) : 0;
  const cl_uint widths[7] = {1, 1, 1, 1, 1, cl_uint(features.fp64), cl_uint(features.fp16)};
  std::copy(std::begin(widths), std::end(widths), d.preferred_vector_width);
  std::copy(std::begin(widths), std::end(widths), d.native_vector_width);
  if (compute.numSubGroupSizes)
    d.preferred_work_group_size_multiple = *std::min_element(
        compute.subGroupSizes,
        compute.subGroupSizes + std::min<size_t>(compute.numSubGroupSizes, ZE_SUBGROUPSIZE_COUNT));
  fill_from_target(d, target_);
  // Program-scope variables live in the module's global memory (the driver lays them out).
  d.max_global_variable_size = 64 * 1024;
  d.global_variable_preferred_total_size = d.max_global_variable_size;
  d.compiler_available = d.linker_available = true;
  ze_pci_ext_properties_t pci;
  if (a.zeDevicePciGetPropertiesExt &&
      a.zeDevicePciGetPropertiesExt(device, &pci) == ZE_RESULT_SUCCESS) {
    d.has_pci_bus_info = true;
    d.pci_bus_info = {pci.address.domain, pci.address.bus, pci.address.device,
                      pci.address.function};
    d.extensions.push_back(name_version("cl_khr_pci_bus_info", CL_MAKE_VERSION(1, 0, 0)));
  }
  // Host memory imports (clImportMemoryARM): the driver maps the application's pages for all
  // its devices, tiles included.
  host_imports_ = HostImports::of(a, driver);
  if (host_imports_) {
    d.extensions.push_back(name_version("cl_arm_import_memory", CL_MAKE_VERSION(1, 0, 0)));
    d.extensions.push_back(name_version("cl_arm_import_memory_host", CL_MAKE_VERSION(1, 0, 0)));
  }
  std::memcpy(d.device_uuid.data(), props.uuid, sizeof props.uuid);
  std::memcpy(d.driver_uuid.data(), driver_props.uuid, sizeof driver_props.uuid);
  init_context(parent);
  init_partitions();
  events_ = std::make_unique<EventPool>(*this);
  log_debug("level_zero: device '%s' (0x%04x), %u EUs, %zu MB, %u tile(s), SPIR-V %u.%u",
            d.name.c_str(), props.deviceId, d.max_compute_units, size_t(total >> 20), sub_devices,
            module.spirvVersionSupported >> 16, module.spirvVersionSupported & 0xffff);
}

LevelZeroDevice::~LevelZeroDevice() {
  copy_stream_.reset();
  events_.reset();
  if (context_ && is_root()) api_.zeContextDestroy(context_);
}

std::shared_ptr<const LoadedProgram> LevelZeroDevice::load_program(std::span<const uint8_t> binary,
                                                                   std::string* error) {
  const std::optional<std::vector<uint8_t>> spirv = compiler::spirv_module_of(binary, error);
  if (!spirv) return nullptr;
  return ZeProgram::load(*this, *spirv, error);
}

void LevelZeroDevice::mark_lost(const char* call) {
  if (!lost_.exchange(true))
    log_debug("level_zero: device '%s' lost (%s): its commands fail from now on",
              info_.name.c_str(), call);
}

void LevelZeroDevice::stamp_device_times(Event& event, const ZeEvent& first, const ZeEvent& last) {
  if (!api_.zeDeviceGetGlobalTimestamps || !first.timestamped || !last.timestamped) return;
  ze_kernel_timestamp_result_t start{}, end{};
  if (api_.zeEventQueryKernelTimestamp(first.handle, &start) != ZE_RESULT_SUCCESS ||
      api_.zeEventQueryKernelTimestamp(last.handle, &end) != ZE_RESULT_SUCCESS)
    return;
  // The device's clock read now against the host's: kernel timestamps are the device clock's
  // low bits, so they are taken as ticks before now.
  const uint64_t before = host_time_ns();
  uint64_t driver_host = 0, device_now = 0;
  if (api_.zeDeviceGetGlobalTimestamps(device_, &driver_host, &device_now) != ZE_RESULT_SUCCESS)
    return;
  const uint64_t host_now = before + (host_time_ns() - before) / 2;
  auto to_host = [&](uint64_t ticks) {
    const uint64_t ago =
        uint64_t(double((device_now - ticks) & kernel_timestamp_mask_) * ns_per_tick_);
    return ago < host_now ? host_now - ago : 0;
  };
  const uint64_t submitted = event.stamp(Event::kSubmit);
  const uint64_t started = std::max(to_host(start.global.kernelStart), submitted);
  const uint64_t ended = std::min(std::max(to_host(end.global.kernelEnd), started), host_now);
  event.set_stamp(Event::kStart, started);
  event.set_stamp(Event::kEnd, std::max(ended, started));
}

// Out-of-order queues too get one in-order list: in-order execution is a valid schedule.
std::shared_ptr<NativeQueue> LevelZeroDevice::create_native_queue_impl(bool) {
  return std::make_shared<ZeQueue>(*this);
}

}  // namespace manifold::level_zero
