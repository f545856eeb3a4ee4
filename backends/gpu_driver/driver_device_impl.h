// DriverDevice's devices, programs and buffers (driver_device.h), included once per vendor by the
// file that instantiates them.
#pragma once

#include <algorithm>
#include <cstring>

#include "backends/gpu_driver/driver_device.h"
#include "backends/gpu_driver/driver_queue.h"
#include "core/log.h"
#include "core/platform.h"

namespace manifold::gpu {
namespace detail {

template <class V>
int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  V::api().cuDeviceGetAttribute(&value, which, device);
  return value;
}

// What a driver loads for an executable binary of `target`: PTX text, NUL-terminated (NVPTX:
// CUDA, HIP on NVIDIA), or an AMDGPU code object (its bytes in a string: the load call takes a
// pointer).
inline std::optional<std::string> module_image(std::span<const uint8_t> binary,
                                               const compiler::Target& target, std::string* error) {
  if (target.triple.rfind("nvptx", 0) == 0) return compiler::nvptx_ptx_of(binary, error);
  std::optional<std::vector<uint8_t>> object = compiler::amdgpu_code_object_of(binary, error);
  if (!object) return std::nullopt;
  return std::string(object->begin(), object->end());
}

// An image's descriptor in a GPU's memory (DriverDevice::image_descriptor_address).
template <class V>
class ImageDescriptor final : public DeviceObjectState {
 public:
  ImageDescriptor(DriverDevice<V>& device, CUdeviceptr pointer)
      : device_(device), pointer_(pointer) {}
  ~ImageDescriptor() override {
    device_.make_current();
    V::api().cuMemFree(pointer_);
  }
  CUdeviceptr pointer() const { return pointer_; }

 private:
  DriverDevice<V>& device_;
  CUdeviceptr pointer_;
};

}  // namespace detail

