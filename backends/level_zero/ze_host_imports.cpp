#include "backends/level_zero/ze_host_imports.h"

#include <memory>
#include <string>

#include "backends/level_zero/ze_device.h"
#include "core/error.h"
#include "core/log.h"

namespace manifold::level_zero {

HostImports* HostImports::of(const Api& api, ze_driver_handle_t driver) {
  static std::mutex mutex;
  // Left to the end of the process: buffers may release their imports while static objects go.
  static auto* drivers = new std::map<ze_driver_handle_t, std::unique_ptr<HostImports>>;
  std::lock_guard lock(mutex);
  auto found = drivers->find(driver);
  if (found != drivers->end()) return found->second.get();
  void* import = nullptr;
  void* release = nullptr;
  if (api.zeDriverGetExtensionFunctionAddress &&
      api.zeDriverGetExtensionFunctionAddress(driver, "zexDriverImportExternalPointer", &import) ==
          ZE_RESULT_SUCCESS &&
      api.zeDriverGetExtensionFunctionAddress(driver, "zexDriverReleaseImportedPointer",
                                              &release) == ZE_RESULT_SUCCESS &&
      import && release) {
    found =
        drivers
            ->emplace(driver, std::unique_ptr<HostImports>(new HostImports(
                                  driver, reinterpret_cast<zex_import_external_pointer_t>(import),
                                  reinterpret_cast<zex_release_imported_pointer_t>(release))))
            .first;
  } else {
    log_debug(
        "level_zero: the driver cannot import host memory (no zexDriverImportExternalPointer)");
    found = drivers->emplace(driver, nullptr).first;
  }
  return found->second.get();
}

std::map<uintptr_t, HostImports::Range>::iterator HostImports::containing(uintptr_t address) {
  auto after = ranges_.upper_bound(address);
  if (after == ranges_.begin()) return ranges_.end();
  auto range = std::prev(after);
  return address - range->first < range->second.size ? range : ranges_.end();
}

void HostImports::import(void* host, size_t size) {
  check(host != nullptr && size != 0, CL_INVALID_VALUE, "no host memory to import");
  const auto first = reinterpret_cast<uintptr_t>(host);
  const uintptr_t last = first + size - 1;
  check(last >= first, CL_INVALID_VALUE, "the range wraps around the address space");
  std::lock_guard lock(mutex_);
  const auto begin = containing(first);
  if (begin != ranges_.end() && begin == containing(last)) {
    ++begin->second.users;
    return;
  }
  // Any imported range that starts inside [first, last] or holds `first` overlaps in part.
  const auto next = ranges_.lower_bound(first);
  check(begin == ranges_.end() && (next == ranges_.end() || next->first > last),
        CL_OUT_OF_RESOURCES,
        "the range overlaps part of host memory already imported into the Level Zero driver "
        "with other bounds");
  check_ze(import_(driver_, host, size), CL_OUT_OF_RESOURCES, "zexDriverImportExternalPointer");
  ranges_.emplace(first, Range{size, 1});
}

void HostImports::release(void* host) {
  std::lock_guard lock(mutex_);
  const auto range = containing(reinterpret_cast<uintptr_t>(host));
  if (range == ranges_.end()) {
    log_debug("level_zero: release of host memory %p that is not imported", host);
    return;
  }
  if (--range->second.users) return;
  if (ze_result_t r = release_(driver_, reinterpret_cast<void*>(range->first));
      r != ZE_RESULT_SUCCESS)
    log_debug("level_zero: zexDriverReleaseImportedPointer(%p): %s",
              reinterpret_cast<void*>(range->first), result_text(r).c_str());
  ranges_.erase(range);
}

}  // namespace manifold::level_zero
