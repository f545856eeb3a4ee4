#include "svm/svm_space.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <string>

#include "core/device.h"
#include "core/error.h"
#include "core/log.h"
#include "settings/settings.h"

namespace manifold {

namespace {
// The range is reserved on every device before the platform hands any out.
const PlatformSetupRegistration kReserveSvmRange([](std::span<Device* const> devices) {
  SvmSpace::reserve(devices, settings().svm_range_bytes);
});
}  // namespace
namespace {

SvmSpace* g_space = nullptr;

void* at(uint64_t address) { return reinterpret_cast<void*>(static_cast<uintptr_t>(address)); }

size_t round_up(size_t n, size_t unit) { return (n + unit - 1) / unit * unit; }

}  // namespace

// One allocation's addresses, given back when its memory object goes.
struct SvmSpace::Range {
  SvmSpace* space;
  size_t offset, bytes;              // in the space, whole pages (and granules for fine grain)
  std::vector<Ref<Device>> devices;  // where device memory is mapped under it
  ~Range() { space->release(*this); }
};

void SvmSpace::reserve(std::span<Device* const> devices, size_t size) {
  std::vector<Device*> own;  // devices whose addresses are not the host's
  size_t granularity = kPage;
  for (Device* d : devices) {
    if (!d->info().svm_capabilities || d->addresses_are_host_addresses()) continue;
    const size_t g = d->mapping_granularity();
    if (g == 0) {
      d->disable_svm("its driver cannot map memory at a chosen address");
      continue;
    }
    granularity = std::lcm(granularity, g);
    own.push_back(d);
  }
  size = round_up(size, granularity);
  // The first device with memory of its own picks the addresses (a GPU driver places its
  // reservations in the host's address space too, and refuses addresses the host uses); the
  // others must take exactly those.
  uint64_t base = 0;
  Device* picker = nullptr;
  for (Device* d : own) {
    if (!base) {
      base = d->reserve_any_range(size, granularity);
      if (base)
        picker = d;
      else
        d->disable_svm("its driver could not reserve the SVM address range");
      continue;
    }
    if (!d->reserve_range(base, size)) d->disable_svm("the SVM address range is taken on it");
  }
  std::erase_if(own, [](Device* d) { return !d->info().svm_capabilities; });
  const bool any_svm = std::any_of(devices.begin(), devices.end(),
                                   [](Device* d) { return d->info().svm_capabilities != 0; });
  if (!any_svm) return;

  const auto give_up = [&](const char* why) {
    log_debug("SVM: %s (%s): no device reports SVM", why, std::strerror(errno));
    for (Device* d : own) d->release_range(base, size);
    for (Device* d : devices) d->disable_svm(why);
  };
  if (!base) {  // only devices that use host addresses: the host picks
    void* p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return give_up("cannot reserve the host's address range");
    base = reinterpret_cast<uintptr_t>(p);
  }
  const int file = memfd_create("manifold-svm", MFD_CLOEXEC);
  if (file < 0 || ftruncate(file, static_cast<off_t>(size)) != 0) {
    if (file >= 0) close(file);
    return give_up("cannot make the SVM memory file");
  }
  // Over the placeholder the picker (or the host) left at those addresses. Readable and writable
  // once and for all: pages exist only where touched, and per-allocation protections would split
  // the mapping into as many kernel mappings as allocations (a process may have only ~65000).
  constexpr int kReadWrite = PROT_READ | PROT_WRITE;
  void* host = mmap(at(base), size, kReadWrite, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, file, 0);
  void* dma = host == MAP_FAILED
                  ? MAP_FAILED
                  : mmap(nullptr, size, kReadWrite, MAP_SHARED | MAP_NORESERVE, file, 0);
  if (dma == MAP_FAILED) {
    close(file);
    return give_up("cannot map the SVM memory file");
  }
  g_space = new SvmSpace(file, base, size, static_cast<std::byte*>(dma), granularity);
  log_debug("SVM: %zu GiB at %p (device mappings in units of %zu KiB; addresses chosen by %s)",
            size >> 30, at(base), granularity >> 10,
            picker ? picker->info().name.c_str() : "the host");
}

SvmSpace* SvmSpace::get() { return g_space; }

SvmSpace::SvmSpace(int file, uint64_t base, size_t size, std::byte* dma_view, size_t granularity)
    : file_(file), base_(base), size_(size), dma_view_(dma_view), granularity_(granularity) {
  free_[0] = size;
}

SvmSpace::~SvmSpace() {
  munmap(dma_view_, size_);
  close(file_);
}

size_t SvmSpace::take(size_t bytes, size_t alignment) {
  std::lock_guard lock(mutex_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const size_t start = round_up(it->first, alignment);
    const size_t end = it->first + it->second;
    if (start > end || end - start < bytes) continue;
    const size_t piece = it->first;
    free_.erase(it);
    if (start > piece) free_[piece] = start - piece;
    if (start + bytes < end) free_[start + bytes] = end - start - bytes;
    return start;
  }
  return SIZE_MAX;
}

void SvmSpace::give_back(size_t offset, size_t bytes) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = free_.emplace(offset, bytes);
  // Merge with the free neighbours.
  if (auto next = std::next(it); next != free_.end() && it->first + it->second == next->first) {
    it->second += next->second;
    free_.erase(next);
  }
  if (it != free_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      free_.erase(it);
    }
  }
}

