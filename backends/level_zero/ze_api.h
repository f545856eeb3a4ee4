// Manifold's own declarations of the Level Zero API subset it uses (API 1.4, the loader
// libze_loader.so.1 loaded with dlopen): no vendor header is included and no vendor library
// linked. Layouts and values follow the Level Zero specification's ze_api.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace manifold::level_zero {

using ze_result_t = uint32_t;
inline constexpr ze_result_t ZE_RESULT_SUCCESS = 0;
inline constexpr ze_result_t ZE_RESULT_NOT_READY = 1;
inline constexpr ze_result_t ZE_RESULT_ERROR_DEVICE_LOST = 0x70000001;
inline constexpr ze_result_t ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY = 0x70000002;
inline constexpr ze_result_t ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY = 0x70000003;
inline constexpr ze_result_t ZE_RESULT_ERROR_MODULE_BUILD_FAILURE = 0x70000004;
inline constexpr ze_result_t ZE_RESULT_ERROR_UNINITIALIZED = 0x78000001;

using ze_driver_handle_t = struct _ze_driver_handle_t*;
using ze_device_handle_t = struct _ze_device_handle_t*;
using ze_context_handle_t = struct _ze_context_handle_t*;
using ze_command_list_handle_t = struct _ze_command_list_handle_t*;
using ze_event_pool_handle_t = struct _ze_event_pool_handle_t*;
using ze_event_handle_t = struct _ze_event_handle_t*;
using ze_module_handle_t = struct _ze_module_handle_t*;
using ze_module_build_log_handle_t = struct _ze_module_build_log_handle_t*;
using ze_kernel_handle_t = struct _ze_kernel_handle_t*;

using ze_structure_type_t = uint32_t;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES = 0x1;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES = 0x3;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES = 0x4;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES = 0x5;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES = 0x7;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES = 0x9;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DEVICE_IMAGE_PROPERTIES = 0xa;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_CONTEXT_DESC = 0xd;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC = 0xe;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_EVENT_POOL_DESC = 0x10;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_EVENT_DESC = 0x11;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC = 0x15;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC = 0x16;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_MODULE_DESC = 0x1b;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_KERNEL_DESC = 0x1d;
inline constexpr ze_structure_type_t ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES = 0x10008;

inline constexpr uint32_t ZE_INIT_FLAG_GPU_ONLY = 1u << 0;
inline constexpr uint32_t ZE_DEVICE_TYPE_GPU = 1;
inline constexpr uint32_t ZE_DEVICE_PROPERTY_FLAG_INTEGRATED = 1u << 0;
inline constexpr uint32_t ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE = 1u << 1;
inline constexpr uint32_t ZE_DEVICE_PROPERTY_FLAG_ECC = 1u << 2;
inline constexpr uint32_t ZE_DEVICE_MODULE_FLAG_FP16 = 1u << 0;
inline constexpr uint32_t ZE_DEVICE_MODULE_FLAG_FP64 = 1u << 1;
inline constexpr uint32_t ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS = 1u << 2;
inline constexpr uint32_t ZE_DEVICE_FP_FLAG_DENORM = 1u << 0;
inline constexpr uint32_t ZE_DEVICE_FP_FLAG_INF_NAN = 1u << 1;
inline constexpr uint32_t ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST = 1u << 2;
inline constexpr uint32_t ZE_DEVICE_FP_FLAG_ROUND_TO_ZERO = 1u << 3;
inline constexpr uint32_t ZE_DEVICE_FP_FLAG_ROUND_TO_INF = 1u << 4;
inline constexpr uint32_t ZE_DEVICE_FP_FLAG_FMA = 1u << 5;
inline constexpr uint32_t ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT = 1u << 6;
inline constexpr uint32_t ZE_DEVICE_FP_FLAG_SOFT_FLOAT = 1u << 7;

inline constexpr uint32_t ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS = 2;
inline constexpr uint32_t ZE_EVENT_POOL_FLAG_HOST_VISIBLE = 1u << 0;
inline constexpr uint32_t ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP = 1u << 2;
inline constexpr uint32_t ZE_EVENT_SCOPE_FLAG_HOST = 1u << 2;
inline constexpr uint32_t ZE_MODULE_FORMAT_IL_SPIRV = 0;

