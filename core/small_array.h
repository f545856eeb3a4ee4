// A fixed-size array of trivially copyable values that lives on the stack up to N elements and on
// the heap beyond: per-launch argument tables (a kernel rarely has more than a few arguments)
// without a heap allocation per launch. Not thread-local scratch, which a thread running other
// work while it waits (a oneTBB task) would overwrite.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>

namespace manifold {

template <class T, size_t N = 16>
class SmallArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  explicit SmallArray(size_t size, T value = T{}) : size_(size) {
    if (size > N) heap_ = std::make_unique<T[]>(size);
    T* p = data();
    for (size_t i = 0; i < size; ++i) p[i] = value;
  }
  SmallArray(const SmallArray&) = delete;
  SmallArray& operator=(const SmallArray&) = delete;

  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }

 private:
  size_t size_;
  std::unique_ptr<T[]> heap_;
  T inline_[N];
};

}  // namespace manifold
