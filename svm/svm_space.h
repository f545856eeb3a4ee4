// One virtual address range for the whole platform (shared virtual memory): the host maps it at
// one address and every device with memory of its own reserves the same addresses, so a pointer
// from clSVMAlloc means the same bytes on the host and on every device of its context.
//
// The host's pages come from one memory file mapped twice: at the SVM addresses (what the
// application and the CPU device use) and at a second, private address (what GPU drivers copy to
// and from: at the SVM addresses they see their own device memory, not the host's pages).
//
// Coarse-grain allocations get device memory mapped at their addresses on each device of their
// context (in chunks of the device's mapping granularity, shared by neighbouring allocations and
// counted); the scheduler's residency and migration machinery keeps the copies current, as for
// buffers. Fine-grain allocations are the host's pages, which each device maps in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <vector>

#include <CL/cl.h>

#include "core/memory.h"

namespace manifold {

class Device;

class SvmSpace {
 public:
  // Reserves the range on the host and on each device of `devices` that has memory of its own
  // (the first reserves where its driver chooses, the others exactly there). Devices that cannot
  // lose their SVM capabilities (the debug log says why). Called once, by the platform, before
  // any device is handed out.
  static void reserve(std::span<Device* const> devices, size_t size);
  // The space; null when reserve() could not even map the host's pages.
  static SvmSpace* get();

  // An allocation for clSVMAlloc: its memory object, whose host bytes are at the returned
  // address. Throws CL_INVALID_VALUE (size, alignment), CL_MEM_OBJECT_ALLOCATION_FAILURE (no
  // room in the range or on a device).
  Ref<MemObject> allocate(Context& context, cl_svm_mem_flags flags, size_t size, size_t alignment);
  // clSVMFree: forgets the allocation at `pointer`; its memory goes when the last command using
  // it has finished. False when `pointer` is not an allocation of `context`.
  bool free(Context& context, void* pointer);
  // The allocation holding [pointer, pointer + size) (any address inside it), with the offset of
  // `pointer` in it; null when none does. `context` null: any context.
  Ref<MemObject> find(const void* pointer, size_t* offset = nullptr,
                      const Context* context = nullptr) const;

  bool contains(const void* pointer) const {
    const auto p = reinterpret_cast<uintptr_t>(pointer);
    return p >= base_ && p < base_ + size_;
  }
  uint64_t base() const { return base_; }
  size_t size() const { return size_; }

  ~SvmSpace();

 private:
  SvmSpace(int file, uint64_t base, size_t size, std::byte* dma_view, size_t granularity);
  struct Range;
  class Backing;

  // Address-range allocator over [0, size_) in units of kPage (free pieces by offset).
  size_t take(size_t bytes, size_t alignment);  // SIZE_MAX: no room
  void give_back(size_t offset, size_t bytes);

  // Device memory mapped under [offset, offset + bytes) on `device`, counted per chunk.
  void map_on(Device& device, size_t offset, size_t bytes);
  void unmap_on(Device& device, size_t offset, size_t bytes);
  void release(const Range& range);

  static constexpr size_t kPage = 4096;
  static constexpr size_t kReturnedBytes = size_t{64} << 10;  // freed ranges this large or more

  int file_;
  uint64_t base_;
  size_t size_;
  std::byte* dma_view_;  // the same pages as [base_, base_ + size_), at another address
  size_t granularity_;   // of device mappings: every device's, and a multiple of kPage

  std::mutex mutex_;               // the allocator
  std::map<size_t, size_t> free_;  // offset -> bytes
  struct Chunk {
    size_t bytes;
    unsigned users;
  };
  std::map<const Device*, std::map<size_t, Chunk>> chunks_;  // per device: offset -> chunk
  static std::map<size_t, Chunk>::iterator first_reaching(std::map<size_t, Chunk>& chunks,
                                                          size_t first);
  std::mutex map_mutex_;  // the chunk maps and the device mappings they count

  mutable std::shared_mutex allocations_mutex_;
  std::map<uintptr_t, Ref<MemObject>> allocations_;  // by address: alive until clSVMFree
};

// The SVM allocation of `context` an SVM pointer argument lies in; null outside the SVM range.
// Throws CL_INVALID_ARG_VALUE for a pointer inside the range but in no live allocation of the
// context: it would fault on a GPU (and a GPU fault ends every later launch of the process on
// that GPU).
Ref<MemObject> svm_argument_allocation(const void* pointer, const Context& context);
// The SVM allocations of `context` that `pointers` lie in, once each (pointers outside any
// allocation are the host's, usable as they are).
std::vector<Ref<MemObject>> svm_allocations_of(std::span<void* const> pointers,
                                               const Context& context);

}  // namespace manifold
