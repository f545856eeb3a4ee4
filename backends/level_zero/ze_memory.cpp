// Memory on a Level Zero device: buffers and DeviceMemory allocations in device memory
// (zeMemAllocDevice), freed with zeMemFree; imported host memory (the driver's HostImports);
// copies the calling thread waits for.
#include <algorithm>

#include "backends/level_zero/ze_device.h"
#include "backends/level_zero/ze_host_imports.h"
#include "backends/level_zero/ze_queue.h"
#include "core/error.h"
#include "core/memory.h"

namespace manifold::level_zero {

namespace {
// OpenCL's CL_DEVICE_MEM_BASE_ADDR_ALIGN (1024 bits) and the widest type's alignment.
constexpr size_t kAllocationAlignment = 128;
}  // namespace

void check_ze(ze_result_t result, cl_int code, const char* call) {
  if (result == ZE_RESULT_SUCCESS) return;
  if (result == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY) code = CL_MEM_OBJECT_ALLOCATION_FAILURE;
  if (result == ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY) code = CL_OUT_OF_HOST_MEMORY;
  fail(code, std::string(call) + ": " + result_text(result));
}

uint64_t LevelZeroDevice::allocate(size_t size) {
  ze_device_mem_alloc_desc_t desc;
  void* pointer = nullptr;
  check_ze(api_.zeMemAllocDevice(context_, &desc, std::max<size_t>(size, 1), kAllocationAlignment,
                                 device_, &pointer),
           CL_MEM_OBJECT_ALLOCATION_FAILURE, "zeMemAllocDevice");
  return reinterpret_cast<uintptr_t>(pointer);
}

void LevelZeroDevice::deallocate(uint64_t address) {
  if (address) api_.zeMemFree(context_, reinterpret_cast<void*>(uintptr_t(address)));
}

uint64_t LevelZeroDevice::import_host(void* host, size_t size) {
  check(host_imports_ != nullptr, CL_INVALID_OPERATION,
        "the Level Zero driver cannot import host memory (no zexDriverImportExternalPointer)");
  host_imports_->import(host, size);
  return reinterpret_cast<uintptr_t>(host);
}

void LevelZeroDevice::release_import(void* host) {
  if (host_imports_) host_imports_->release(host);
}

void* LevelZeroDevice::address(MemObject& mem) {
  if (mem.imported())
    return reinterpret_cast<void*>(mem.imported_address(*this) + mem.root_offset());
  DeviceBacking& b = mem.backing(memory_place(), [&]() -> std::unique_ptr<DeviceBacking> {
    const MemObject& root = mem.root();
    check(!root.svm(), CL_INVALID_OPERATION, "Level Zero devices do not support SVM yet");
    // The root allocates for its tiles too (they share its memory place): its allocation is
    // usable by each tile in the shared context, and the root outlives the backing.
    LevelZeroDevice& owner = root_device();
    void* pointer = reinterpret_cast<void*>(uintptr_t(owner.allocate(root.size())));
    return std::make_unique<ZeBacking>(owner, pointer);
  });
  return static_cast<std::byte*>(static_cast<ZeBacking&>(b).pointer()) + mem.root_offset();
}

void LevelZeroDevice::copy_and_wait(void* dst, const void* src, size_t size) {
  std::lock_guard lock(copy_mutex_);
  if (!copy_stream_) copy_stream_ = std::make_unique<CommandStream>(*this, *events_);
  copy_stream_->begin({}, false);
  copy_stream_->copy(dst, src, size);
  copy_stream_->drain();
  copy_stream_->end();
}

ZeBacking::ZeBacking(LevelZeroDevice& device, void* pointer)
    : DeviceBacking(device.memory_place()), device_(device), pointer_(pointer) {}

ZeBacking::~ZeBacking() { device_.deallocate(reinterpret_cast<uintptr_t>(pointer_)); }

void ZeBacking::read_to_host(void* host, size_t offset, size_t size) {
  device_.copy_and_wait(host, static_cast<std::byte*>(pointer_) + offset, size);
}

}  // namespace manifold::level_zero
