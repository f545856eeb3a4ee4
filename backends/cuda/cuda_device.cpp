#include "backends/cuda/cuda_device.h"

#include <algorithm>
#include <cstring>

#include "backends/cuda/cuda_queue.h"
#include "core/log.h"
#include "core/platform.h"

namespace manifold::cuda {
namespace {

int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  api().cuDeviceGetAttribute(&value, which, device);
  return value;
}

}  // namespace

CudaDevice::CudaDevice(CUdevice device, int ordinal) : device_(device) {
  const Api& a = api();
  if (CUresult r = a.cuDevicePrimaryCtxRetain(&context_, device_); r != CUDA_SUCCESS)
    fail(CL_DEVICE_NOT_AVAILABLE, "cuDevicePrimaryCtxRetain: " + error_text(r));
  const int major = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  const int minor = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  target_ = compiler::nvptx_target(major, minor);
  max_shared_optin_ =
      std::max(attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
               attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  for (int d = 0; d < 3; ++d)
    max_grid_[d] = uint64_t(std::max(
        1, attribute(device_, CUdevice_attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + d))));

  DeviceInfo& d = info_;
  char name[256] = {};
  a.cuDeviceGetName(name, sizeof(name) - 1, device_);
  d.type = CL_DEVICE_TYPE_GPU;
  d.name = name;
  d.vendor = "NVIDIA Corporation";
  d.vendor_id = 0x10de;
  d.driver_version = "Manifold " MANIFOLD_VERSION " (CUDA " +
                     std::to_string(a.driver_version / 1000) + "." +
                     std::to_string(a.driver_version % 1000 / 10) + ", sm_" +
                     std::to_string(major) + std::to_string(minor) + ")";
  d.version_suffix = "Manifold CUDA";
  d.max_compute_units = attribute(device_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  d.max_work_group_size = attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  d.max_work_item_sizes = {size_t(attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)),
                           size_t(attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)),
                           size_t(attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z))};
  d.max_clock_frequency = attribute(device_, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;
  size_t total = 0;
  a.cuDeviceTotalMem(&total, device_);
  d.global_mem_size = total;
  // One allocation may take most of the memory (the driver allows it; OpenCL's 1/4 is a floor).
  d.max_mem_alloc_size =
      std::max<cl_ulong>(total / 4, total - std::min<cl_ulong>(total, 1ull << 30));
  d.global_mem_cache_type = CL_READ_WRITE_CACHE;
  d.global_mem_cache_size = attribute(device_, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  d.global_mem_cacheline_size = 128;
  d.local_mem_type = CL_LOCAL;
  // A work-group may use up to the opt-in limit: launches raise the kernel's dynamic limit.
  d.local_mem_size = max_shared_optin_;
  // __constant arguments are read from global memory (the NVPTX pipeline retypes them), so a
  // __constant buffer may be as large as any buffer; program-scope __constant data stays in the
  // constant bank (CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 64 KB).
  d.max_constant_buffer_size = d.max_mem_alloc_size;
  d.max_constant_args = 8;
  d.max_parameter_size = 4096;       // CUDA's kernel parameter space (4 KB; more from CUDA 12.1 on)
  d.mem_base_addr_align = 4096 * 8;  // bits: sub-buffers at 4 KB keep every vector load aligned
  d.min_data_type_align_size = 128;
  d.error_correction_support = attribute(device_, CU_DEVICE_ATTRIBUTE_ECC_ENABLED) != 0;
  d.host_unified_memory = attribute(device_, CU_DEVICE_ATTRIBUTE_INTEGRATED) != 0;
  d.profiling_timer_resolution = 500;  // ns: CUDA events resolve about half a microsecond
  d.execution_capabilities = CL_EXEC_KERNEL;
  d.queue_on_host_properties = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
  // No CL_FP_DENORM for single precision: libclc's and libdevice's float functions flush some
  // denormal results (CTS math_brute_force: exp, exp2, fmod, ldexp, remainder, rootn, erfc), which
  // the spec allows a device that does not report denormals.
  d.single_fp_config = CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_ROUND_TO_ZERO |
                       CL_FP_ROUND_TO_INF | CL_FP_FMA | CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT;
  d.double_fp_config = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_ROUND_TO_ZERO |
                       CL_FP_ROUND_TO_INF | CL_FP_FMA;
  const cl_uint widths[7] = {1, 1, 1, 1, 1, 1, 0};  // scalar SIMT lanes: no vector preference
  std::copy(std::begin(widths), std::end(widths), d.preferred_vector_width);
  std::copy(std::begin(widths), std::end(widths), d.native_vector_width);
  d.preferred_work_group_size_multiple = attribute(device_, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  d.non_uniform_work_group_support = false;  // CUDA grids are uniform (not yet emulated)
  fill_from_target(d, target_);
  d.printf_buffer_size = 1 << 20;  // CUDA's default printf FIFO
  // Command-buffer graphs lost printf output in the CTS (command_buffer printf on the H100):
  // until that is understood, printf kernels are not recorded on CUDA devices.
  d.command_buffer_printf = false;
  d.extensions.push_back(name_version("cl_khr_pci_bus_info", CL_MAKE_VERSION(1, 0, 0)));
  // Host memory imports (clImportMemoryARM): page-locked and mapped into the GPU's address space.
  const bool maps_host =
      a.cuMemHostGetDevicePointer && attribute(device_, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
  if (maps_host) {
    d.extensions.push_back(name_version("cl_arm_import_memory", CL_MAKE_VERSION(1, 0, 0)));
    d.extensions.push_back(name_version("cl_arm_import_memory_host", CL_MAKE_VERSION(1, 0, 0)));
  }
  // SVM (svm/): coarse grain is device memory mapped at the platform's SVM addresses (virtual
  // memory management); fine grain is the host's pages, page-locked and mapped at their own
  // address (unified addressing). No host-device atomics: the attribute for native host
  // atomics is 0 on PCIe GPUs.
  if (a.has_vmm && attribute(device_, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)) {
    d.svm_capabilities = CL_DEVICE_SVM_COARSE_GRAIN_BUFFER;
    if (maps_host && attribute(device_, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING))
      d.svm_capabilities |= CL_DEVICE_SVM_FINE_GRAIN_BUFFER;
  }

  CUuuid uuid{};
  if (a.cuDeviceGetUuid(&uuid, device_) == CUDA_SUCCESS)
    std::memcpy(d.device_uuid.data(), uuid.bytes, sizeof(uuid.bytes));
  const std::string driver_id = "Manifold CUDA " + std::to_string(a.driver_version);
  const size_t h = std::hash<std::string>{}(driver_id);
  std::memcpy(d.driver_uuid.data(), &h, sizeof(h));
  d.pci_bus_info.pci_domain = attribute(device_, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
  d.pci_bus_info.pci_bus = attribute(device_, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
  d.pci_bus_info.pci_device = attribute(device_, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
  d.pci_bus_info.pci_function = 0;
  d.has_pci_bus_info = true;
  staging_ = std::make_unique<gpu::Staging<CudaStreamApi>>(*this);
  log_debug("cuda: device %d '%s' sm_%d%d, %u SMs, %zu MB, target %s %s", ordinal, name, major,
            minor, d.max_compute_units, total >> 20, target_.cpu.c_str(), target_.features.c_str());
}

CudaDevice::~CudaDevice() {
  // Root devices live for the process; the driver may already be gone at exit: leave it be.
}

std::shared_ptr<NativeQueue> CudaDevice::create_native_queue_impl(bool out_of_order) {
  if (out_of_order) return std::make_shared<gpu::StreamPoolQueue<CudaStreamApi>>(*this, 4);
  return std::make_shared<gpu::StreamQueue<CudaStreamApi>>(*this);
}

// ---- Programs ----

CudaProgram::~CudaProgram() {
  device_.make_current();
  api().cuModuleUnload(module_);
}

CudaProgram::Kernel* CudaProgram::find(const std::string& name) const {
  auto it = kernels_.find(name);
  return it == kernels_.end() ? nullptr : const_cast<Kernel*>(&it->second);
}

void CudaProgram::refine_kernel_info(compiler::KernelInfo& info) const {
  const Kernel* k = find(info.name);
  if (!k) return;
  info.max_work_group_size = static_cast<size_t>(k->max_threads);
  info.local_mem_size = static_cast<uint64_t>(k->static_shared);
  info.private_mem_size = static_cast<uint64_t>(k->local_bytes);
}

std::shared_ptr<const LoadedProgram> CudaDevice::load_program(std::span<const uint8_t> binary,
                                                              std::string* error) {
  std::optional<std::string> ptx = compiler::nvptx_ptx_of(binary, error);
  if (!ptx) return nullptr;
  std::optional<compiler::BinaryInfo> info = compiler::inspect_binary(binary, error);
  if (!info) return nullptr;
  make_current();
  char info_log[8192] = {}, error_log[8192] = {};
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {info_log, reinterpret_cast<void*>(sizeof(info_log) - 1), error_log,
                    reinterpret_cast<void*>(sizeof(error_log) - 1)};
  CUmodule module = nullptr;
  const CUresult r = api().cuModuleLoadDataEx(&module, ptx->c_str(), 4, options, values);
  if (r != CUDA_SUCCESS) {
    if (error)
      *error = "the CUDA driver rejected the PTX: " + error_text(r) + "\n" + error_log + info_log;
    return nullptr;
  }
  auto program = std::make_shared<CudaProgram>(*this, module);
  program->uses_printf_ = ptx->find("vprintf") != std::string::npos;
  for (const compiler::KernelInfo& k : info->kernels) {
    CudaProgram::Kernel kernel;
    if (api().cuModuleGetFunction(&kernel.function, module, k.name.c_str()) != CUDA_SUCCESS) {
      if (error) *error = "the PTX has no entry point '" + k.name + "'";
      return nullptr;
    }
    api().cuFuncGetAttribute(&kernel.max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                             kernel.function);
    api().cuFuncGetAttribute(&kernel.static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                             kernel.function);
    api().cuFuncGetAttribute(&kernel.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                             kernel.function);
    api().cuFuncGetAttribute(&kernel.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, kernel.function);
    program->kernels_.emplace(k.name, kernel);
  }
  size_t size = 0;
  if (api().cuModuleGetGlobal(&program->launch_state, &size, module, "__manifold_launch") !=
      CUDA_SUCCESS)
    program->launch_state = 0;
  return program;
}

// ---- Memory ----

CudaBacking::CudaBacking(CudaDevice& device, CUdeviceptr pointer, Owner owner)
    : DeviceBacking(device.memory_place()), device_(device), pointer_(pointer), owner_(owner) {}

void CudaBacking::read_to_host(void* host, size_t offset, size_t size) {
  device_.make_current();
  CUstream stream = device_.copy_stream();
  device_.copy_to_host(host, pointer_ + offset, size, stream);
  if (CUresult r = api().cuStreamSynchronize(stream); r != CUDA_SUCCESS)
    fail(CL_OUT_OF_RESOURCES, "copy to host memory: " + error_text(r));
}

CudaBacking::~CudaBacking() {
  device_.make_current();
  if (owner_ == Owner::Backing) api().cuMemFree(pointer_);
  if (registered_host_) device_.unpin(registered_host_);
}

void CudaDevice::pin(void* host, size_t size) {
  if (!host || !size) return;
  make_current();
  if (api().cuMemHostRegister(host, size, CU_MEMHOSTREGISTER_PORTABLE) != CUDA_SUCCESS) return;
  std::unique_lock lock(pinned_mutex_);
  pinned_[reinterpret_cast<uintptr_t>(host)] = size;
}

void CudaDevice::unpin(void* host) {
  {
    std::unique_lock lock(pinned_mutex_);
    if (!pinned_.erase(reinterpret_cast<uintptr_t>(host))) return;
  }
  api().cuMemHostUnregister(host);
}

bool CudaDevice::is_pinned(const void* host, size_t size) const {
  const auto p = reinterpret_cast<uintptr_t>(host);
  std::shared_lock lock(pinned_mutex_);
  auto it = pinned_.upper_bound(p);
  if (it == pinned_.begin()) return false;
  --it;
  return p >= it->first && p + size <= it->first + it->second;
}

CUdeviceptr CudaDevice::address(MemObject& mem) {
  // Imported memory: the GPU's mapping of the application's pages, made at the import.
  if (mem.imported()) return mem.imported_address(*this) + mem.root_offset();
  DeviceBacking& b = mem.backing(memory_place(), [&]() -> std::unique_ptr<DeviceBacking> {
    const MemObject& root = mem.root();
    make_current();
    if (root.svm()) {
      // SVM: svm/ mapped this GPU's memory at the allocation's own address. Its host pages are
      // page-locked (at the address drivers copy them from) so that migrations are plain DMAs.
      auto backing = std::make_unique<CudaBacking>(
          *this, reinterpret_cast<uintptr_t>(root.host_data()), CudaBacking::Owner::Svm);
      pin(root.dma_host_data(), root.size());
      if (is_pinned(root.dma_host_data(), root.size()))
        backing->set_registered_host(root.dma_host_data());
      return backing;
    }
    CUdeviceptr pointer = 0;
    if (CUresult r = api().cuMemAlloc(&pointer, std::max<size_t>(root.size(), 1));
        r != CUDA_SUCCESS)
      fail(
          r == CUDA_ERROR_OUT_OF_MEMORY ? CL_MEM_OBJECT_ALLOCATION_FAILURE : CL_OUT_OF_RESOURCES,
          "cannot allocate " + std::to_string(root.size()) + " bytes on the GPU: " + error_text(r));
    auto backing = std::make_unique<CudaBacking>(*this, pointer);
    const cl_mem_flags flags = root.flags();
    // Host memory the application keeps using with this buffer (maps, USE_HOST_PTR) is
    // page-locked once, so every later transfer of it is a plain DMA.
    if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR)) {
      pin(root.host_data(), root.size());
      if (is_pinned(root.host_data(), root.size())) backing->set_registered_host(root.host_data());
    }
    return backing;
  });
  return static_cast<CudaBacking&>(b).pointer() + mem.root_offset();
}

// Pageable host memory goes through the device's staging (backends/gpu_stream/staging.h);
// memory Manifold page-locked, and small copies, go to the driver directly.
void CudaDevice::copy_to_device(CUdeviceptr dst, const void* src, size_t size, CUstream stream) {
  cl_int status;
  if (!staging_->wants(size) || is_pinned(src, size))
    status = CudaStreamApi::copy_to_device_async(dst, src, size, stream);
  else
    status = staging_->to_device(dst, src, size, stream);
  if (status != CL_SUCCESS) fail(status, "copy to the GPU failed");
}

void CudaDevice::copy_to_host(void* dst, CUdeviceptr src, size_t size, CUstream stream) {
  cl_int status;
  if (!staging_->wants(size) || is_pinned(dst, size))
    status = CudaStreamApi::copy_to_host_async(dst, src, size, stream);
  else
    status = staging_->to_host(dst, src, size, stream);
  if (status != CL_SUCCESS) fail(status, "copy from the GPU failed");
}

CUstream CudaDevice::copy_stream() {
  std::call_once(copy_stream_once_, [this] {
    make_current();
    if (CUresult r = api().cuStreamCreate(&copy_stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS)
      fail(CL_OUT_OF_RESOURCES, "cuStreamCreate: " + error_text(r));
  });
  return copy_stream_;
}

void CudaDevice::enable_peer_access(const CudaDevice& peer) {
  std::lock_guard lock(peer_mutex_);
  if (std::find(peers_.begin(), peers_.end(), &peer) != peers_.end()) return;
  peers_.push_back(&peer);  // tried once: without access the driver stages through the host
  int can = 0;
  if (api().cuDeviceCanAccessPeer(&can, device_, peer.device_) != CUDA_SUCCESS || !can) return;
  make_current();
  const CUresult r = api().cuCtxEnablePeerAccess(peer.context_, 0);
  log_debug("cuda: peer access %s -> %s: %s", info().name.c_str(), peer.info().name.c_str(),
            error_text(r).c_str());
}

void CudaDevice::copy_from_peer(CUdeviceptr dst, CudaDevice& peer, CUdeviceptr src, size_t size,
                                CUstream stream) {
  peer.enable_peer_access(*this);
  enable_peer_access(peer);
  make_current();
  if (CUresult r = api().cuMemcpyPeerAsync(dst, context_, src, peer.context(), size, stream);
      r != CUDA_SUCCESS)
    fail(CL_OUT_OF_RESOURCES, "peer copy between GPUs: " + error_text(r));
}

}  // namespace manifold::cuda
