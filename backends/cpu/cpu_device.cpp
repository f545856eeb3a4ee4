#include "backends/cpu/cpu_device.h"

#include <hwloc.h>
#include <oneapi/tbb/global_control.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "backends/cpu/cpu_program.h"
#include "backends/cpu/cpu_queue.h"
#include "core/platform.h"

namespace manifold::cpu {
namespace {

// A device of N compute units runs its kernels on N threads, whether or not the application
// thread waits inside Manifold (clFinish joins the arena and works; an application polling
// clGetEventInfo does not). So N worker slots, plus one slot kept for a joining application
// thread: without it the joiner finds the slots taken by workers still lingering after the
// last command and hands its work to them instead, tens of microseconds per enqueue + clFinish
// round trip. While an application thread works inside, N + 1 threads share the N cores.
// oneTBB's thread pool holds one worker fewer than the cores by default, counting on the
// application thread: a global_control raises it to N for the process (one made by the
// application with a lower limit still wins: oneTBB takes the smallest).
void initialize_arena(tbb::task_arena& arena, unsigned threads) {
  static const unsigned pool_threads = [] {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    static tbb::global_control workers(tbb::global_control::max_allowed_parallelism, cores + 1);
    return cores;
  }();
  const unsigned workers = std::max(1u, std::min(threads, pool_threads));
  arena.initialize(static_cast<int>(workers + 1), /*reserved_for_masters=*/1);
}

struct HostFacts {
  std::string model = "Unknown CPU", vendor = "Unknown vendor";
  cl_uint vendor_id = 0;
  cl_uint cores = 1;
  cl_uint clock_mhz = 0;
  cl_ulong memory = 0;
  cl_ulong l1d = 0, l2 = 0, l3 = 0;
  cl_uint cacheline = 64;
};

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  }
  return {};
}

HostFacts read_host() {
  HostFacts f;
  if (auto m = cpuinfo_field("model name"); !m.empty()) f.model = m;
  const std::string vendor = cpuinfo_field("vendor_id");
  if (vendor == "AuthenticAMD")
    f.vendor = "Advanced Micro Devices, Inc.", f.vendor_id = 0x1022;
  else if (vendor == "GenuineIntel")
    f.vendor = "Intel(R) Corporation", f.vendor_id = 0x8086;
  else if (!vendor.empty())
    f.vendor = vendor;

  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
    const int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (pus > 0) f.cores = static_cast<cl_uint>(pus);
    auto cache_size = [&](hwloc_obj_type_t type) -> cl_ulong {
      hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, 0);
      if (!obj || !obj->attr) return 0;
      if (type == HWLOC_OBJ_L1CACHE && obj->attr->cache.linesize)
        f.cacheline = obj->attr->cache.linesize;
      return obj->attr->cache.size;
    };
    f.l1d = cache_size(HWLOC_OBJ_L1CACHE);
    f.l2 = cache_size(HWLOC_OBJ_L2CACHE);
    f.l3 = cache_size(HWLOC_OBJ_L3CACHE);
    hwloc_topology_destroy(topo);
  } else {
    f.cores = std::max(1u, std::thread::hardware_concurrency());
  }
  // The process may be confined to fewer CPUs than the machine has (containers, taskset).
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    f.cores = std::min<cl_uint>(f.cores, CPU_COUNT(&set));

  std::ifstream freq("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  unsigned long khz = 0;
  if (freq >> khz)
    f.clock_mhz = static_cast<cl_uint>(khz / 1000);
  else if (auto mhz = cpuinfo_field("cpu MHz"); !mhz.empty())
    f.clock_mhz = static_cast<cl_uint>(std::stod(mhz));

  f.memory = cl_ulong(sysconf(_SC_PHYS_PAGES)) * cl_ulong(sysconf(_SC_PAGESIZE));
  return f;
}

bool has_feature(const compiler::Target& t, const char* feature) {
  return std::find(t.opencl_c_features.begin(), t.opencl_c_features.end(), feature) !=
         t.opencl_c_features.end();
}

// SIMD width in bytes of the host vector unit, from the target's feature string.
unsigned vector_bytes(const compiler::Target& t) {
  if (t.features.find("+avx512f") != std::string::npos) return 64;
  if (t.features.find("+avx2") != std::string::npos ||
      t.features.find("+avx,") != std::string::npos)
    return 32;
  return 16;
}

}  // namespace