inline constexpr size_t ZE_MAX_DEVICE_NAME = 256;
inline constexpr size_t ZE_SUBGROUPSIZE_COUNT = 8;

struct ze_driver_properties_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
  void* pNext = nullptr;
  uint8_t uuid[16];
  uint32_t driverVersion;
};

struct ze_device_properties_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  void* pNext = nullptr;
  uint32_t type;
  uint32_t vendorId;
  uint32_t deviceId;
  uint32_t flags;
  uint32_t subdeviceId;
  uint32_t coreClockRate;  // MHz
  uint64_t maxMemAllocSize;
  uint32_t maxHardwareContexts;
  uint32_t maxCommandQueuePriority;
  uint32_t numThreadsPerEU;
  uint32_t physicalEUSimdWidth;
  uint32_t numEUsPerSubslice;
  uint32_t numSubslicesPerSlice;
  uint32_t numSlices;
  uint64_t timerResolution;  // ns per tick (API 1.1 and earlier) or ticks per second (1.2+)
  uint32_t timestampValidBits;
  uint32_t kernelTimestampValidBits;
  uint8_t uuid[16];
  char name[ZE_MAX_DEVICE_NAME];
};

struct ze_device_compute_properties_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
  void* pNext = nullptr;
  uint32_t maxTotalGroupSize;
  uint32_t maxGroupSizeX, maxGroupSizeY, maxGroupSizeZ;
  uint32_t maxGroupCountX, maxGroupCountY, maxGroupCountZ;
  uint32_t maxSharedLocalMemory;
  uint32_t numSubGroupSizes;
  uint32_t subGroupSizes[ZE_SUBGROUPSIZE_COUNT];
};

struct ze_device_memory_properties_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
  void* pNext = nullptr;
  uint32_t flags;
  uint32_t maxClockRate;
  uint32_t maxBusWidth;
  uint64_t totalSize;
  char name[ZE_MAX_DEVICE_NAME];
};

struct ze_device_cache_properties_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES;
  void* pNext = nullptr;
  uint32_t flags;
  size_t cacheSize;
};

struct ze_device_module_properties_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  void* pNext = nullptr;
  uint32_t spirvVersionSupported;  // ZE_MAKE_VERSION(major, minor): major << 16 | minor
  uint32_t flags;
  uint32_t fp16flags, fp32flags, fp64flags;
  uint32_t maxArgumentsSize;
  uint32_t printfBufferSize;
  uint8_t nativeKernelSupported[16];
};

struct ze_device_image_properties_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_DEVICE_IMAGE_PROPERTIES;
  void* pNext = nullptr;
  uint32_t maxImageDims1D, maxImageDims2D, maxImageDims3D;
  uint64_t maxImageBufferSize;
  uint32_t maxImageArraySlices;
  uint32_t maxSamplers;
  uint32_t maxReadImageArgs, maxWriteImageArgs;
};

struct ze_context_desc_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
  const void* pNext = nullptr;
  uint32_t flags = 0;
};

struct ze_device_mem_alloc_desc_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
  const void* pNext = nullptr;
  uint32_t flags = 0;
  uint32_t ordinal = 0;
};

struct ze_host_mem_alloc_desc_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
  const void* pNext = nullptr;
  uint32_t flags = 0;
};

struct ze_command_queue_desc_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  const void* pNext = nullptr;
  uint32_t ordinal = 0;
  uint32_t index = 0;
  uint32_t flags = 0;
  uint32_t mode = 0;
  uint32_t priority = 0;
};

struct ze_event_pool_desc_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
  const void* pNext = nullptr;
  uint32_t flags = 0;
  uint32_t count = 0;
};

struct ze_event_desc_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
  const void* pNext = nullptr;
  uint32_t index = 0;
  uint32_t signal = 0;
  uint32_t wait = 0;
};

struct ze_module_constants_t {
  uint32_t numConstants;
  const uint32_t* pConstantIds;
  const void** pConstantValues;
};

struct ze_module_desc_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  const void* pNext = nullptr;
  uint32_t format = ZE_MODULE_FORMAT_IL_SPIRV;
  size_t inputSize = 0;
  const uint8_t* pInputModule = nullptr;
  const char* pBuildFlags = nullptr;
  const ze_module_constants_t* pConstants = nullptr;
};

