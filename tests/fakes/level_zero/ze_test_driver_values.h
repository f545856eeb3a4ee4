// What the Level Zero test driver (ze_test_driver.cpp) reports, shared with the tests that
// check the backend reports the same.
#pragma once

#include <cstdint>

// The number of tiles (sub-devices) of the simulated GPU: 2, or what the build of the driver
// sets (ze_test_driver_one_tile: 1, a tile count that allows no partition).
#ifndef ZE_TEST_DRIVER_TILES
#define ZE_TEST_DRIVER_TILES 2
#endif

namespace ze_test {

inline constexpr const char* kName = "Manifold Level Zero test device";
inline constexpr const char* kTileName = "Manifold Level Zero test device (tile)";
inline constexpr uint32_t kVendorId = 0x8086;
inline constexpr uint32_t kDeviceId = 0x0bd5;
inline constexpr uint32_t kDriverVersion = 0x01020304;
inline constexpr uint32_t kClockMhz = 1550;
inline constexpr uint32_t kSubDevices = ZE_TEST_DRIVER_TILES;
inline constexpr uint32_t kSlices = 2;
static_assert(kSubDevices >= 1 && kSlices % kSubDevices == 0, "each tile has whole slices");
inline constexpr uint32_t kSubslicesPerSlice = 4;
inline constexpr uint32_t kEusPerSubslice = 8;
inline constexpr uint32_t kThreadsPerEu = 8;
inline constexpr uint64_t kMemory = 4ull << 30;
inline constexpr uint64_t kMaxAlloc = 1ull << 30;  // the spec's minimum: a quarter of kMemory
inline constexpr uint64_t kCacheSize = 4ull << 20;
inline constexpr uint32_t kMaxGroupSize = 1024;
inline constexpr uint32_t kSharedLocalMemory = 64 * 1024;
inline constexpr uint32_t kMaxArgumentsSize = 2048;
inline constexpr uint32_t kPrintfBufferSize = 4 << 20;
inline constexpr uint64_t kTimerTicksPerSecond = 1000000000;
// Kernel timestamps keep the low bits of the device clock only (real devices: 32 or so).
inline constexpr uint32_t kKernelTimestampBits = 32;
inline constexpr uint32_t kPciBus = 0x3a;

}  // namespace ze_test