// The first chunk of `chunks` that reaches past `first` (chunks never overlap each other).
std::map<size_t, SvmSpace::Chunk>::iterator SvmSpace::first_reaching(
    std::map<size_t, Chunk>& chunks, size_t first) {
  auto it = chunks.upper_bound(first);
  if (it != chunks.begin() && std::prev(it)->first + std::prev(it)->second.bytes > first) --it;
  return it;
}

void SvmSpace::map_on(Device& device, size_t offset, size_t bytes) {
  const size_t first = offset / granularity_ * granularity_;
  const size_t end = round_up(offset + bytes, granularity_);
  std::lock_guard lock(map_mutex_);
  auto& chunks = chunks_[&device];
  // Runs of granules no chunk covers yet: one mapping each (a 1 GiB allocation is one driver
  // allocation, not 512).
  std::vector<std::pair<size_t, size_t>> missing;
  size_t cursor = first;
  for (auto it = first_reaching(chunks, first); it != chunks.end() && it->first < end; ++it) {
    if (it->first > cursor) missing.emplace_back(cursor, it->first - cursor);
    cursor = it->first + it->second.bytes;
  }
  if (cursor < end) missing.emplace_back(cursor, end - cursor);
  std::vector<std::pair<size_t, size_t>> made;
  try {
    for (auto [o, n] : missing) {
      device.map_range(base_ + o, n);
      made.emplace_back(o, n);
    }
  } catch (...) {
    for (auto [o, n] : made) device.unmap_range(base_ + o, n);
    throw;
  }
  for (auto [o, n] : made) chunks[o] = {n, 0};
  for (auto it = first_reaching(chunks, first); it != chunks.end() && it->first < end; ++it)
    ++it->second.users;
}

void SvmSpace::unmap_on(Device& device, size_t offset, size_t bytes) {
  const size_t first = offset / granularity_ * granularity_;
  const size_t end = round_up(offset + bytes, granularity_);
  std::lock_guard lock(map_mutex_);
  auto& chunks = chunks_[&device];
  for (auto it = first_reaching(chunks, first); it != chunks.end() && it->first < end;) {
    if (--it->second.users > 0) {
      ++it;
      continue;
    }
    try {
      device.unmap_range(base_ + it->first, it->second.bytes);
    } catch (const Error& e) {
      log_debug("SVM: unmapping %zu bytes at %p failed: %s", it->second.bytes,
                at(base_ + it->first), e.what());
    }
    it = chunks.erase(it);
  }
}