template <class V>
DriverDevice<V>::DriverDevice(CUdevice device, int ordinal, DeviceFacts facts)
    : device_(device), target_(std::move(facts.target)) {
  const Api& a = api();
  const auto attribute = [this](CUdevice_attribute which) {
    return detail::attribute<V>(device_, which);
  };
  if (CUresult r = a.cuDevicePrimaryCtxRetain(&context_, device_); r != CUDA_SUCCESS)
    fail(CL_DEVICE_NOT_AVAILABLE, "cuDevicePrimaryCtxRetain: " + V::error_text(r));
  default_shared_ = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  max_shared_optin_ =
      std::max(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), default_shared_);
  for (int d = 0; d < 3; ++d)
    max_grid_[d] = uint64_t(
        std::max(1, attribute(CUdevice_attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + d))));

  DeviceInfo& d = info_;
  d.type = CL_DEVICE_TYPE_GPU;
  d.name = facts.name;
  d.vendor = facts.vendor;
  d.vendor_id = facts.vendor_id;
  d.driver_version = facts.driver_version;
  d.version_suffix = facts.version_suffix;
  d.max_compute_units = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  d.max_work_group_size = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  d.max_work_item_sizes = {size_t(attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)),
                           size_t(attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)),
                           size_t(attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z))};
  d.max_clock_frequency = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;
  size_t total = 0;
  a.cuDeviceTotalMem(&total, device_);
  d.global_mem_size = total;
  // One allocation may take most of the memory (the driver allows it; OpenCL's 1/4 is a floor).
  d.max_mem_alloc_size =
      std::max<cl_ulong>(total / 4, total - std::min<cl_ulong>(total, 1ull << 30));
  d.global_mem_cache_type = CL_READ_WRITE_CACHE;
  d.global_mem_cache_size = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  d.global_mem_cacheline_size = 128;
  d.local_mem_type = CL_LOCAL;
  // A work-group may use up to the opt-in limit: launches raise the kernel's dynamic limit.
  d.local_mem_size = max_shared_optin_;
  // __constant arguments are read from global memory (the NVPTX pipeline retypes them), so a
  // __constant buffer may be as large as any buffer; program-scope __constant data stays in the
  // constant bank (CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 64 KB). At most 4 GiB: kernels
  // written for constant memory index it with int, which a larger buffer of ints overflows (the
  // CTS's own basic/constant kernel does, on a GPU of 141 GB).
  d.max_constant_buffer_size = std::min<cl_ulong>(d.max_mem_alloc_size, cl_ulong{4} << 30);
  d.max_constant_args = 8;
  d.max_parameter_size = 4096;       // CUDA's kernel parameter space (4 KB; more from CUDA 12.1 on)
  d.mem_base_addr_align = 4096 * 8;  // bits: sub-buffers at 4 KB keep every vector load aligned
  d.min_data_type_align_size = 128;
  d.error_correction_support = attribute(CU_DEVICE_ATTRIBUTE_ECC_ENABLED) != 0;
  d.host_unified_memory = attribute(CU_DEVICE_ATTRIBUTE_INTEGRATED) != 0;
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
  // Half (compiler/builtins/half.cl): arithmetic natively from sm_53 on (in float before),
  // functions in float rounded once to nearest even, denormals kept; fma correctly rounded.
  if (target_.fp16)
    d.half_fp_config = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_FMA;
  // Scalar SIMT lanes: no vector preference.
  const cl_uint widths[7] = {1, 1, 1, 1, 1, 1, cl_uint(target_.fp16)};
  std::copy(std::begin(widths), std::end(widths), d.preferred_vector_width);
  std::copy(std::begin(widths), std::end(widths), d.native_vector_width);
  d.preferred_work_group_size_multiple = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  // CUDA grids are uniform: a smaller last work-group goes as a launch of its own, which the
  // NVPTX shim's launch state describes (driver_ops_launch_impl.h launch_split). Not on AMDGPU yet.
  const bool nvptx = target_.triple.rfind("nvptx", 0) == 0;
  d.non_uniform_work_group_support = nvptx;
  d.partial_groups_launch_apart = nvptx;
  fill_from_target(d, target_);
  // Program-scope variables are the module's global memory (PTX .global), made and initialized
  // when the driver loads the module, one per program and device; the spec's minimum size.
  if (target_.has_feature("__opencl_c_program_scope_global_variables")) {
    d.max_global_variable_size = 64 * 1024;
    d.global_variable_preferred_total_size = 1 << 20;
  }
  // Sub-groups are warps (where the target has them): scheduled independently of each other.
  d.sub_group_independent_forward_progress = d.max_num_sub_groups != 0;
  d.printf_buffer_size = 1 << 20;  // CUDA's default printf FIFO
  // Command-buffer graphs lost printf output in the CTS (command_buffer printf on the H100):
  // until that is understood, printf kernels are not recorded on driver (CUDA, HIP) devices.
  d.command_buffer_printf = false;
  d.extensions.push_back(name_version("cl_khr_pci_bus_info", CL_MAKE_VERSION(1, 0, 0)));
  // Host memory imports (clImportMemoryARM): page-locked and mapped into the GPU's address space.
  const bool maps_host =
      a.cuMemHostGetDevicePointer && attribute(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
  if (maps_host) {
    d.extensions.push_back(name_version("cl_arm_import_memory", CL_MAKE_VERSION(1, 0, 0)));
    d.extensions.push_back(name_version("cl_arm_import_memory_host", CL_MAKE_VERSION(1, 0, 0)));
  }
  // SVM (svm/): coarse grain is device memory mapped at the platform's SVM addresses (virtual
  // memory management); fine grain is the host's pages, page-locked and mapped at their own
  // address (unified addressing). No host-device atomics: the attribute for native host
  // atomics is 0 on PCIe GPUs.
  if (a.has_vmm && attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)) {
    d.svm_capabilities = CL_DEVICE_SVM_COARSE_GRAIN_BUFFER;
    if (maps_host && attribute(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING))
      d.svm_capabilities |= CL_DEVICE_SVM_FINE_GRAIN_BUFFER;
  }

  CUuuid uuid{};
  if (a.cuDeviceGetUuid(&uuid, device_) == CUDA_SUCCESS)
    std::memcpy(d.device_uuid.data(), uuid.bytes, sizeof(uuid.bytes));
  const std::string driver_id =
      std::string("Manifold ") + V::kDisplay + " " + std::to_string(a.driver_version);
  const size_t h = std::hash<std::string>{}(driver_id);
  std::memcpy(d.driver_uuid.data(), &h, sizeof(h));
  d.pci_bus_info.pci_domain = attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
  d.pci_bus_info.pci_bus = attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
  d.pci_bus_info.pci_device = attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
  d.pci_bus_info.pci_function = 0;
  d.has_pci_bus_info = true;
  staging_ = std::make_unique<gpu::Staging<DriverStreamApi<V>>>(*this);
  // clCreateSubDevices by green contexts or CU masks, where the driver has them
  // (driver_partition_impl.h).
  set_partition_limits();
  log_debug("%s: device %d '%s' %s, %u compute units, %zu MB, target %s %s %s", V::kName, ordinal,
            d.name.c_str(), facts.arch.c_str(), d.max_compute_units, total >> 20,
            target_.triple.c_str(), target_.cpu.c_str(), target_.features.c_str());
}