CpuDevice::CpuDevice() : target_(compiler::host_cpu_target()) {
  static const HostFacts host = read_host();
  DeviceInfo& d = info_;
  d.type = CL_DEVICE_TYPE_CPU;
  d.name = host.model;
  d.vendor = host.vendor;
  d.vendor_id = host.vendor_id;
  d.driver_version = "Manifold " MANIFOLD_VERSION;
  d.version_suffix = "Manifold CPU";
  d.max_compute_units = host.cores;
  d.max_work_group_size = 4096;
  d.max_work_item_sizes = {4096, 4096, 4096};
  d.max_clock_frequency = host.clock_mhz;
  d.global_mem_size = host.memory;
  d.max_mem_alloc_size = std::max<cl_ulong>(host.memory / 2, 128ull << 20);
  d.global_mem_cache_type = CL_READ_WRITE_CACHE;
  d.global_mem_cache_size = host.l3 ? host.l3 : host.l2;
  d.global_mem_cacheline_size = host.cacheline;
  d.local_mem_type = CL_GLOBAL;  // __local lives in ordinary (cached) memory on a CPU
  d.local_mem_size = 512 * 1024;
  d.max_constant_buffer_size = 1 << 20;
  d.max_constant_args = 16;
  d.max_parameter_size = 1024;
  d.mem_base_addr_align = 1024;
  d.host_unified_memory = true;
  if (has_feature(target_, "__opencl_c_program_scope_global_variables")) {
    d.max_global_variable_size = 64 * 1024;
    d.global_variable_preferred_total_size = 1 << 20;
  }
  d.execution_capabilities = CL_EXEC_KERNEL | CL_EXEC_NATIVE_KERNEL;
  d.queue_on_host_properties = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
  d.single_fp_config = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_ROUND_TO_ZERO |
                       CL_FP_ROUND_TO_INF | CL_FP_FMA;
  if (target_.fp64) d.double_fp_config = d.single_fp_config;
  // Half (compiler/builtins/half.cl): computed in float and rounded once to nearest even, denormals
  // kept; fma correctly rounded.
  if (target_.fp16)
    d.half_fp_config = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_FMA;
  const unsigned vb = vector_bytes(target_);
  // Elements of each type in one vector register, at most 16: OpenCL C has no wider vectors,
  // and applications that pick their vector type from these (hash crackers) take them as
  // widths to compile with. Kernels in vectors this wide run one work-item at a time with each
  // operation a full SIMD operation (the item-loop form, compiler/workgroup.h).
  auto lanes = [](unsigned elements) { return std::min(elements, 16u); };
  const cl_uint widths[7] = {lanes(vb),
                             lanes(vb / 2),
                             lanes(vb / 4),
                             lanes(vb / 8),
                             lanes(vb / 4),
                             target_.fp64 ? lanes(vb / 8) : 0,
                             target_.fp16 ? lanes(vb / 2) : 0};
  std::copy(std::begin(widths), std::end(widths), d.preferred_vector_width);
  std::copy(std::begin(widths), std::end(widths), d.native_vector_width);
  // Half arithmetic runs in float lanes (F16C converts; no AVX512-FP16 is used).
  d.native_vector_width[6] = target_.fp16 ? lanes(vb / 4) : 0;
  d.preferred_work_group_size_multiple = vb / 4;  // floats per vector register
  d.non_uniform_work_group_support = true;
  fill_from_target(d, target_);
  // Host memory imports (clImportMemoryARM): the CPU works on the application's pages in place.
  d.extensions.push_back(name_version("cl_arm_import_memory", CL_MAKE_VERSION(1, 0, 0)));
  d.extensions.push_back(name_version("cl_arm_import_memory_host", CL_MAKE_VERSION(1, 0, 0)));
  d.extensions.push_back(name_version("cl_arm_import_memory_dma_buf", CL_MAKE_VERSION(1, 0, 0)));

  // Shared virtual memory is the host's own memory here: every kind, host pointers included.
  d.svm_capabilities = CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER |
                       CL_DEVICE_SVM_FINE_GRAIN_SYSTEM | CL_DEVICE_SVM_ATOMICS;

  // printf runs on the host: a launch's output can be kept for its queue's callback.
  d.printf_to_sink = true;

  d.partition_max_sub_devices = host.cores;
  d.partition_properties = {CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS};

  // A stable identity for this CPU model (cl_khr_device_uuid): no hardware UUID exists.
  const size_t h = std::hash<std::string>{}(d.name + d.vendor);
  std::memcpy(d.device_uuid.data(), &h, sizeof(h));
  const size_t hd = std::hash<std::string>{}(d.driver_version);
  std::memcpy(d.driver_uuid.data(), &hd, sizeof(hd));

  initialize_arena(arena_, d.max_compute_units);
}

