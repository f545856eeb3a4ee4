// A Level Zero driver for tests, loaded by the real loader (ZE_ENABLE_ALT_DRIVERS, set only by
// ctest for the Level Zero tests): one simulated GPU with two sub-devices (tiles: each a device
// of its own for memory, lists and modules, with its share of the slices and memory; the
// ze_test_driver_one_tile build has one) on the host CPU. It answers the discovery and property
// calls the backend makes with fixed, documented values, so tests can check that the backend
// reports exactly what a driver says; commands (memory, immediate lists, modules, launches) run
// on the host (ze_test_driver_commands.cpp); host memory is imported as into Intel's driver
// (ze_test_driver_imports.cpp).
//
// Test infrastructure only: never installed, never found by the loader in normal use.
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include <array>
#include <cstring>

#include "ze_test_driver_commands.h"
#include "ze_test_driver_values.h"

namespace {

struct Driver {};
struct Device {
  bool sub_device;
  uint32_t sub_id;
};

Driver g_driver;
Device g_root{false, 0};
// Tile i has sub-device id i.
const auto g_tiles = [] {
  std::array<Device, ze_test::kSubDevices> tiles;
  for (uint32_t i = 0; i < ze_test::kSubDevices; ++i) tiles[i] = {true, i};
  return tiles;
}();

ze_driver_handle_t driver_handle() { return reinterpret_cast<ze_driver_handle_t>(&g_driver); }
ze_device_handle_t device_handle(const Device& d) {
  return reinterpret_cast<ze_device_handle_t>(const_cast<Device*>(&d));
}
const Device* device_of(ze_device_handle_t h) { return reinterpret_cast<const Device*>(h); }

// The count/array protocol of zeDriverGet, zeDeviceGet and friends.
template <class T>
ze_result_t answer_list(uint32_t* count, T* out, const T* items, uint32_t available) {
  if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || !out) {
    *count = available;
    return ZE_RESULT_SUCCESS;
  }
  if (*count > available) *count = available;
  for (uint32_t i = 0; i < *count; ++i) out[i] = items[i];
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL init(ze_init_flags_t) { return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL driver_get(uint32_t* count, ze_driver_handle_t* drivers) {
  const ze_driver_handle_t only = driver_handle();
  return answer_list(count, drivers, &only, 1);
}

ze_result_t ZE_APICALL driver_api_version(ze_driver_handle_t, ze_api_version_t* version) {
  if (!version) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *version = ZE_API_VERSION_1_4;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL driver_properties(ze_driver_handle_t, ze_driver_properties_t* p) {
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  std::memset(p->uuid.id, 0x5a, sizeof p->uuid.id);
  p->driverVersion = ze_test::kDriverVersion;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL device_get(ze_driver_handle_t, uint32_t* count,
                                  ze_device_handle_t* devices) {
  const ze_device_handle_t root = device_handle(g_root);
  return answer_list(count, devices, &root, 1);
}

ze_result_t ZE_APICALL sub_devices(ze_device_handle_t device, uint32_t* count,
                                   ze_device_handle_t* out) {
  if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (device_of(device)->sub_device) return answer_list<ze_device_handle_t>(count, out, nullptr, 0);
  ze_device_handle_t tiles[ze_test::kSubDevices];
  for (uint32_t i = 0; i < ze_test::kSubDevices; ++i) tiles[i] = device_handle(g_tiles[i]);
  return answer_list(count, out, tiles, ze_test::kSubDevices);
}

ze_result_t ZE_APICALL device_properties(ze_device_handle_t device, ze_device_properties_t* p) {
  if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const Device& d = *device_of(device);
  p->type = ZE_DEVICE_TYPE_GPU;
  p->vendorId = ze_test::kVendorId;
  p->deviceId = ze_test::kDeviceId;
  p->flags = d.sub_device ? ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE : 0;
  p->subdeviceId = d.sub_id;
  p->coreClockRate = ze_test::kClockMhz;
  p->maxMemAllocSize = ze_test::kMaxAlloc;
  p->maxHardwareContexts = 64;
  p->maxCommandQueuePriority = 0;
  p->numThreadsPerEU = ze_test::kThreadsPerEu;
  p->physicalEUSimdWidth = 8;
  p->numEUsPerSubslice = ze_test::kEusPerSubslice;
  p->numSubslicesPerSlice = ze_test::kSubslicesPerSlice;
  p->numSlices = d.sub_device ? ze_test::kSlices / ze_test::kSubDevices : ze_test::kSlices;
  p->timerResolution = ze_test::kTimerTicksPerSecond;
  p->timestampValidBits = 64;
  p->kernelTimestampValidBits = ze_test::kKernelTimestampBits;
  std::memset(p->uuid.id, 0, sizeof p->uuid.id);
  p->uuid.id[0] = 0xa5;
  p->uuid.id[1] = static_cast<uint8_t>(d.sub_device ? 1 + d.sub_id : 0);
  std::strncpy(p->name, d.sub_device ? ze_test::kTileName : ze_test::kName, sizeof p->name - 1);
  p->name[sizeof p->name - 1] = '\0';
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL compute_properties(ze_device_handle_t device,
                                          ze_device_compute_properties_t* p) {
  if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->maxTotalGroupSize = ze_test::kMaxGroupSize;
  p->maxGroupSizeX = ze_test::kMaxGroupSize;
  p->maxGroupSizeY = ze_test::kMaxGroupSize;
  p->maxGroupSizeZ = 64;
  p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 0xffffffffu;
  p->maxSharedLocalMemory = ze_test::kSharedLocalMemory;
  p->numSubGroupSizes = 3;
  p->subGroupSizes[0] = 8;
  p->subGroupSizes[1] = 16;
  p->subGroupSizes[2] = 32;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL module_properties(ze_device_handle_t device,
                                         ze_device_module_properties_t* p) {
  if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->spirvVersionSupported = ZE_MAKE_VERSION(1, 2);
  p->flags = ZE_DEVICE_MODULE_FLAG_FP64 | ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
  p->fp16flags = 0;
  const ze_device_fp_flags_t ieee =
      ZE_DEVICE_FP_FLAG_DENORM | ZE_DEVICE_FP_FLAG_INF_NAN | ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST |
      ZE_DEVICE_FP_FLAG_ROUND_TO_ZERO | ZE_DEVICE_FP_FLAG_ROUND_TO_INF | ZE_DEVICE_FP_FLAG_FMA;
  p->fp32flags = ieee | ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT;
  p->fp64flags = ieee;
  p->maxArgumentsSize = ze_test::kMaxArgumentsSize;
  p->printfBufferSize = ze_test::kPrintfBufferSize;
  std::memset(p->nativeKernelSupported.id, 0, sizeof p->nativeKernelSupported.id);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL memory_properties(ze_device_handle_t device, uint32_t* count,
                                         ze_device_memory_properties_t* p) {
  if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || !p) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  *count = 1;
  p->flags = 0;
  p->maxClockRate = 1600;
  p->maxBusWidth = 256;
  p->totalSize =
      device_of(device)->sub_device ? ze_test::kMemory / ze_test::kSubDevices : ze_test::kMemory;
  std::strncpy(p->name, "HBM", sizeof p->name - 1);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL cache_properties(ze_device_handle_t device, uint32_t* count,
                                        ze_device_cache_properties_t* p) {
  if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || !p) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  *count = 1;
  p->flags = 0;
  p->cacheSize = ze_test::kCacheSize;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL image_properties(ze_device_handle_t device,
                                        ze_device_image_properties_t* p) {
  if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // No images on the simulated device: every limit 0.
  p->maxImageDims1D = p->maxImageDims2D = p->maxImageDims3D = 0;
  p->maxImageBufferSize = 0;
  p->maxImageArraySlices = p->maxSamplers = p->maxReadImageArgs = p->maxWriteImageArgs = 0;
  return ZE_RESULT_SUCCESS;
}

// Intel's host pointer import, the driver's own extension (zex_driver.h).
ze_result_t ZE_APICALL import_external_pointer(ze_driver_handle_t driver, void* ptr, size_t size) {
  if (driver != driver_handle()) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return ze_test::import_host_range(ptr, size);
}
ze_result_t ZE_APICALL release_imported_pointer(ze_driver_handle_t driver, void* ptr) {
  if (driver != driver_handle()) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return ze_test::release_host_range(ptr);
}

ze_result_t ZE_APICALL extension_function_address(ze_driver_handle_t driver, const char* name,
                                                  void** out) {
  if (driver != driver_handle()) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!name || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (std::strcmp(name, "zexDriverImportExternalPointer") == 0)
    *out = reinterpret_cast<void*>(import_external_pointer);
  else if (std::strcmp(name, "zexDriverReleaseImportedPointer") == 0)
    *out = reinterpret_cast<void*>(release_imported_pointer);
  else
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  return ZE_RESULT_SUCCESS;
}

template <class Table>
void fill(Table&) {}

template <>
void fill(ze_global_dditable_t& t) {
  t.pfnInit = init;
}
template <>
void fill(ze_driver_dditable_t& t) {
  t.pfnGet = driver_get;
  t.pfnGetApiVersion = driver_api_version;
  t.pfnGetProperties = driver_properties;
  t.pfnGetExtensionFunctionAddress = extension_function_address;
}
template <>
void fill(ze_device_dditable_t& t) {
  t.pfnGet = device_get;
  t.pfnGetSubDevices = sub_devices;
  t.pfnGetProperties = device_properties;
  t.pfnGetComputeProperties = compute_properties;
  t.pfnGetModuleProperties = module_properties;
  t.pfnGetMemoryProperties = memory_properties;
  t.pfnGetCacheProperties = cache_properties;
  t.pfnGetImageProperties = image_properties;
  t.pfnGetGlobalTimestamps = ze_test::device_global_timestamps;
  t.pfnPciGetPropertiesExt = ze_test::device_pci_properties;
}

template <>
void fill(ze_context_dditable_t& t) {
  ze_test::fill_context(t);
}
template <>
void fill(ze_mem_dditable_t& t) {
  ze_test::fill_memory(t);
}
template <>
void fill(ze_command_list_dditable_t& t) {
  ze_test::fill_command_list(t);
}
template <>
void fill(ze_event_pool_dditable_t& t) {
  ze_test::fill_event_pool(t);
}
template <>
void fill(ze_event_dditable_t& t) {
  ze_test::fill_event(t);
}
template <>
void fill(ze_module_dditable_t& t) {
  ze_test::fill_module(t);
}
template <>
void fill(ze_module_build_log_dditable_t& t) {
  ze_test::fill_build_log(t);
}
template <>
void fill(ze_kernel_dditable_t& t) {
  ze_test::fill_kernel(t);
}
template <>
void fill(ze_kernel_exp_dditable_t& t) {
  ze_test::fill_kernel_exp(t);
}

}  // namespace

// Entry points the loader looks up by name: each fills its table (unimplemented calls stay
// null, which the loader reports as ZE_RESULT_ERROR_UNSUPPORTED_FEATURE).
#define TABLE(getter, type)                                                                      \
  extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version, type* table) { \
    if (!table) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                                     \
    if (ZE_MAJOR_VERSION(version) != 1) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;              \
    std::memset(table, 0, sizeof *table);                                                        \
    fill(*table);                                                                                \
    return ZE_RESULT_SUCCESS;                                                                    \
  }
#include "ze_tables.inc"
#undef TABLE