template <class V>
DriverDevice<V>::~DriverDevice() {
  // Root devices live for the process; the driver may already be gone at exit: leave it be.
  // A sub-device goes when the application releases it: its streams first (the driver does not
  // destroy a green context's streams with it), then its green context where it has one.
  if (root_ == this) return;
  if (copy_stream_) api().cuStreamDestroy(copy_stream_);
  if (green_) api().cuGreenCtxDestroy(green_);
}

template <class V>
std::shared_ptr<NativeQueue> DriverDevice<V>::create_native_queue_impl(bool out_of_order) {
  if (out_of_order) return std::make_shared<gpu::StreamPoolQueue<DriverStreamApi<V>>>(*this, 4);
  return std::make_shared<gpu::StreamQueue<DriverStreamApi<V>>>(*this);
}

// ---- Programs ----

template <class V>
DriverProgram<V>::~DriverProgram() {
  device_.make_current();
  api().cuModuleUnload(module_);
}

template <class V>
typename DriverProgram<V>::Kernel* DriverProgram<V>::find(const std::string& name) const {
  auto it = kernels_.find(name);
  return it == kernels_.end() ? nullptr : const_cast<Kernel*>(&it->second);
}

template <class V>
void DriverProgram<V>::refine_kernel_info(compiler::KernelInfo& info) const {
  const Kernel* k = find(info.name);
  if (!k) return;
  info.max_work_group_size = static_cast<size_t>(k->max_threads);
  info.local_mem_size = static_cast<uint64_t>(k->static_shared);
  info.private_mem_size = static_cast<uint64_t>(k->local_bytes);
}

