// Where the CPU pipeline's printf output goes. By default each call writes to stdout at once.
// A PrintfBuffer instead holds one launch's output as a GPU's printf buffer does: up to its
// capacity, whole calls only (a call that no longer fits prints nothing and returns -1), printed
// when the launch completes. CpuExecutable::run directs its work-groups' calls to one.
#pragma once

#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

namespace manifold::compiler {

class PrintfBuffer {
 public:
  explicit PrintfBuffer(size_t capacity) : capacity_(capacity) {}
  // Keeps `text` if it fits in what is left; thread-safe.
  bool append(std::string_view text);
  // Writes what was kept to `out` and flushes it; the buffer is empty afterwards.
  void print(std::FILE* out);
  // What was kept; the buffer is empty afterwards.
  std::string take() {
    std::string text;
    std::lock_guard<std::mutex> guard(lock_);
    text.swap(text_);
    return text;
  }

 private:
  std::mutex lock_;
  const size_t capacity_;
  std::string text_;
};

// Directs the printf calls of this thread to `buffer` (nullptr: stdout) for the scope's life.
class PrintfBufferScope {
 public:
  explicit PrintfBufferScope(PrintfBuffer* buffer);
  ~PrintfBufferScope();
  PrintfBufferScope(const PrintfBufferScope&) = delete;
  PrintfBufferScope& operator=(const PrintfBufferScope&) = delete;

 private:
  PrintfBuffer* previous_;
};

}  // namespace manifold::compiler