struct ze_kernel_desc_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
  const void* pNext = nullptr;
  uint32_t flags = 0;
  const char* pKernelName = nullptr;
};

struct ze_group_count_t {
  uint32_t groupCountX, groupCountY, groupCountZ;
};

// ZE_extension_pci_properties.
struct ze_pci_ext_properties_t {
  ze_structure_type_t stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES;
  void* pNext = nullptr;
  struct {
    uint32_t domain, bus, device, function;
  } address;
  struct {
    int32_t genVersion, width;
    int64_t maxBandwidth;
  } maxSpeed;
};

struct ze_kernel_timestamp_data_t {
  uint64_t kernelStart, kernelEnd;
};
struct ze_kernel_timestamp_result_t {
  ze_kernel_timestamp_data_t global, context;
};

// The loader's entry points Manifold calls, resolved once (load_api).
struct Api {
  ze_result_t (*zeInit)(uint32_t flags);
  ze_result_t (*zeDriverGet)(uint32_t* count, ze_driver_handle_t* drivers);
  ze_result_t (*zeDriverGetApiVersion)(ze_driver_handle_t, uint32_t* version);
  ze_result_t (*zeDriverGetProperties)(ze_driver_handle_t, ze_driver_properties_t*);
  ze_result_t (*zeDeviceGet)(ze_driver_handle_t, uint32_t* count, ze_device_handle_t* devices);
  ze_result_t (*zeDeviceGetSubDevices)(ze_device_handle_t, uint32_t* count,
                                       ze_device_handle_t* devices);
  ze_result_t (*zeDeviceGetProperties)(ze_device_handle_t, ze_device_properties_t*);
  ze_result_t (*zeDeviceGetComputeProperties)(ze_device_handle_t, ze_device_compute_properties_t*);
  ze_result_t (*zeDeviceGetModuleProperties)(ze_device_handle_t, ze_device_module_properties_t*);
  ze_result_t (*zeDeviceGetMemoryProperties)(ze_device_handle_t, uint32_t* count,
                                             ze_device_memory_properties_t*);
  ze_result_t (*zeDeviceGetCacheProperties)(ze_device_handle_t, uint32_t* count,
                                            ze_device_cache_properties_t*);
  ze_result_t (*zeDeviceGetImageProperties)(ze_device_handle_t, ze_device_image_properties_t*);
  // Memory.
  ze_result_t (*zeContextCreate)(ze_driver_handle_t, const ze_context_desc_t*,
                                 ze_context_handle_t*);
  ze_result_t (*zeContextDestroy)(ze_context_handle_t);
  ze_result_t (*zeMemAllocDevice)(ze_context_handle_t, const ze_device_mem_alloc_desc_t*,
                                  size_t size, size_t alignment, ze_device_handle_t, void**);
  ze_result_t (*zeMemAllocHost)(ze_context_handle_t, const ze_host_mem_alloc_desc_t*, size_t size,
                                size_t alignment, void**);
  ze_result_t (*zeMemAllocShared)(ze_context_handle_t, const ze_device_mem_alloc_desc_t*,
                                  const ze_host_mem_alloc_desc_t*, size_t size, size_t alignment,
                                  ze_device_handle_t, void**);
  ze_result_t (*zeMemFree)(ze_context_handle_t, void*);
  // Immediate command lists and their events.
  ze_result_t (*zeCommandListCreateImmediate)(ze_context_handle_t, ze_device_handle_t,
                                              const ze_command_queue_desc_t*,
                                              ze_command_list_handle_t*);
  ze_result_t (*zeCommandListDestroy)(ze_command_list_handle_t);
  ze_result_t (*zeCommandListAppendMemoryCopy)(ze_command_list_handle_t, void* dst, const void* src,
                                               size_t size, ze_event_handle_t, uint32_t wait_count,
                                               ze_event_handle_t* waits);
  ze_result_t (*zeCommandListAppendMemoryFill)(ze_command_list_handle_t, void* dst,
                                               const void* pattern, size_t pattern_size,
                                               size_t size, ze_event_handle_t, uint32_t wait_count,
                                               ze_event_handle_t* waits);
  ze_result_t (*zeCommandListAppendLaunchKernel)(ze_command_list_handle_t, ze_kernel_handle_t,
                                                 const ze_group_count_t*, ze_event_handle_t,
                                                 uint32_t wait_count, ze_event_handle_t* waits);
  ze_result_t (*zeEventPoolCreate)(ze_context_handle_t, const ze_event_pool_desc_t*,
                                   uint32_t device_count, ze_device_handle_t* devices,
                                   ze_event_pool_handle_t*);
  ze_result_t (*zeEventPoolDestroy)(ze_event_pool_handle_t);
  ze_result_t (*zeEventCreate)(ze_event_pool_handle_t, const ze_event_desc_t*, ze_event_handle_t*);
  ze_result_t (*zeEventDestroy)(ze_event_handle_t);
  ze_result_t (*zeEventHostSynchronize)(ze_event_handle_t, uint64_t timeout_ns);
  ze_result_t (*zeEventHostReset)(ze_event_handle_t);
  ze_result_t (*zeEventQueryStatus)(ze_event_handle_t);
  ze_result_t (*zeEventQueryKernelTimestamp)(ze_event_handle_t, ze_kernel_timestamp_result_t*);
  ze_result_t (*zeCommandListAppendWaitOnEvents)(ze_command_list_handle_t, uint32_t count,
                                                 ze_event_handle_t* events);
  ze_result_t (*zeCommandListAppendBarrier)(ze_command_list_handle_t, ze_event_handle_t signal,
                                            uint32_t wait_count, ze_event_handle_t* waits);
  // Modules and kernels.
  ze_result_t (*zeModuleCreate)(ze_context_handle_t, ze_device_handle_t, const ze_module_desc_t*,
                                ze_module_handle_t*, ze_module_build_log_handle_t*);
  ze_result_t (*zeModuleDestroy)(ze_module_handle_t);
  ze_result_t (*zeModuleBuildLogGetString)(ze_module_build_log_handle_t, size_t* size, char* log);
  ze_result_t (*zeModuleBuildLogDestroy)(ze_module_build_log_handle_t);
  ze_result_t (*zeKernelCreate)(ze_module_handle_t, const ze_kernel_desc_t*, ze_kernel_handle_t*);
  ze_result_t (*zeKernelDestroy)(ze_kernel_handle_t);
  ze_result_t (*zeKernelSetArgumentValue)(ze_kernel_handle_t, uint32_t index, size_t size,
                                          const void* value);
  ze_result_t (*zeKernelSetGroupSize)(ze_kernel_handle_t, uint32_t x, uint32_t y, uint32_t z);
  // ZE_extension_pci_properties; null where the loader lacks it.
  ze_result_t (*zeDevicePciGetPropertiesExt)(ze_device_handle_t, ze_pci_ext_properties_t*);
  // API 1.1; null where the loader lacks it (profiling times are then the host's).
  ze_result_t (*zeDeviceGetGlobalTimestamps)(ze_device_handle_t, uint64_t* host_timestamp,
                                             uint64_t* device_timestamp);
  // ZE_experimental_global_offset; null where the loader lacks it (offsets are then refused).
  ze_result_t (*zeKernelSetGlobalOffsetExp)(ze_kernel_handle_t, uint32_t x, uint32_t y, uint32_t z);
  // A driver's own extension functions by name (core API 1.0); null where the loader lacks it.
  ze_result_t (*zeDriverGetExtensionFunctionAddress)(ze_driver_handle_t, const char* name,
                                                     void** function);
};

// Intel's host pointer import (zex_driver.h, reached through zeDriverGetExtensionFunctionAddress):
// the pages of [ptr, ptr + size) become usable, at their own address, by kernels and copies of
// every device of the driver, until released (by any pointer inside the range).
using zex_import_external_pointer_t = ze_result_t (*)(ze_driver_handle_t, void* ptr, size_t size);
using zex_release_imported_pointer_t = ze_result_t (*)(ze_driver_handle_t, void* ptr);

// The loader's API, loaded on first use; null with *why when there is no loader or it lacks an
// entry point. zeInit is not called here. Thread-safe.
const Api* load_api(std::string* why);

// "ZE_RESULT_ERROR_DEVICE_LOST (0x70000001)" and the like, for messages.
std::string result_text(ze_result_t result);

}  // namespace manifold::level_zero