CpuDevice::CpuDevice(CpuDevice& parent, cl_uint compute_units, cl_device_partition_property,
                     std::vector<cl_device_partition_property> partition_type)
    : target_(parent.target_), private_memory_(parent.private_memory_) {
  info_ = parent.info_;
  info_.max_compute_units = compute_units;
  info_.partition_max_sub_devices = compute_units;
  parent_ = Ref<Device>(&parent);
  partition_type_ = std::move(partition_type);
  initialize_arena(arena_, compute_units);
}

CpuDevice::CpuDevice(EmulatedGpu gpu) : CpuDevice() {
  private_memory_ = true;
  info_.type = CL_DEVICE_TYPE_GPU;
  info_.name += " (emulated GPU " + std::to_string(gpu.index) + ")";
  info_.host_unified_memory = false;
  info_.execution_capabilities = CL_EXEC_KERNEL;  // native kernels need host memory
  // As a GPU with memory of its own would: SVM allocations only, kept current by migration.
  info_.svm_capabilities = CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER;
  const size_t h = std::hash<std::string>{}(info_.name);
  std::memcpy(info_.device_uuid.data(), &h, sizeof(h));
}

PrivateBacking::PrivateBacking(MemoryPlace place, size_t size)
    : DeviceBacking(place),
      data_(static_cast<std::byte*>(
          std::aligned_alloc(kBufferAlignment, (std::max<size_t>(size, 1) + kBufferAlignment - 1) /
                                                   kBufferAlignment * kBufferAlignment))) {
  if (!data_) fail(CL_MEM_OBJECT_ALLOCATION_FAILURE, "cannot allocate the emulated GPU's memory");
}

PrivateBacking::~PrivateBacking() { std::free(data_); }

void PrivateBacking::read_to_host(void* host, size_t offset, size_t size) {
  std::memcpy(host, data_ + offset, size);
}

std::byte* CpuDevice::address(const Location& l) {
  return l.mem ? address(*l.mem, l.offset) : l.host + l.offset;
}

std::byte* CpuDevice::address(MemObject& mem, size_t offset) {
  // Imported memory is used in place, by emulated GPUs too.
  // SVM allocations too: an emulated GPU's copy of one is at its address, i.e. the host's pages.
  if (!private_memory_ || mem.imported() || mem.svm()) return mem.host_data() + offset;
  auto& backing = static_cast<PrivateBacking&>(mem.backing(memory_place(), [&] {
    return std::make_unique<PrivateBacking>(memory_place(), mem.root().size());
  }));
  return backing.data() + mem.root_offset() + offset;
}

Device* CpuDevice::create_sub_device(cl_uint compute_units, cl_device_partition_property kind,
                                     std::vector<cl_device_partition_property> partition_type) {
  return new CpuDevice(*this, compute_units, kind, std::move(partition_type));
}

std::shared_ptr<NativeQueue> CpuDevice::create_native_queue_impl(bool out_of_order) {
  if (out_of_order) return std::make_shared<ConcurrentQueue>(*this, arena_);
  return std::make_shared<InOrderQueue>(*this, arena_);
}

std::shared_ptr<const LoadedProgram> CpuDevice::load_program(std::span<const uint8_t> binary,
                                                             std::string* error) {
  auto exe = CpuExecutable::load(binary, target_, error);
  if (!exe) return nullptr;
  return std::make_shared<CpuProgram>(std::move(exe));
}

}  // namespace manifold::cpu
