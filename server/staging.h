// Host memory for the bytes of writes and reads on their way between a client and the server's
// devices. Buffers are reused (kept by size class), so that a stream of large transfers does not
// pay for fresh pages every time; idle memory is bounded. Thread: any.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace manifold::server {

class Staging {
 public:
  std::byte* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  friend class StagingPool;
  std::unique_ptr<std::byte[]> data_;
  size_t capacity_ = 0, size_ = 0;
};

class StagingPool {
 public:
  // `size` bytes (uninitialized); back in the pool when the last holder lets go.
  static std::shared_ptr<Staging> get(size_t size) {
    StagingPool& pool = instance();
    const size_t capacity = size_class(size);
    std::unique_ptr<Staging> s;
    {
      std::lock_guard lock(pool.mutex_);
      auto& idle = pool.idle_[capacity];
      if (!idle.empty()) {
        s = std::move(idle.back());
        idle.pop_back();
        pool.idle_bytes_ -= capacity;
      }
    }
    if (!s) {
      s = std::make_unique<Staging>();
      s->data_.reset(new std::byte[capacity]);
      s->capacity_ = capacity;
    }
    s->size_ = size;
    return std::shared_ptr<Staging>(s.release(), [](Staging* back) { instance().put(back); });
  }

 private:
  static constexpr size_t kMaxIdleBytes = size_t{512} << 20;
  static StagingPool& instance() {
    static StagingPool* pool = new StagingPool;  // outlives every holder
    return *pool;
  }
  static size_t size_class(size_t size) {
    size_t c = 4096;
    while (c < size) c *= 2;
    return c;
  }
  void put(Staging* s) {
    std::unique_ptr<Staging> owned(s);
    std::lock_guard lock(mutex_);
    if (idle_bytes_ + s->capacity_ > kMaxIdleBytes) return;
    idle_bytes_ += s->capacity_;
    idle_[s->capacity_].push_back(std::move(owned));
  }
  std::mutex mutex_;
  std::map<size_t, std::vector<std::unique_ptr<Staging>>> idle_;
  size_t idle_bytes_ = 0;
};

}  // namespace manifold::server
