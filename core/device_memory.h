// Memory a device manages outside buffers, in the device's own terms: what one-address SVM
// needs (a virtual range reserved at one address, device memory mapped into it) and what
// cl_arm_import_memory needs (application host memory the device uses in place). Every device
// inherits this; a backend overrides what its hardware can do. Device addresses are integers:
// on the CPU they are host pointers, on a GPU the GPU's virtual addresses.
// Thread: any; calls on different ranges may overlap.
#pragma once

#include <cstddef>
#include <cstdint>

namespace manifold {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;

  // `size` bytes of device memory at an address the device chooses. Throws
  // CL_MEM_OBJECT_ALLOCATION_FAILURE when there is no room.
  virtual uint64_t allocate(size_t size);
  virtual void deallocate(uint64_t address);

  // The unit of reserve_range() and map_range() (sizes and addresses are multiples of it); 0: the
  // device cannot reserve addresses.
  virtual size_t mapping_granularity() const { return 0; }
  // Reserves [address, address + size) of the device's virtual address space, exactly there;
  // false when that range is not free on this device.
  virtual bool reserve_range(uint64_t address, size_t size);
  // Reserves `size` bytes where the device chooses, aligned to `alignment`; 0 when it cannot.
  virtual uint64_t reserve_any_range(size_t size, size_t alignment);
  // Whether the device's addresses are the host's (the CPU, emulated GPUs): host memory is used
  // at its own address, and an address range the host maps is already the device's.
  virtual bool addresses_are_host_addresses() const { return false; }
  virtual void release_range(uint64_t address, size_t size);
  // Backs [address, address + size), inside a reserved range, with new device memory the device
  // reads and writes (zero-filled where the vendor says so); unmap_range() gives it back.
  virtual void map_range(uint64_t address, size_t size);
  virtual void unmap_range(uint64_t address, size_t size);

  // Makes application host memory [host, host + size) usable by the device in place (no copy);
  // returns the address the device's kernels use for it. Throws CL_INVALID_OPERATION where
  // the device cannot (or CL_OUT_OF_RESOURCES where the driver refuses the range).
  virtual uint64_t import_host(void* host, size_t size);
  virtual void release_import(void* host);
};

}  // namespace manifold
