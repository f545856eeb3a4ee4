// DeviceMemory on the CPU device: device addresses are host addresses, so reserving and mapping
// are the host's own mmap calls, and imported host memory is used where it is.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/cpu/cpu_device.h"
#include "core/error.h"

namespace manifold::cpu {
namespace {

void* pointer(uint64_t address) { return reinterpret_cast<void*>(static_cast<uintptr_t>(address)); }

void check_mmap(void* result, const char* what) {
  if (result == MAP_FAILED)
    fail(CL_OUT_OF_RESOURCES, std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

uint64_t CpuDevice::allocate(size_t size) {
  // Aligned as buffers are (CL_DEVICE_MEM_BASE_ADDR_ALIGN is in bits).
  const size_t align = info_.mem_base_addr_align / 8;
  void* p = std::aligned_alloc(align, (std::max<size_t>(size, 1) + align - 1) / align * align);
  if (!p)
    fail(CL_MEM_OBJECT_ALLOCATION_FAILURE, "cannot allocate " + std::to_string(size) + " bytes");
  return reinterpret_cast<uintptr_t>(p);
}

void CpuDevice::deallocate(uint64_t address) { std::free(pointer(address)); }

size_t CpuDevice::mapping_granularity() const { return size_t(sysconf(_SC_PAGESIZE)); }

bool CpuDevice::reserve_range(uint64_t address, size_t size) {
  // Inaccessible and uncommitted until map_range(); never over an existing mapping.
  void* p = mmap(pointer(address), size, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) return false;
  if (p != pointer(address)) {  // a kernel without MAP_FIXED_NOREPLACE took it as a hint
    munmap(p, size);
    return false;
  }
  return true;
}

uint64_t CpuDevice::reserve_any_range(size_t size, size_t alignment) {
  // Over-reserve, then trim to the aligned part.
  const size_t extra = alignment > size_t(sysconf(_SC_PAGESIZE)) ? alignment : 0;
  void* p =
      mmap(nullptr, size + extra, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return 0;
  const auto start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = extra ? (start + alignment - 1) / alignment * alignment : start;
  if (aligned > start) munmap(p, aligned - start);
  if (extra && start + extra > aligned) munmap(pointer(aligned + size), start + extra - aligned);
  return aligned;
}

void CpuDevice::release_range(uint64_t address, size_t size) { munmap(pointer(address), size); }

void CpuDevice::map_range(uint64_t address, size_t size) {
  // Replaces the reserved pages with zero-filled readable and writable ones.
  check_mmap(mmap(pointer(address), size, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
             "mapping memory into a reserved range");
}

void CpuDevice::unmap_range(uint64_t address, size_t size) {
  // Back to reserved: the pages' memory is returned, the range stays this device's.
  check_mmap(mmap(pointer(address), size, PROT_NONE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0),
             "unmapping memory from a reserved range");
}

uint64_t CpuDevice::import_host(void* host, size_t size) {
  check(host != nullptr && size != 0, CL_INVALID_VALUE, "no host memory to import");
  return reinterpret_cast<uintptr_t>(host);  // the kernels run on this very memory
}

}  // namespace manifold::cpu