Ref<MemObject> SvmSpace::allocate(Context& context, cl_svm_mem_flags flags, size_t size,
                                  size_t alignment) {
  check(size > 0 && size <= size_, CL_INVALID_VALUE, "the size is 0 or larger than the SVM range");
  const bool fine_grain = (flags & CL_MEM_SVM_FINE_GRAIN_BUFFER) != 0;
  // Fine-grain pages are the host's, which GPUs map in place: they get granules of their own,
  // never shared with device memory a coarse-grain neighbour maps.
  const size_t unit = fine_grain ? granularity_ : kPage;
  const size_t bytes = round_up(size, unit);
  const size_t offset = take(bytes, std::max(unit, alignment));
  if (offset == SIZE_MAX)
    fail(CL_MEM_OBJECT_ALLOCATION_FAILURE,
         "no room in the SVM range for " + std::to_string(size) + " bytes");
  auto range = std::make_shared<Range>();
  range->space = this;
  range->offset = offset;
  range->bytes = bytes;
  std::byte* host = static_cast<std::byte*>(at(base_ + offset));
  if (!fine_grain) {
    // Each device of the context with memory of its own gets its copy at the same addresses.
    // Sub-devices use their root device's memory: one mapping for the root and all of them. A
    // device group's commands run on its members: they get the copies.
    for (Device* d : context.executing_devices()) {
      while (d->parent()) d = d->parent();
      if (d->addresses_are_host_addresses() || !d->info().svm_capabilities) continue;
      if (std::any_of(range->devices.begin(), range->devices.end(),
                      [&](const Ref<Device>& mapped) { return mapped.get() == d; }))
        continue;
      map_on(*d, offset, size);
      range->devices.emplace_back(d);
    }
  }
  auto mem = Ref<MemObject>::adopt(new MemObject(
      Ref<Context>(&context), flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY),
      size, MemObject::Svm{host, dma_view_ + offset, fine_grain, range}));
  std::unique_lock lock(allocations_mutex_);
  allocations_[reinterpret_cast<uintptr_t>(host)] = mem;
  return mem;
}

void SvmSpace::release(const Range& range) {
  for (const Ref<Device>& d : range.devices) unmap_on(*d, range.offset, range.bytes);
  // Large ranges give their memory back to the system; small ones keep their pages for the
  // next allocation there (an SVM allocation's first contents are undefined).
  if (range.bytes >= kReturnedBytes)
    fallocate(file_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(range.offset),
              static_cast<off_t>(range.bytes));
  give_back(range.offset, range.bytes);
}

bool SvmSpace::free(Context& context, void* pointer) {
  Ref<MemObject> mem;  // released outside the lock: the last reference frees the memory
  std::unique_lock lock(allocations_mutex_);
  auto it = allocations_.find(reinterpret_cast<uintptr_t>(pointer));
  if (it == allocations_.end() || &it->second->context() != &context) return false;
  mem = std::move(it->second);
  allocations_.erase(it);
  lock.unlock();
  return true;
}

Ref<MemObject> SvmSpace::find(const void* pointer, size_t* offset, const Context* context) const {
  if (!contains(pointer)) return {};
  const auto p = reinterpret_cast<uintptr_t>(pointer);
  std::shared_lock lock(allocations_mutex_);
  auto it = allocations_.upper_bound(p);
  if (it == allocations_.begin()) return {};
  --it;
  const MemObject& mem = *it->second;
  if (p >= it->first + mem.size() || (context && &mem.context() != context)) return {};
  if (offset) *offset = p - it->first;
  return it->second;
}

Ref<MemObject> svm_argument_allocation(const void* pointer, const Context& context) {
  const SvmSpace* space = SvmSpace::get();
  if (!space || !space->contains(pointer)) return nullptr;
  Ref<MemObject> allocation = space->find(pointer, nullptr, &context);
  // The spec: CL_INVALID_ARG_VALUE if arg_value is not a valid value.
  check(allocation != nullptr, CL_INVALID_ARG_VALUE,
        "the pointer is in the SVM range but in no live allocation of the kernel's context");
  return allocation;
}

std::vector<Ref<MemObject>> svm_allocations_of(std::span<void* const> pointers,
                                               const Context& context) {
  std::vector<Ref<MemObject>> allocations;
  if (const SvmSpace* space = SvmSpace::get())
    for (void* p : pointers)
      if (Ref<MemObject> a = space->find(p, nullptr, &context))
        if (std::find(allocations.begin(), allocations.end(), a) == allocations.end())
          allocations.push_back(std::move(a));
  return allocations;
}

}  // namespace manifold
