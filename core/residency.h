// Where the current bytes of a buffer are: per byte range, the set of memory places (host memory,
// each GPU's memory) that hold them. The scheduler reads and updates it in each device's
// submission order (scheduler/migration.cpp); not thread-safe by itself (the buffer's lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace manifold {

// A memory place: 0 is host memory (where devices that share host memory, the CPU, work);
// each device with memory of its own has a place 1..63 (Device::memory_place()).
using MemoryPlace = unsigned;
constexpr MemoryPlace kHostPlace = 0;
constexpr MemoryPlace kMaxMemoryPlaces = 64;

class Residency {
 public:
  using Places = uint64_t;  // bit p: place p holds the current bytes
  static constexpr Places kEverywhere = ~Places(0);
  static constexpr Places bit(MemoryPlace p) { return Places(1) << p; }

  // Initially every byte is current at `initial` (kEverywhere: the contents are undefined, so any
  // copy will do and the first use moves nothing).
  Residency(size_t size, Places initial) : size_(size) { ranges_[0] = initial; }

  // Calls fn(offset, size, places) for each piece of [offset, offset + size), in address order.
  template <class Fn>
  void for_each(size_t offset, size_t size, Fn&& fn) const {
    const size_t end = clamp_end(offset, size);
    auto it = ranges_.upper_bound(offset);
    --it;
    while (offset < end) {
      auto next = std::next(it);
      const size_t piece_end = std::min(end, next == ranges_.end() ? size_ : next->first);
      fn(offset, piece_end - offset, it->second);
      offset = piece_end;
      it = next;
    }
  }

  // Calls fn(offset, size, places) for each maximal piece of [offset, offset + size) whose current
  // bytes are not at `place`, in address order.
  template <class Fn>
  void for_each_missing(size_t offset, size_t size, MemoryPlace place, Fn&& fn) const {
    for_each(offset, size, [&](size_t o, size_t n, Places at) {
      if (!(at & bit(place))) fn(o, n, at);
    });
  }

  // [offset, offset + size) is now current at `place` too (a copy landed there).
  void add(size_t offset, size_t size, MemoryPlace place) {
    update(offset, size, [place](Places p) { return p | bit(place); });
  }
  // [offset, offset + size) is now current only at `place` (it was written there).
  void set(size_t offset, size_t size, MemoryPlace place) {
    update(offset, size, [place](Places) { return bit(place); });
  }

  size_t piece_count() const { return ranges_.size(); }
  // Where every byte is current, when the whole buffer is one piece; 0 when it is not.
  Places uniform_places() const { return ranges_.size() == 1 ? ranges_.begin()->second : 0; }

 private:
  size_t clamp_end(size_t offset, size_t size) const {
    return size > size_ - std::min(offset, size_) ? size_ : offset + size;
  }
  // Makes `at` the start of a piece (at < size_).
  void split(size_t at) {
    auto it = ranges_.upper_bound(at);
    --it;
    if (it->first != at) ranges_.emplace_hint(std::next(it), at, it->second);
  }
  template <class Op>
  void update(size_t offset, size_t size, Op op) {
    const size_t end = clamp_end(offset, size);
    if (offset >= end) return;
    split(offset);
    if (end < size_) split(end);
    auto first = ranges_.find(offset);
    auto last = end < size_ ? ranges_.find(end) : ranges_.end();
    for (auto it = first; it != last; ++it) it->second = op(it->second);
    // Merge equal neighbours so that the map stays as small as the access pattern allows.
    auto from = first == ranges_.begin() ? first : std::prev(first);
    for (auto it = from; it != last && std::next(it) != ranges_.end();) {
      auto next = std::next(it);
      if (next->second == it->second) {
        if (next == last) last = std::next(next);
        ranges_.erase(next);
      } else {
        it = next;
      }
    }
  }

  size_t size_;
  std::map<size_t, Places> ranges_;  // piece start -> places; a piece ends where the next begins
};

}  // namespace manifold
