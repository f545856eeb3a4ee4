// The test driver's command execution on the host CPU. Memory of every kind is host memory
// (aligned_alloc); immediate command lists run each command at once on the calling thread and
// then signal its event; a module's SPIR-V goes through Manifold's SPIR-V reader and CPU
// pipeline (compiler::build_il for the host CPU) to a CpuExecutable, whose run() executes a
// launch's NDRange.
#include "ze_test_driver_commands.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/compiler.h"
#include "compiler/printf_buffer.h"
#include "ze_test_driver_values.h"

namespace ze_test {
namespace {

struct Context {};
struct CommandList {};
struct EventPool {
  uint32_t count;
};
struct Event {
  std::atomic<bool> signalled{false};
};
struct BuildLog {
  std::string text;
};
struct Module {
  std::unique_ptr<manifold::cpu::CpuExecutable> executable;
};
struct Kernel {
  Module* module;
  std::string name;
  const manifold::compiler::KernelInfo* info;
  std::vector<std::vector<uint8_t>> values;  // per argument: its bytes (none for __local)
  std::vector<size_t> local_sizes;           // per argument: bytes of a __local argument
  uint32_t group[3] = {1, 1, 1};
  uint32_t offset[3] = {0, 0, 0};
};

template <class T, class H>
T* of(H handle) {
  return reinterpret_cast<T*>(handle);
}
template <class H, class T>
H handle(T* object) {
  return reinterpret_cast<H>(object);
}

// Every live allocation, so that zeMemFree rejects what it did not give out.
std::mutex g_memory_mutex;
std::set<void*> g_allocations;

ze_result_t allocate(size_t size, size_t alignment, void** out) {
  if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (alignment & (alignment - 1)) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  alignment = std::max<size_t>(alignment, 64);
  void* p = std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (!p) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  std::lock_guard lock(g_memory_mutex);
  g_allocations.insert(p);
  *out = p;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL context_create(ze_driver_handle_t driver, const ze_context_desc_t* desc,
                                      ze_context_handle_t* out) {
  if (!driver) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *out = handle<ze_context_handle_t>(new Context);
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL context_destroy(ze_context_handle_t context) {
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete of<Context>(context);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL alloc_device(ze_context_handle_t context, const ze_device_mem_alloc_desc_t*,
                                    size_t size, size_t alignment, ze_device_handle_t device,
                                    void** out) {
  if (!context || !device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return allocate(size, alignment, out);
}
ze_result_t ZE_APICALL alloc_host(ze_context_handle_t context, const ze_host_mem_alloc_desc_t*,
                                  size_t size, size_t alignment, void** out) {
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return allocate(size, alignment, out);
}
ze_result_t ZE_APICALL alloc_shared(ze_context_handle_t context, const ze_device_mem_alloc_desc_t*,
                                    const ze_host_mem_alloc_desc_t*, size_t size, size_t alignment,
                                    ze_device_handle_t, void** out) {
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return allocate(size, alignment, out);
}
ze_result_t ZE_APICALL mem_free(ze_context_handle_t context, void* p) {
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::lock_guard lock(g_memory_mutex);
  if (!g_allocations.erase(p)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  std::free(p);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL list_create_immediate(ze_context_handle_t context, ze_device_handle_t device,
                                             const ze_command_queue_desc_t* desc,
                                             ze_command_list_handle_t* out) {
  if (!context || !device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *out = handle<ze_command_list_handle_t>(new CommandList);
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL list_destroy(ze_command_list_handle_t list) {
  if (!list) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete of<CommandList>(list);
  return ZE_RESULT_SUCCESS;
}

// What every append checks and does after its command ran: the waits (already complete: every
// command completes within its append) and the signal.
ze_result_t waits_valid(uint32_t count, ze_event_handle_t* waits) {
  if (count && !waits) return ZE_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < count; ++i)
    if (!of<Event>(waits[i])->signalled.load()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  return ZE_RESULT_SUCCESS;
}
void signal(ze_event_handle_t event) {
  if (event) of<Event>(event)->signalled.store(true);
}

ze_result_t ZE_APICALL append_copy(ze_command_list_handle_t list, void* dst, const void* src,
                                   size_t size, ze_event_handle_t event, uint32_t wait_count,
                                   ze_event_handle_t* waits) {
  if (!list) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!dst || !src) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ze_result_t r = waits_valid(wait_count, waits)) return r;
  std::memmove(dst, src, size);
  signal(event);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL append_fill(ze_command_list_handle_t list, void* dst, const void* pattern,
                                   size_t pattern_size, size_t size, ze_event_handle_t event,
                                   uint32_t wait_count, ze_event_handle_t* waits) {
  if (!list) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!dst || !pattern) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // The specification: a power of two no larger than the engine's maximum (128 here).
  if (!pattern_size || (pattern_size & (pattern_size - 1)) || pattern_size > 128 ||
      size % pattern_size)
    return ZE_RESULT_ERROR_INVALID_SIZE;
  if (ze_result_t r = waits_valid(wait_count, waits)) return r;
  for (size_t done = 0; done < size; done += pattern_size)
    std::memcpy(static_cast<uint8_t*>(dst) + done, pattern, pattern_size);
  signal(event);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL append_launch(ze_command_list_handle_t list, ze_kernel_handle_t handle,
                                     const ze_group_count_t* groups, ze_event_handle_t event,
                                     uint32_t wait_count, ze_event_handle_t* waits) {
  if (!list || !handle) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!groups) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ze_result_t r = waits_valid(wait_count, waits)) return r;
  const Kernel& k = *of<Kernel>(handle);
  const size_t n = k.info->args.size();
  std::vector<const void*> values(n);
  for (size_t i = 0; i < n; ++i) {
    if (k.local_sizes[i]) continue;
    if (k.values[i].empty()) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;  // never set
    values[i] = k.values[i].data();
  }
  manifold::compiler::NDRange range;
  range.work_dim = 3;
  const uint32_t counts[3] = {groups->groupCountX, groups->groupCountY, groups->groupCountZ};
  for (unsigned d = 0; d < 3; ++d) {
    range.local_size[d] = k.group[d];
    range.global_size[d] = size_t(k.group[d]) * counts[d];
    range.global_offset[d] = k.offset[d];
  }
  // As Intel's driver: a launch's printf output fills a buffer of the size the device reports
  // and is printed when the launch completes.
  manifold::compiler::PrintfBuffer printed(ze_test::kPrintfBufferSize);
  k.module->executable->run(k.name, range, values.data(), k.local_sizes.data(), &printed);
  printed.print(stdout);
  signal(event);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL pool_create(ze_context_handle_t context, const ze_event_pool_desc_t* desc,
                                   uint32_t, ze_device_handle_t*, ze_event_pool_handle_t* out) {
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  *out = handle<ze_event_pool_handle_t>(new EventPool{desc->count});
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL pool_destroy(ze_event_pool_handle_t pool) {
  if (!pool) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete of<EventPool>(pool);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL event_create(ze_event_pool_handle_t pool, const ze_event_desc_t* desc,
                                    ze_event_handle_t* out) {
  if (!pool) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->index >= of<EventPool>(pool)->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *out = handle<ze_event_handle_t>(new Event);
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL event_destroy(ze_event_handle_t event) {
  if (!event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete of<Event>(event);
  return ZE_RESULT_SUCCESS;
}
// Nothing runs later: an event not signalled by now never will be (a backend bug the tests see).
ze_result_t ZE_APICALL event_synchronize(ze_event_handle_t event, uint64_t) {
  if (!event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return of<Event>(event)->signalled.load() ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}
ze_result_t ZE_APICALL event_reset(ze_event_handle_t event) {
  if (!event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  of<Event>(event)->signalled.store(false);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL module_create(ze_context_handle_t context, ze_device_handle_t device,
                                     const ze_module_desc_t* desc, ze_module_handle_t* out,
                                     ze_module_build_log_handle_t* log_out) {
  if (!context || !device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out || !desc->pInputModule) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  auto log = std::make_unique<BuildLog>();
  const std::span<const uint8_t> il(desc->pInputModule, desc->inputSize);
  const manifold::compiler::Target target = manifold::compiler::host_cpu_target();
  ze_result_t result = ZE_RESULT_SUCCESS;
  auto module = std::make_unique<Module>();
  if (std::string why; !manifold::compiler::il_valid(il, &why)) {
    log->text = "invalid SPIR-V: " + why;
    result = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  } else {
    manifold::compiler::BuildOutput built =
        manifold::compiler::build_il(il, desc->pBuildFlags ? desc->pBuildFlags : "", target, {});
    log->text = built.log;
    if (!built.success) {
      result = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    } else {
      std::string error;
      module->executable = manifold::cpu::CpuExecutable::load(built.binary, target, &error);
      if (!module->executable) {
        log->text += error;
        result = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
      }
    }
  }
  if (log_out) *log_out = handle<ze_module_build_log_handle_t>(log.release());
  if (result == ZE_RESULT_SUCCESS) *out = handle<ze_module_handle_t>(module.release());
  return result;
}
ze_result_t ZE_APICALL module_destroy(ze_module_handle_t module) {
  if (!module) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete of<Module>(module);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL log_string(ze_module_build_log_handle_t log, size_t* size, char* out) {
  if (!log) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const std::string& text = of<BuildLog>(log)->text;
  if (!out) {
    *size = text.size() + 1;
    return ZE_RESULT_SUCCESS;
  }
  if (*size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  const size_t n = std::min(*size - 1, text.size());
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL log_destroy(ze_module_build_log_handle_t log) {
  if (!log) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete of<BuildLog>(log);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL kernel_create(ze_module_handle_t module, const ze_kernel_desc_t* desc,
                                     ze_kernel_handle_t* out) {
  if (!module) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out || !desc->pKernelName) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Module& m = *of<Module>(module);
  const manifold::compiler::KernelInfo* info = m.executable->find(desc->pKernelName);
  if (!info) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
  auto* k = new Kernel{&m, desc->pKernelName, info, {}, {}, {1, 1, 1}};
  k->values.resize(info->args.size());
  k->local_sizes.resize(info->args.size());
  *out = handle<ze_kernel_handle_t>(k);
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL kernel_destroy(ze_kernel_handle_t kernel) {
  if (!kernel) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete of<Kernel>(kernel);
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL set_argument(ze_kernel_handle_t kernel, uint32_t index, size_t size,
                                    const void* value) {
  if (!kernel) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Kernel& k = *of<Kernel>(kernel);
  if (index >= k.values.size()) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
  const bool local = k.info->args[index].kind == manifold::compiler::ArgKind::Local;
  if (local != (value == nullptr)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (local) {
    if (!size) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    k.local_sizes[index] = size;
    return ZE_RESULT_SUCCESS;
  }
  const auto* bytes = static_cast<const uint8_t*>(value);
  k.values[index].assign(bytes, bytes + size);
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL set_group_size(ze_kernel_handle_t kernel, uint32_t x, uint32_t y,
                                      uint32_t z) {
  if (!kernel) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!x || !y || !z || uint64_t(x) * y * z > 1024)
    return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
  Kernel& k = *of<Kernel>(kernel);
  k.group[0] = x, k.group[1] = y, k.group[2] = z;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL set_global_offset(ze_kernel_handle_t kernel, uint32_t x, uint32_t y,
                                         uint32_t z) {
  if (!kernel) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Kernel& k = *of<Kernel>(kernel);
  k.offset[0] = x, k.offset[1] = y, k.offset[2] = z;
  return ZE_RESULT_SUCCESS;
}

}  // namespace

void fill_context(ze_context_dditable_t& t) {
  t.pfnCreate = context_create;
  t.pfnDestroy = context_destroy;
}
void fill_memory(ze_mem_dditable_t& t) {
  t.pfnAllocDevice = alloc_device;
  t.pfnAllocHost = alloc_host;
  t.pfnAllocShared = alloc_shared;
  t.pfnFree = mem_free;
}
void fill_command_list(ze_command_list_dditable_t& t) {
  t.pfnCreateImmediate = list_create_immediate;
  t.pfnDestroy = list_destroy;
  t.pfnAppendMemoryCopy = append_copy;
  t.pfnAppendMemoryFill = append_fill;
  t.pfnAppendLaunchKernel = append_launch;
}
void fill_event_pool(ze_event_pool_dditable_t& t) {
  t.pfnCreate = pool_create;
  t.pfnDestroy = pool_destroy;
}
void fill_event(ze_event_dditable_t& t) {
  t.pfnCreate = event_create;
  t.pfnDestroy = event_destroy;
  t.pfnHostSynchronize = event_synchronize;
  t.pfnHostReset = event_reset;
}
void fill_module(ze_module_dditable_t& t) {
  t.pfnCreate = module_create;
  t.pfnDestroy = module_destroy;
}
void fill_build_log(ze_module_build_log_dditable_t& t) {
  t.pfnGetString = log_string;
  t.pfnDestroy = log_destroy;
}
void fill_kernel(ze_kernel_dditable_t& t) {
  t.pfnCreate = kernel_create;
  t.pfnDestroy = kernel_destroy;
  t.pfnSetArgumentValue = set_argument;
  t.pfnSetGroupSize = set_group_size;
}

}  // namespace ze_test

namespace ze_test {
void fill_kernel_exp(ze_kernel_exp_dditable_t& t) { t.pfnSetGlobalOffsetExp = set_global_offset; }
}  // namespace ze_test
