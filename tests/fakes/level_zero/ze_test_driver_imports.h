// Host memory imported into the Level Zero test driver (Intel's zexDriverImportExternalPointer and
// zexDriverReleaseImportedPointer, reached through zeDriverGetExtensionFunctionAddress), and what
// a test can ask about it: call zeTestImportStats (exported by the driver library; find it with
// dlopen of ZE_ENABLE_ALT_DRIVERS and RTLD_NOLOAD).
#pragma once

#include <cstddef>

namespace ze_test {

struct ImportStats {
  size_t ranges;          // imported now
  size_t nested_imports;  // imports inside a range already imported (accepted, as Intel's driver)
  size_t refused;         // imports and releases refused (overlaps, never imported)
};

using GetImportStats = ImportStats (*)();
inline constexpr const char* kImportStatsSymbol = "zeTestImportStats";

}  // namespace ze_test