template <class V>
std::shared_ptr<const LoadedProgram> DriverDevice<V>::load_program(std::span<const uint8_t> binary,
                                                                   std::string* error) {
  std::optional<std::string> image = detail::module_image(binary, target_, error);
  if (!image) return nullptr;
  std::optional<compiler::BinaryInfo> info = compiler::inspect_binary(binary, error);
  if (!info) return nullptr;
  make_current();
  char info_log[8192] = {}, error_log[8192] = {};
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {info_log, reinterpret_cast<void*>(sizeof(info_log) - 1), error_log,
                    reinterpret_cast<void*>(sizeof(error_log) - 1)};
  CUmodule module = nullptr;
  const CUresult r = api().cuModuleLoadDataEx(&module, image->c_str(), 4, options, values);
  if (r != CUDA_SUCCESS) {
    if (error)
      *error = std::string("the ") + V::kDisplay + " driver rejected the " + target_.triple +
               " module: " + V::error_text(r) + "\n" + error_log + info_log;
    return nullptr;
  }
  // The driver loads a module for the whole GPU, whichever of its green contexts is current:
  // the root device owns it (and outlives the sub-devices).
  auto program = std::make_shared<DriverProgram<V>>(root(), module);
  // NVPTX printf is CUDA's vprintf (compiler/nvptx_pipeline.cpp).
  program->uses_printf_ = image->find("vprintf") != std::string::npos;
  for (const compiler::KernelInfo& k : info->kernels) {
    typename DriverProgram<V>::Kernel kernel;
    kernel.dynamic_shared_limit = default_shared_;
    if (api().cuModuleGetFunction(&kernel.function, module, k.name.c_str()) != CUDA_SUCCESS) {
      if (error) *error = "the module has no entry point '" + k.name + "'";
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
  if (api().cuModuleGetGlobal(&program->launch_state, &program->launch_state_size, module,
                              compiler::kLaunchStateSymbol) != CUDA_SUCCESS)
    program->launch_state = 0;
  return program;
}

// ---- Memory ----

template <class V>
DriverBacking<V>::DriverBacking(DriverDevice<V>& device, CUdeviceptr pointer, Owner owner)
    : DeviceBacking(device.memory_place()), device_(device), pointer_(pointer), owner_(owner) {}

template <class V>
void DriverBacking<V>::read_to_host(void* host, size_t offset, size_t size) {
  device_.make_current();
  CUstream stream = device_.copy_stream();
  device_.copy_to_host(host, pointer_ + offset, size, stream);
  if (CUresult r = api().cuStreamSynchronize(stream); r != CUDA_SUCCESS)
    fail(CL_OUT_OF_RESOURCES, "copy to host memory: " + V::error_text(r));
}

template <class V>
DriverBacking<V>::~DriverBacking() {
  device_.make_current();
  if (owner_ == Owner::Backing) api().cuMemFree(pointer_);
  if (registered_host_) device_.unpin(registered_host_);
}

template <class V>
void DriverDevice<V>::pin(void* host, size_t size) {
  if (root_ != this) return root_->pin(host, size);
  if (!host || !size) return;
  make_current();
  if (api().cuMemHostRegister(host, size, CU_MEMHOSTREGISTER_PORTABLE) != CUDA_SUCCESS) return;
  std::unique_lock lock(pinned_mutex_);
  pinned_[reinterpret_cast<uintptr_t>(host)] = size;
}

template <class V>
void DriverDevice<V>::unpin(void* host) {
  if (root_ != this) return root_->unpin(host);
  {
    std::unique_lock lock(pinned_mutex_);
    if (!pinned_.erase(reinterpret_cast<uintptr_t>(host))) return;
  }
  api().cuMemHostUnregister(host);
}

template <class V>
bool DriverDevice<V>::is_pinned(const void* host, size_t size) const {
  if (root_ != this) return root_->is_pinned(host, size);
  const auto p = reinterpret_cast<uintptr_t>(host);
  std::shared_lock lock(pinned_mutex_);
  auto it = pinned_.upper_bound(p);
  if (it == pinned_.begin()) return false;
  --it;
  return p >= it->first && p + size <= it->first + it->second;
}

template <class V>
CUdeviceptr DriverDevice<V>::address(MemObject& mem) {
  // A sub-device's memory is its GPU's: the root device makes and owns every backing.
  if (root_ != this) return root_->address(mem);
  // Imported memory: the GPU's mapping of the application's pages, made at the import.
  if (mem.imported()) return mem.imported_address(*this) + mem.root_offset();
  DeviceBacking& b = mem.backing(memory_place(), [&]() -> std::unique_ptr<DeviceBacking> {
    const MemObject& root = mem.root();
    make_current();
    if (root.svm()) {
      // SVM: svm/ mapped this GPU's memory at the allocation's own address. Its host pages are
      // page-locked (at the address drivers copy them from) so that migrations are plain DMAs.
      auto backing = std::make_unique<DriverBacking<V>>(
          *this, reinterpret_cast<uintptr_t>(root.host_data()), DriverBacking<V>::Owner::Svm);
      pin(root.dma_host_data(), root.size());
      if (is_pinned(root.dma_host_data(), root.size()))
        backing->set_registered_host(root.dma_host_data());
      return backing;
    }
    CUdeviceptr pointer = 0;
    if (CUresult r = api().cuMemAlloc(&pointer, std::max<size_t>(root.size(), 1));
        r != CUDA_SUCCESS)
      fail(r == CUDA_ERROR_OUT_OF_MEMORY ? CL_MEM_OBJECT_ALLOCATION_FAILURE : CL_OUT_OF_RESOURCES,
           "cannot allocate " + std::to_string(root.size()) +
               " bytes on the GPU: " + V::error_text(r));
    auto backing = std::make_unique<DriverBacking<V>>(*this, pointer);
    const cl_mem_flags flags = root.flags();
    // Host memory the application keeps using with this buffer (maps, USE_HOST_PTR) is
    // page-locked once, so every later transfer of it is a plain DMA.
    if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR)) {
      pin(root.host_data(), root.size());
      if (is_pinned(root.host_data(), root.size())) backing->set_registered_host(root.host_data());
    }
    return backing;
  });
  return static_cast<DriverBacking<V>&>(b).pointer() + mem.root_offset();
}

template <class V>
CUdeviceptr DriverDevice<V>::image_descriptor_address(MemObject& image) {
  if (root_ != this) return root_->image_descriptor_address(image);
  DeviceObjectState& state = image.device_state(this, [&] {
    const ManifoldImage descriptor = image_descriptor(*image.image(), address(image));
    make_current();
    CUdeviceptr pointer = 0;
    if (CUresult r = api().cuMemAlloc(&pointer, sizeof descriptor); r != CUDA_SUCCESS)
      fail(r == CUDA_ERROR_OUT_OF_MEMORY ? CL_MEM_OBJECT_ALLOCATION_FAILURE : CL_OUT_OF_RESOURCES,
           "cannot allocate an image descriptor on the GPU: " + V::error_text(r));
    auto made = std::make_unique<detail::ImageDescriptor<V>>(*this, pointer);
    // In place before any launch that reads it is enqueued (a stream of its own: no wait for
    // the work of the application's queues).
    CUstream stream = copy_stream();
    copy_to_device(pointer, &descriptor, sizeof descriptor, stream);
    if (CUresult r = api().cuStreamSynchronize(stream); r != CUDA_SUCCESS)
      fail(CL_OUT_OF_RESOURCES, "copy of an image descriptor to the GPU: " + V::error_text(r));
    return made;
  });
  return static_cast<detail::ImageDescriptor<V>&>(state).pointer();
}

