// The memory calls of the backend interface (core/device_memory.h) on every device the platform
// has: the CPU here, the CUDA backend over the simulated driver (ctest entry null_cuda_device_
// memory) or a real GPU. What one-address SVM and cl_arm_import_memory build on.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "core/platform.h"

namespace {

using manifold::Device;
using manifold::Platform;

std::vector<Device*> devices() { return Platform::get().devices(); }

// An address no mapping of this process uses: reserved by the host, then given back.
uint64_t free_range(size_t size, size_t alignment) {
  void* p = mmap(nullptr, size + alignment, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  munmap(p, size + alignment);
  const auto a = reinterpret_cast<uintptr_t>(p);
  return (a + alignment - 1) / alignment * alignment;
}

TEST(DeviceMemory, AllocateGivesDistinctAlignedAddresses) {
  for (Device* d : devices()) {
    SCOPED_TRACE(d->info().name);
    const uint64_t a = d->allocate(1000), b = d->allocate(1);
    EXPECT_NE(a, 0u);
    EXPECT_NE(a, b);
    EXPECT_EQ(a % 128, 0u);  // aligned for the widest OpenCL type, double16
    d->deallocate(a);
    d->deallocate(b);
  }
}

TEST(DeviceMemory, ReserveExactlyThereMapAndUnmap) {
  for (Device* d : devices()) {
    SCOPED_TRACE(d->info().name);
    const size_t g = d->mapping_granularity();
    if (g == 0) continue;  // this device cannot reserve addresses
    const size_t size = 4 * g;
    const uint64_t at = free_range(size, g);
    ASSERT_TRUE(d->reserve_range(at, size));
    // The same range again is not free any more.
    EXPECT_FALSE(d->reserve_range(at, size));
    d->map_range(at, 2 * g);
    d->map_range(at + 2 * g, g);
    d->unmap_range(at, 2 * g);
    d->map_range(at, 2 * g);  // the range stays reserved after an unmap
    d->unmap_range(at, 2 * g);
    d->unmap_range(at + 2 * g, g);
    d->release_range(at, size);
    // Released: the range can be had again.
    EXPECT_TRUE(d->reserve_range(at, size));
    d->release_range(at, size);
  }
}

TEST(DeviceMemory, MappedRangeOfTheCpuHoldsBytes) {
  for (Device* d : devices()) {
    if (!d->shares_host_memory()) continue;  // only the CPU's addresses are the host's
    const size_t g = d->mapping_granularity();
    const uint64_t at = free_range(g, g);
    ASSERT_TRUE(d->reserve_range(at, g));
    d->map_range(at, g);
    auto* bytes = reinterpret_cast<unsigned char*>(static_cast<uintptr_t>(at));
    EXPECT_EQ(bytes[0], 0);  // zero-filled
    std::memset(bytes, 0x5a, g);
    EXPECT_EQ(bytes[g - 1], 0x5a);
    d->unmap_range(at, g);
    d->release_range(at, g);
  }
}

TEST(DeviceMemory, UnmapOfAnythingButAMappingFails) {
  for (Device* d : devices()) {
    SCOPED_TRACE(d->info().name);
    const size_t g = d->mapping_granularity();
    if (g == 0 || d->shares_host_memory()) continue;  // on the CPU unmap is mmap's own affair
    const uint64_t at = free_range(g, g);
    ASSERT_TRUE(d->reserve_range(at, g));
    try {
      d->unmap_range(at, g);
      ADD_FAILURE() << "unmap of a range that has no mapping succeeded";
    } catch (const manifold::Error& e) {
      EXPECT_EQ(e.code(), CL_INVALID_VALUE);
    }
    d->release_range(at, g);
  }
}

TEST(DeviceMemory, ImportHostMemoryInPlace) {
  for (Device* d : devices()) {
    SCOPED_TRACE(d->info().name);
    std::vector<unsigned char> host(1 << 16, 7);
    const uint64_t address = d->import_host(host.data(), host.size());
    EXPECT_NE(address, 0u);
    if (d->shares_host_memory()) {
      EXPECT_EQ(address, reinterpret_cast<uintptr_t>(host.data()));
    }
    d->release_import(host.data());
    // Released: the same range imports again.
    EXPECT_NE(d->import_host(host.data(), host.size()), 0u);
    d->release_import(host.data());
  }
}

TEST(DeviceMemory, ImportOfNothingIsInvalid) {
  for (Device* d : devices()) {
    try {
      d->import_host(nullptr, 16);
      ADD_FAILURE() << d->info().name << ": importing NULL succeeded";
    } catch (const manifold::Error& e) {
      EXPECT_EQ(e.code(), CL_INVALID_VALUE);
    }
  }
}

}  // namespace
