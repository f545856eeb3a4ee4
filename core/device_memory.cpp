#include "core/device_memory.h"

#include <CL/cl.h>

#include "core/error.h"

namespace manifold {

// What a device without the capability answers: the calls fail, the queries say no.
uint64_t DeviceMemory::allocate(size_t) {
  fail(CL_INVALID_OPERATION, "the device does not allocate memory outside buffers");
}
void DeviceMemory::deallocate(uint64_t) {}
bool DeviceMemory::reserve_range(uint64_t, size_t) { return false; }
uint64_t DeviceMemory::reserve_any_range(size_t, size_t) { return 0; }
void DeviceMemory::release_range(uint64_t, size_t) {}
void DeviceMemory::map_range(uint64_t, size_t) {
  fail(CL_INVALID_OPERATION, "the device cannot map memory at a chosen address");
}
void DeviceMemory::unmap_range(uint64_t, size_t) {}
uint64_t DeviceMemory::import_host(void*, size_t) {
  fail(CL_INVALID_OPERATION, "the device cannot use host memory in place");
}
void DeviceMemory::release_import(void*) {}

}  // namespace manifold