// Pageable host memory goes through the device's staging (backends/gpu_stream/staging.h);
// memory Manifold page-locked, and small copies, go to the driver directly.
template <class V>
void DriverDevice<V>::copy_to_device(CUdeviceptr dst, const void* src, size_t size,
                                     CUstream stream) {
  if (root_ != this) return root_->copy_to_device(dst, src, size, stream);
  cl_int status;
  if (!staging_->wants(size) || is_pinned(src, size))
    status = DriverStreamApi<V>::copy_to_device_async(dst, src, size, stream);
  else
    status = staging_->to_device(dst, src, size, stream);
  if (status != CL_SUCCESS) fail(status, copy_failure("copy to the GPU failed", stream));
}

template <class V>
void DriverDevice<V>::copy_to_host(void* dst, CUdeviceptr src, size_t size, CUstream stream) {
  if (root_ != this) return root_->copy_to_host(dst, src, size, stream);
  cl_int status;
  if (!staging_->wants(size) || is_pinned(dst, size))
    status = DriverStreamApi<V>::copy_to_host_async(dst, src, size, stream);
  else
    status = staging_->to_host(dst, src, size, stream);
  if (status != CL_SUCCESS) fail(status, copy_failure("copy from the GPU failed", stream));
}

// A copy's status is a cl_int. A copy usually fails for an earlier fault of the context (a
// kernel's illegal address), which the stream reports with its cause.
template <class V>
std::string DriverDevice<V>::copy_failure(const char* what, CUstream stream) {
  const CUresult r = api().cuStreamSynchronize(stream);
  return r == CUDA_SUCCESS ? std::string(what) : std::string(what) + ": " + V::error_text(r);
}

template <class V>
CUstream DriverDevice<V>::copy_stream() {
  std::call_once(copy_stream_once_, [this] {
    make_current();
    copy_stream_ = create_stream();
  });
  return copy_stream_;
}

template <class V>
CUstream DriverDevice<V>::create_stream() {
  CUstream s = nullptr;
  // Non-blocking: never implicitly ordered after the legacy default stream (and the only kind
  // a green context makes). A CU-mask stream is made in the current context (the GPU's) with
  // HIP's default flags: Manifold puts no work on the legacy default stream.
  CUresult r;
  const char* call;
  if (green_) {
    r = api().cuGreenCtxStreamCreate(&s, green_, CU_STREAM_NON_BLOCKING, 0);
    call = "cuGreenCtxStreamCreate: ";
  } else if (!cu_mask_.empty()) {
    ensure_current();
    r = api().hipExtStreamCreateWithCUMask(&s, uint32_t(cu_mask_.size()), cu_mask_.data());
    call = "hipExtStreamCreateWithCUMask: ";
  } else {
    r = api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    call = "cuStreamCreate: ";
  }
  if (r != CUDA_SUCCESS) fail(CL_OUT_OF_RESOURCES, call + V::error_text(r));
  return s;
}

template <class V>
void DriverDevice<V>::enable_peer_access(const DriverDevice<V>& peer) {
  // Peer access is the GPUs' (their primary contexts'), whichever sub-devices ask.
  if (root_ != this || peer.root_ != &peer) return root_->enable_peer_access(peer.root());
  std::lock_guard lock(peer_mutex_);
  if (std::find(peers_.begin(), peers_.end(), &peer) != peers_.end()) return;
  peers_.push_back(&peer);  // tried once: without access the driver stages through the host
  int can = 0;
  if (api().cuDeviceCanAccessPeer(&can, device_, peer.device_) != CUDA_SUCCESS || !can) return;
  make_current();
  const CUresult r = api().cuCtxEnablePeerAccess(peer.context_, 0);
  log_debug("%s: peer access %s -> %s: %s", V::kName, info().name.c_str(), peer.info().name.c_str(),
            V::error_text(r).c_str());
}

template <class V>
void DriverDevice<V>::copy_from_peer(CUdeviceptr dst, DriverDevice<V>& peer, CUdeviceptr src,
                                     size_t size, CUstream stream) {
  peer.enable_peer_access(*this);
  enable_peer_access(peer);
  make_current();
  if (CUresult r =
          api().cuMemcpyPeerAsync(dst, root().context_, src, peer.root().context_, size, stream);
      r != CUDA_SUCCESS)
    fail(CL_OUT_OF_RESOURCES, "peer copy between GPUs: " + V::error_text(r));
}

}  // namespace manifold::gpu

#include "backends/gpu_driver/driver_partition_impl.h"
