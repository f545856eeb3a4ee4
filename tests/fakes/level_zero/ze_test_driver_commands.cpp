// The test driver's command execution on the host CPU. Memory of every kind is host memory
// (aligned_alloc). An immediate command list runs its commands in order on a thread of its own,
// as a GPU would, after the events each waits for are signalled; each command records its start
// and end on the host's monotonic clock (the device clock: 1 tick = 1 ns) and signals its event.
// A module's SPIR-V goes through Manifold's SPIR-V reader and CPU pipeline (compiler::build_il for
// the host CPU) to a CpuExecutable, whose run() executes a launch's NDRange. Faults can be
// injected (zeTestInjectFault, ze_test_driver_controls.h): a rejected module, out of device memory,
// a lost device.
// As on a GPU, kernels and fills touch only memory the device reaches (the driver's allocations,
// imported host ranges), copies at least on one side.
#include "ze_test_driver_commands.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/compiler.h"
#include "compiler/printf_buffer.h"
#include "ze_test_driver_controls.h"
#include "ze_test_driver_values.h"

namespace ze_test {
namespace {

struct Context {};
struct EventPool {
  uint32_t count;
  bool timestamped;
};
struct Event {
  bool timestamped;
  bool signalled = false;       // under g_events
  uint64_t start = 0, end = 0;  // the command's times (device clock), once signalled
};

// Every event's state changes under one lock; waiters (lists, host synchronizations) sleep on
// one condition.
// The driver's shared state is never destroyed: command lists may still run while the process
// exits (an application need not release its queues), after static destructors ran.
std::mutex& g_events = *new std::mutex;
std::condition_variable& g_signalled = *new std::condition_variable;

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

std::atomic<bool> g_device_lost{false};
// A device being lost: the commands running now end without signalling. Commands run under a
// shared lock of g_running, so that the loss takes effect once none runs (their memory and
// modules may go as soon as the backend sees the loss).
std::atomic<bool> g_device_losing{false};
std::shared_mutex& g_running = *new std::shared_mutex;
// The device's copy engine: copies and fills run one at a time, as on a GPU's copy engine. This
// also orders the copies of identical bytes that the scheduler may make from two queues at once
// (scheduler/migration.cpp: a reader need not wait for another queue's copy in flight).
std::mutex& g_copy_engine = *new std::mutex;
std::atomic<int> g_failing_allocations{0};
std::atomic<int> g_rejected_modules{0};
std::atomic<int> g_refused_launches{0};
std::atomic<unsigned long> g_waits_appended{0};

// An immediate list's commands, run in order on its own thread.
struct CommandList {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::function<void()>> commands;
  bool stopping = false;
  std::thread runner;

