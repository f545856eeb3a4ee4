// DeviceMemory on a driver GPU (driver_device.h): plain allocations (cuMemAlloc), address ranges
// reserved and backed through the driver's virtual memory management (cuMemAddressReserve,
// cuMemCreate, cuMemMap, cuMemSetAccess), and host memory page-locked and mapped into the GPU's
// address space (cuMemHostRegister with DEVICEMAP, cuMemHostGetDevicePointer). Included once per
// vendor by the file that instantiates DriverDevice.
#pragma once

#include <string>

#include "backends/gpu_driver/driver_device.h"
#include "core/error.h"

namespace manifold::gpu {
namespace detail {

template <class V>
void check_driver(CUresult r, cl_int code, const char* what) {
  if (r != CUDA_SUCCESS) fail(code, std::string(what) + ": " + V::error_text(r));
}

inline CUmemAllocationProp pinned_on(CUdevice device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, device};
  return prop;
}

}  // namespace detail

template <class V>
uint64_t DriverDevice<V>::allocate(size_t size) {
  if (root_ != this) return root_->allocate(size);  // the GPU's memory
  make_current();
  CUdeviceptr p = 0;
  const CUresult r = api().cuMemAlloc(&p, std::max<size_t>(size, 1));
  detail::check_driver<V>(
      r, r == CUDA_ERROR_OUT_OF_MEMORY ? CL_MEM_OBJECT_ALLOCATION_FAILURE : CL_OUT_OF_RESOURCES,
      "cuMemAlloc");
  return p;
}

template <class V>
void DriverDevice<V>::deallocate(uint64_t address) {
  if (root_ != this) return root_->deallocate(address);  // the GPU's memory
  make_current();
  api().cuMemFree(address);
}

template <class V>
size_t DriverDevice<V>::mapping_granularity() const {
  if (root_ != this) return root_->mapping_granularity();  // the GPU's memory
  if (!api().has_vmm) return 0;
  const CUmemAllocationProp prop = detail::pinned_on(device_);
  size_t granularity = 0;
  if (api().cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
      CUDA_SUCCESS)
    return 0;
  return granularity;
}

template <class V>
bool DriverDevice<V>::reserve_range(uint64_t address, size_t size) {
  if (root_ != this) return root_->reserve_range(address, size);  // the GPU's memory
  if (!api().has_vmm) return false;
  make_current();
  CUdeviceptr got = 0;
  if (api().cuMemAddressReserve(&got, size, 0, address, 0) != CUDA_SUCCESS) return false;
  if (got == address) return true;
  api().cuMemAddressFree(got, size);  // the address was only a hint to the driver: taken
  return false;
}

template <class V>
uint64_t DriverDevice<V>::reserve_any_range(size_t size, size_t alignment) {
  if (root_ != this) return root_->reserve_any_range(size, alignment);  // the GPU's memory
  if (!api().has_vmm) return 0;
  make_current();
  CUdeviceptr got = 0;
  return api().cuMemAddressReserve(&got, size, alignment, 0, 0) == CUDA_SUCCESS ? got : 0;
}

template <class V>
void DriverDevice<V>::release_range(uint64_t address, size_t size) {
  if (root_ != this) return root_->release_range(address, size);  // the GPU's memory
  if (!api().has_vmm) return;
  make_current();
  api().cuMemAddressFree(address, size);
}

template <class V>
void DriverDevice<V>::map_range(uint64_t address, size_t size) {
  if (root_ != this) return root_->map_range(address, size);  // the GPU's memory
  if (!api().has_vmm)
    fail(CL_INVALID_OPERATION,
         std::string("the ") + V::kDisplay + " driver has no virtual memory management");
  const Api& a = api();
  make_current();
  const CUmemAllocationProp prop = detail::pinned_on(device_);
  CUmemGenericAllocationHandle handle = 0;
  CUresult r = a.cuMemCreate(&handle, size, &prop, 0);
  detail::check_driver<V>(
      r, r == CUDA_ERROR_OUT_OF_MEMORY ? CL_MEM_OBJECT_ALLOCATION_FAILURE : CL_OUT_OF_RESOURCES,
      "cuMemCreate");
  if ((r = a.cuMemMap(address, size, 0, handle, 0)) == CUDA_SUCCESS) {
    const CUmemAccessDesc access{{CU_MEM_LOCATION_TYPE_DEVICE, device_},
                                 CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    r = a.cuMemSetAccess(address, size, &access, 1);
    if (r != CUDA_SUCCESS) a.cuMemUnmap(address, size);
  }
  if (r != CUDA_SUCCESS) {
    a.cuMemRelease(handle);
    detail::check_driver<V>(r, CL_OUT_OF_RESOURCES, "mapping GPU memory into a reserved range");
  }
  std::lock_guard lock(mapped_mutex_);
  mapped_[address] = {handle, size};
}

template <class V>
void DriverDevice<V>::unmap_range(uint64_t address, size_t size) {
  if (root_ != this) return root_->unmap_range(address, size);  // the GPU's memory
  CUmemGenericAllocationHandle handle;
  {
    std::lock_guard lock(mapped_mutex_);
    auto it = mapped_.find(address);
    check(it != mapped_.end() && it->second.second == size, CL_INVALID_VALUE,
          "no mapping of that size at that address");
    handle = it->second.first;
    mapped_.erase(it);
  }
  make_current();
  api().cuMemUnmap(address, size);
  api().cuMemRelease(handle);  // the memory goes once no mapping uses it
}

template <class V>
uint64_t DriverDevice<V>::import_host(void* host, size_t size) {
  if (root_ != this) return root_->import_host(host, size);  // the GPU's memory
  check(host != nullptr && size != 0, CL_INVALID_VALUE, "no host memory to import");
  if (!api().cuMemHostGetDevicePointer)
    fail(CL_INVALID_OPERATION,
         std::string("the ") + V::kDisplay + " driver cannot map host memory");
  make_current();
  // Page-locked and mapped into every context's address space (PORTABLE | DEVICEMAP).
  detail::check_driver<V>(
      api().cuMemHostRegister(host, size,
                              CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP),
      CL_OUT_OF_RESOURCES, "cuMemHostRegister");
  CUdeviceptr address = 0;
  if (CUresult r = api().cuMemHostGetDevicePointer(&address, host, 0); r != CUDA_SUCCESS) {
    api().cuMemHostUnregister(host);
    detail::check_driver<V>(r, CL_OUT_OF_RESOURCES, "cuMemHostGetDevicePointer");
  }
  return address;
}

template <class V>
void DriverDevice<V>::release_import(void* host) {
  if (root_ != this) return root_->release_import(host);  // the GPU's memory
  make_current();
  api().cuMemHostUnregister(host);
}

}  // namespace manifold::gpu
