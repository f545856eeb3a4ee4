// The test driver's imported host ranges, with the rules of Intel's driver (HostPointerManager):
// an import inside a range already imported succeeds and adds nothing; one that overlaps part of
// an imported range is refused; a release takes any pointer inside a range and releases all of
// it; releasing what was never imported is an error. Commands check their host memory against
// these ranges and the driver's allocations (ze_test_driver_commands.cpp).
#include "ze_test_driver_imports.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>

#include "ze_test_driver_commands.h"

namespace ze_test {
namespace {

// Never destroyed: command lists may still check ranges while the process exits.
std::mutex& g_mutex = *new std::mutex;
std::map<uintptr_t, size_t>& g_ranges = *new std::map<uintptr_t, size_t>;  // first -> size
ImportStats g_stats{};

// The range that holds `address`, or end().
std::map<uintptr_t, size_t>::iterator containing(uintptr_t address) {
  auto after = g_ranges.upper_bound(address);
  if (after == g_ranges.begin()) return g_ranges.end();
  auto range = std::prev(after);
  return address - range->first < range->second ? range : g_ranges.end();
}

}  // namespace

ze_result_t import_host_range(void* ptr, size_t size) {
  if (!ptr || !size) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const auto first = reinterpret_cast<uintptr_t>(ptr);
  const uintptr_t last = first + size - 1;
  std::lock_guard lock(g_mutex);
  const auto begin = containing(first), end = containing(last);
  if (begin != g_ranges.end() && begin == end) {
    ++g_stats.nested_imports;
    return ZE_RESULT_SUCCESS;
  }
  const auto next = g_ranges.lower_bound(first);
  if (begin != g_ranges.end() || end != g_ranges.end() ||
      (next != g_ranges.end() && next->first <= last)) {
    ++g_stats.refused;
    std::fprintf(stderr, "ze_test_driver: import of [%p, +%zu) overlaps an imported range\n", ptr,
                 size);
    return begin != g_ranges.end() && end == g_ranges.end() ? ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE
                                                            : ZE_RESULT_ERROR_OVERLAPPING_REGIONS;
  }
  g_ranges.emplace(first, size);
  g_stats.ranges = g_ranges.size();
  return ZE_RESULT_SUCCESS;
}

ze_result_t release_host_range(void* ptr) {
  std::lock_guard lock(g_mutex);
  const auto range = containing(reinterpret_cast<uintptr_t>(ptr));
  if (range == g_ranges.end()) {
    ++g_stats.refused;
    std::fprintf(stderr, "ze_test_driver: release of %p, which was never imported\n", ptr);
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  g_ranges.erase(range);
  g_stats.ranges = g_ranges.size();
  return ZE_RESULT_SUCCESS;
}

bool imported(const void* ptr, size_t size) {
  const auto first = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard lock(g_mutex);
  const auto range = containing(first);
  return range != g_ranges.end() && first - range->first + size <= range->second;
}

}  // namespace ze_test

extern "C" ZE_DLLEXPORT ze_test::ImportStats zeTestImportStats() {
  std::lock_guard lock(ze_test::g_mutex);
  return ze_test::g_stats;
}
