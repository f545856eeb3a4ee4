// Application host memory imported into a Level Zero driver (cl_arm_import_memory), through
// Intel's zexDriverImportExternalPointer / zexDriverReleaseImportedPointer. An import belongs to
// the driver, not to one device: once imported, the host pointer is usable by kernels and copies
// of every device of that driver (root devices and their tiles alike), so each range is imported
// once per driver however many devices and buffers use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "backends/level_zero/ze_api.h"

namespace manifold::level_zero {

class HostImports {
 public:
  // The imports of `driver` (one object per driver, looked up once); null where the driver lacks
  // the import functions. Thread-safe; the object lives as long as the process.
  static HostImports* of(const Api& api, ze_driver_handle_t driver);

  // Makes [host, host + size) usable by the driver's devices at `host`. A range inside one
  // already imported counts as one more user of it. Throws CL_OUT_OF_RESOURCES where the driver
  // refuses the range, or where it overlaps part of an imported range (the driver keeps one
  // allocation per range and cannot widen it while it is in use).
  void import(void* host, size_t size);
  // One user of the range imported with `host` goes; the last one releases the pages.
  void release(void* host);

 private:
  HostImports(ze_driver_handle_t driver, zex_import_external_pointer_t import,
              zex_release_imported_pointer_t release)
      : driver_(driver), import_(import), release_(release) {}

  struct Range {
    size_t size;
    size_t users;
  };
  // The range that holds `address`, or end().
  std::map<uintptr_t, Range>::iterator containing(uintptr_t address);

  const ze_driver_handle_t driver_;
  const zex_import_external_pointer_t import_;
  const zex_release_imported_pointer_t release_;
  std::mutex mutex_;
  std::map<uintptr_t, Range> ranges_;  // by first address
};

}  // namespace manifold::level_zero