  CommandList() : runner([this] { run(); }) {}
  ~CommandList() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    ready.notify_one();
    runner.join();
  }
  void push(std::function<void()> command) {
    {
      std::lock_guard lock(mutex);
      commands.push_back(std::move(command));
    }
    ready.notify_one();
  }
  void run() {
    for (;;) {
      std::function<void()> command;
      {
        std::unique_lock lock(mutex);
        ready.wait(lock, [&] { return stopping || !commands.empty(); });
        if (commands.empty()) return;
        command = std::move(commands.front());
        commands.pop_front();
      }
      command();
    }
  }
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

// Every live allocation, so that zeMemFree rejects what it did not give out, device memory runs
// out where the device's would, and commands touch only memory the device can reach.
struct Allocation {
  size_t size;
  bool device_memory;
};
std::mutex& g_memory_mutex = *new std::mutex;
std::map<void*, Allocation>& g_allocations = *new std::map<void*, Allocation>;
uint64_t g_device_bytes = 0;

// Whether [p, p + size) is memory the device reaches: one allocation of the driver or one
// imported host range. Other host memory only copies may touch, from or to such memory (the
// driver stages it), as with a real GPU, whose kernels fault on it.
bool reachable(const void* p, size_t size) {
  size = std::max<size_t>(size, 1);
  {
    std::lock_guard lock(g_memory_mutex);
    auto after = g_allocations.upper_bound(const_cast<void*>(p));
    if (after != g_allocations.begin()) {
      const auto& [base, allocation] = *std::prev(after);
      const size_t offset = static_cast<const uint8_t*>(p) - static_cast<const uint8_t*>(base);
      if (offset + size <= allocation.size) return true;
    }
  }
  return imported(p, size);
}

ze_result_t allocate(size_t size, size_t alignment, bool device_memory, void** out) {
  if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (alignment & (alignment - 1)) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  if (device_memory && size > ze_test::kMaxAlloc) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  alignment = std::max<size_t>(alignment, 64);
  std::lock_guard lock(g_memory_mutex);
  if (device_memory && g_device_bytes + size > ze_test::kMemory)
    return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  void* p = std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (!p) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  g_allocations.emplace(p, Allocation{size, device_memory});
  if (device_memory) g_device_bytes += size;
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
  if (g_device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  for (int left = g_failing_allocations.load(); left > 0;)
    if (g_failing_allocations.compare_exchange_weak(left, left - 1))
      return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  return allocate(size, alignment, true, out);
}
ze_result_t ZE_APICALL alloc_host(ze_context_handle_t context, const ze_host_mem_alloc_desc_t*,
                                  size_t size, size_t alignment, void** out) {
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return allocate(size, alignment, false, out);
}
ze_result_t ZE_APICALL alloc_shared(ze_context_handle_t context, const ze_device_mem_alloc_desc_t*,
                                    const ze_host_mem_alloc_desc_t*, size_t size, size_t alignment,
                                    ze_device_handle_t, void** out) {
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return allocate(size, alignment, false, out);
}
ze_result_t ZE_APICALL mem_free(ze_context_handle_t context, void* p) {
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::lock_guard lock(g_memory_mutex);
  auto found = g_allocations.find(p);
  if (found == g_allocations.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (found->second.device_memory) g_device_bytes -= found->second.size;
  g_allocations.erase(found);
  std::free(p);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL list_create_immediate(ze_context_handle_t context, ze_device_handle_t device,
                                             const ze_command_queue_desc_t* desc,
                                             ze_command_list_handle_t* out) {
  if (!context || !device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (g_device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  *out = handle<ze_command_list_handle_t>(new CommandList);
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL list_destroy(ze_command_list_handle_t list) {
  if (!list) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete of<CommandList>(list);  // runs what is queued first
  return ZE_RESULT_SUCCESS;
}

// Appends `work` to `list`: it runs after the events in `waits` are signalled and then signals
// `signal` with its start and end times. A lost device runs nothing more.
ze_result_t append(ze_command_list_handle_t list, ze_event_handle_t signal, uint32_t wait_count,
                   ze_event_handle_t* waits, std::function<void()> work) {
  if (!list) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (wait_count && !waits) return ZE_RESULT_ERROR_INVALID_SIZE;
  if (g_device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::vector<Event*> wait_events;
  for (uint32_t i = 0; i < wait_count; ++i) {
    if (!waits[i]) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    wait_events.push_back(of<Event>(waits[i]));
  }
  g_waits_appended += wait_count;
  of<CommandList>(list)->push(
      [wait_events = std::move(wait_events), work = std::move(work), event = of<Event>(signal)] {
        {
          std::unique_lock lock(g_events);
          g_signalled.wait(lock, [&] {
            return g_device_lost || std::all_of(wait_events.begin(), wait_events.end(),
                                                [](const Event* e) { return e->signalled; });
          });
        }
        std::shared_lock running(g_running);
        if (g_device_losing) return;
        const uint64_t start = now_ns();
        if (work) work();
        const uint64_t end = now_ns();
        // A device lost while the command ran never signals it.
        if (!event || g_device_losing) return;
        {
          std::lock_guard lock(g_events);
          event->start = start;
          event->end = end;
          event->signalled = true;
        }
        g_signalled.notify_all();
      });
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL append_copy(ze_command_list_handle_t list, void* dst, const void* src,
                                   size_t size, ze_event_handle_t event, uint32_t wait_count,
                                   ze_event_handle_t* waits) {
  if (!dst || !src) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!reachable(dst, size) && !reachable(src, size)) {
    std::fprintf(stderr,
                 "ze_test_driver: copy of %zu bytes from %p to %p: neither side is driver "
                 "memory or imported host memory\n",
                 size, src, dst);
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  return append(list, event, wait_count, waits, [=] {
    std::lock_guard engine(g_copy_engine);
    std::memmove(dst, src, size);
  });
}

ze_result_t ZE_APICALL append_fill(ze_command_list_handle_t list, void* dst, const void* pattern,
                                   size_t pattern_size, size_t size, ze_event_handle_t event,
                                   uint32_t wait_count, ze_event_handle_t* waits) {
  if (!dst || !pattern) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // The specification: a power of two no larger than the engine's maximum (128 here).
  if (!pattern_size || (pattern_size & (pattern_size - 1)) || pattern_size > 128 ||
      size % pattern_size)
    return ZE_RESULT_ERROR_INVALID_SIZE;
  if (!reachable(dst, size)) {
    std::fprintf(stderr,
                 "ze_test_driver: fill of %zu bytes at %p: neither driver memory nor "
                 "imported host memory\n",
                 size, dst);
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  // The pattern is read at the append (the application may reuse its memory at once).
  std::vector<uint8_t> bytes(static_cast<const uint8_t*>(pattern),
                             static_cast<const uint8_t*>(pattern) + pattern_size);
  return append(list, event, wait_count, waits, [=, bytes = std::move(bytes)] {
    std::lock_guard engine(g_copy_engine);
    for (size_t done = 0; done < size; done += bytes.size())
      std::memcpy(static_cast<uint8_t*>(dst) + done, bytes.data(), bytes.size());
  });
}

ze_result_t ZE_APICALL append_launch(ze_command_list_handle_t list, ze_kernel_handle_t handle,
                                     const ze_group_count_t* groups, ze_event_handle_t event,
                                     uint32_t wait_count, ze_event_handle_t* waits) {
  if (!handle) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!groups) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  for (int left = g_refused_launches.load(); left > 0;)
    if (g_refused_launches.compare_exchange_weak(left, left - 1))
      return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  const Kernel& k = *of<Kernel>(handle);
  const size_t n = k.info->args.size();
  for (size_t i = 0; i < n; ++i) {
    if (!k.local_sizes[i] && k.values[i].empty())
      return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;  // never set
    // A buffer argument's address must be memory the device reaches (null is allowed).
    void* address = nullptr;
    if (k.info->args[i].kind == manifold::compiler::ArgKind::Buffer &&
        k.values[i].size() == sizeof address)
      std::memcpy(&address, k.values[i].data(), sizeof address);
    if (address && !reachable(address, 1)) {
      std::fprintf(stderr,
                   "ze_test_driver: %s: argument %zu (%p) is neither driver memory nor "
                   "imported host memory\n",
                   k.name.c_str(), i, address);
      return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
  }
  manifold::compiler::NDRange range;
  const uint32_t counts[3] = {groups->groupCountX, groups->groupCountY, groups->groupCountZ};
  // Level Zero launches have no work dimension: as Intel's runtime, the highest dimension the
  // launch spans (get_work_dim()).
  range.work_dim = 1;
  for (unsigned d = 0; d < 3; ++d) {
    range.local_size[d] = k.group[d];
    range.global_size[d] = size_t(k.group[d]) * counts[d];
    range.global_offset[d] = k.offset[d];
    if (range.global_size[d] > 1) range.work_dim = d + 1;
  }
  // The arguments are taken at the append, as the specification says. As Intel's driver: a
  // launch's printf output fills a buffer of the size the device reports and is printed when
  // the launch completes.
  return append(
      list, event, wait_count, waits,
      [module = k.module, name = k.name, values = k.values, local_sizes = k.local_sizes, range] {
        std::vector<const void*> pointers(values.size());
        for (size_t i = 0; i < values.size(); ++i)
          if (!local_sizes[i]) pointers[i] = values[i].data();
        manifold::compiler::PrintfBuffer printed(ze_test::kPrintfBufferSize);
        module->executable->run(name, range, pointers.data(), local_sizes.data(), &printed);
        printed.print(stdout);
      });
}

ze_result_t ZE_APICALL append_wait(ze_command_list_handle_t list, uint32_t count,
                                   ze_event_handle_t* events) {
  if (!count || !events) return ZE_RESULT_ERROR_INVALID_SIZE;
  return append(list, nullptr, count, events, nullptr);
}

ze_result_t ZE_APICALL append_barrier(ze_command_list_handle_t list, ze_event_handle_t event,
                                      uint32_t wait_count, ze_event_handle_t* waits) {
  return append(list, event, wait_count, waits, nullptr);
}

ze_result_t ZE_APICALL pool_create(ze_context_handle_t context, const ze_event_pool_desc_t* desc,
                                   uint32_t, ze_device_handle_t*, ze_event_pool_handle_t* out) {
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  *out = handle<ze_event_pool_handle_t>(
      new EventPool{desc->count, (desc->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) != 0});
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
  *out = handle<ze_event_handle_t>(new Event{of<EventPool>(pool)->timestamped});
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL event_destroy(ze_event_handle_t event) {
  if (!event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete of<Event>(event);
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL event_synchronize(ze_event_handle_t handle, uint64_t timeout_ns) {
  if (!handle) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Event& e = *of<Event>(handle);
  std::unique_lock lock(g_events);
  auto done = [&] { return e.signalled || g_device_lost; };
  if (timeout_ns == UINT64_MAX)
    g_signalled.wait(lock, done);
  else
    g_signalled.wait_for(lock, std::chrono::nanoseconds(timeout_ns), done);
  if (e.signalled) return ZE_RESULT_SUCCESS;
  return g_device_lost ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_NOT_READY;
}
ze_result_t ZE_APICALL event_query(ze_event_handle_t handle) {
  return event_synchronize(handle, 0);
}
ze_result_t ZE_APICALL event_reset(ze_event_handle_t event) {
  if (!event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::lock_guard lock(g_events);
  of<Event>(event)->signalled = false;
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL event_timestamp(ze_event_handle_t handle,
                                       ze_kernel_timestamp_result_t* out) {
  if (!handle) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const Event& e = *of<Event>(handle);
  std::lock_guard lock(g_events);
  if (!e.timestamped) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (!e.signalled) return ZE_RESULT_NOT_READY;
  // The kernel timestamp counter keeps the low kKernelTimestampBits of the device clock.
  const uint64_t mask = (uint64_t(1) << kKernelTimestampBits) - 1;
  out->global.kernelStart = out->context.kernelStart = e.start & mask;
  out->global.kernelEnd = out->context.kernelEnd = e.end & mask;
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
  if (g_device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (int left = g_rejected_modules.load();
      left > 0 && g_rejected_modules.compare_exchange_strong(left, left - 1)) {
    log->text = "test driver: module rejected (injected fault): unsupported on this device";
    result = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  } else if (std::string why; !manifold::compiler::il_valid(il, &why)) {
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
  t.pfnAppendWaitOnEvents = append_wait;
  t.pfnAppendBarrier = append_barrier;
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
  t.pfnQueryStatus = event_query;
  t.pfnQueryKernelTimestamp = event_timestamp;
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

void fill_kernel_exp(ze_kernel_exp_dditable_t& t) { t.pfnSetGlobalOffsetExp = set_global_offset; }

ze_result_t ZE_APICALL device_pci_properties(ze_device_handle_t device,
                                             ze_pci_ext_properties_t* p) {
  if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->address = {0, kPciBus, 0, 0};
  p->maxSpeed = {4, 16, int64_t(32) << 30};
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL device_global_timestamps(ze_device_handle_t device, uint64_t* host,
                                                uint64_t* device_timestamp) {
  if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!host || !device_timestamp) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (g_device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  *host = *device_timestamp = now_ns();
  return ZE_RESULT_SUCCESS;
}

unsigned long waits_appended() { return g_waits_appended.load(); }

void inject_fault(int fault, int count) {
  switch (fault) {
    case ze_test::kFaultRejectModules:
      g_rejected_modules = count;
      break;
    case ze_test::kFaultOutOfDeviceMemory:
      g_failing_allocations = count;
      break;
    case ze_test::kFaultRefuseLaunches:
      g_refused_launches = count;
      break;
    case ze_test::kFaultDeviceLost: {
      g_device_losing = true;
      std::unique_lock none_running(g_running);
      {
        std::lock_guard lock(g_events);
        g_device_lost = true;
      }
      g_signalled.notify_all();
      break;
    }
    default:
      break;
  }
}
}  // namespace ze_test

extern "C" ZE_DLLEXPORT void zeTestInjectFault(int fault, int count) {
  ze_test::inject_fault(fault, count);
}

extern "C" ZE_DLLEXPORT unsigned long zeTestWaitsAppended() { return ze_test::waits_appended(); }
