#include "backends/level_zero/ze_api.h"

#include <dlfcn.h>

#include <cstdio>
#include <mutex>
#include <type_traits>

namespace manifold::level_zero {
namespace {

Api g_api;
const Api* g_loaded = nullptr;
std::string g_why;

void load_once() {
  // RTLD_LOCAL: the loader's symbols must not satisfy anybody else's lookups. The library stays
  // loaded: the loader unloads its drivers at exit on its own.
  void* library = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* error = dlerror();
    g_why =
        std::string("libze_loader.so.1 not found (") + (error ? error : "no reason given") + ")";
    return;
  }
  Api a{};
  bool complete = true;
  auto resolve = [&](auto& member, const char* symbol) {
    member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(dlsym(library, symbol));
    if (!member && complete) {
      complete = false;
      g_why = std::string("libze_loader.so.1 lacks ") + symbol;
    }
  };
  resolve(a.zeInit, "zeInit");
  resolve(a.zeDriverGet, "zeDriverGet");
  resolve(a.zeDriverGetApiVersion, "zeDriverGetApiVersion");
  resolve(a.zeDriverGetProperties, "zeDriverGetProperties");
  resolve(a.zeDeviceGet, "zeDeviceGet");
  resolve(a.zeDeviceGetSubDevices, "zeDeviceGetSubDevices");
  resolve(a.zeDeviceGetProperties, "zeDeviceGetProperties");
  resolve(a.zeDeviceGetComputeProperties, "zeDeviceGetComputeProperties");
  resolve(a.zeDeviceGetModuleProperties, "zeDeviceGetModuleProperties");
  resolve(a.zeDeviceGetMemoryProperties, "zeDeviceGetMemoryProperties");
  resolve(a.zeDeviceGetCacheProperties, "zeDeviceGetCacheProperties");
  resolve(a.zeDeviceGetImageProperties, "zeDeviceGetImageProperties");
  resolve(a.zeContextCreate, "zeContextCreate");
  resolve(a.zeContextDestroy, "zeContextDestroy");
  resolve(a.zeMemAllocDevice, "zeMemAllocDevice");
  resolve(a.zeMemAllocHost, "zeMemAllocHost");
  resolve(a.zeMemAllocShared, "zeMemAllocShared");
  resolve(a.zeMemFree, "zeMemFree");
  resolve(a.zeCommandListCreateImmediate, "zeCommandListCreateImmediate");
  resolve(a.zeCommandListDestroy, "zeCommandListDestroy");
  resolve(a.zeCommandListAppendMemoryCopy, "zeCommandListAppendMemoryCopy");
  resolve(a.zeCommandListAppendMemoryFill, "zeCommandListAppendMemoryFill");
  resolve(a.zeCommandListAppendLaunchKernel, "zeCommandListAppendLaunchKernel");
  resolve(a.zeEventPoolCreate, "zeEventPoolCreate");
  resolve(a.zeEventPoolDestroy, "zeEventPoolDestroy");
  resolve(a.zeEventCreate, "zeEventCreate");
  resolve(a.zeEventDestroy, "zeEventDestroy");
  resolve(a.zeEventHostSynchronize, "zeEventHostSynchronize");
  resolve(a.zeEventHostReset, "zeEventHostReset");
  resolve(a.zeEventQueryStatus, "zeEventQueryStatus");
  resolve(a.zeEventQueryKernelTimestamp, "zeEventQueryKernelTimestamp");
  resolve(a.zeCommandListAppendWaitOnEvents, "zeCommandListAppendWaitOnEvents");
  resolve(a.zeCommandListAppendBarrier, "zeCommandListAppendBarrier");
  resolve(a.zeModuleCreate, "zeModuleCreate");
  resolve(a.zeModuleDestroy, "zeModuleDestroy");
  resolve(a.zeModuleBuildLogGetString, "zeModuleBuildLogGetString");
  resolve(a.zeModuleBuildLogDestroy, "zeModuleBuildLogDestroy");
  resolve(a.zeKernelCreate, "zeKernelCreate");
  resolve(a.zeKernelDestroy, "zeKernelDestroy");
  resolve(a.zeKernelSetArgumentValue, "zeKernelSetArgumentValue");
  resolve(a.zeKernelSetGroupSize, "zeKernelSetGroupSize");
  if (!complete) return;
  a.zeDevicePciGetPropertiesExt = reinterpret_cast<decltype(a.zeDevicePciGetPropertiesExt)>(
      dlsym(library, "zeDevicePciGetPropertiesExt"));
  a.zeDeviceGetGlobalTimestamps = reinterpret_cast<decltype(a.zeDeviceGetGlobalTimestamps)>(
      dlsym(library, "zeDeviceGetGlobalTimestamps"));
  a.zeKernelSetGlobalOffsetExp = reinterpret_cast<decltype(a.zeKernelSetGlobalOffsetExp)>(
      dlsym(library, "zeKernelSetGlobalOffsetExp"));
  a.zeDriverGetExtensionFunctionAddress =
      reinterpret_cast<decltype(a.zeDriverGetExtensionFunctionAddress)>(
          dlsym(library, "zeDriverGetExtensionFunctionAddress"));
  g_api = a;
  g_loaded = &g_api;
}

}  // namespace

const Api* load_api(std::string* why) {
  static std::once_flag once;
  std::call_once(once, load_once);
  if (!g_loaded && why) *why = g_why;
  return g_loaded;
}

std::string result_text(ze_result_t result) {
  const char* name = nullptr;
  switch (result) {
    case ZE_RESULT_SUCCESS:
      name = "ZE_RESULT_SUCCESS";
      break;
    case ZE_RESULT_ERROR_DEVICE_LOST:
      name = "ZE_RESULT_ERROR_DEVICE_LOST";
      break;
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
      name = "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY";
      break;
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
      name = "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY";
      break;
    case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE:
      name = "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE";
      break;
    case ZE_RESULT_ERROR_UNINITIALIZED:
      name = "ZE_RESULT_ERROR_UNINITIALIZED";
      break;
    default:
      break;
  }
  char code[16];
  std::snprintf(code, sizeof code, "0x%x", result);
  return name ? std::string(name) + " (" + code + ")" : std::string(code);
}

}  // namespace manifold::level_zero
