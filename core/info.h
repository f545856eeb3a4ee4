// Writes the answer of a clGet*Info query with the spec's size rules: param_value may be NULL
// (only the size is reported); a non-NULL param_value smaller than the answer is CL_INVALID_VALUE.
#pragma once

#include <CL/cl.h>

#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace manifold {

class InfoWriter {
 public:
  InfoWriter(size_t size, void* value, size_t* size_ret)
      : size_(size), value_(value), size_ret_(size_ret) {}

  void bytes(const void* data, size_t n) {
    if (value_) {
      check(size_ >= n, CL_INVALID_VALUE, "param_value_size is smaller than the answer");
      if (n) std::memcpy(value_, data, n);
    }
    if (size_ret_) *size_ret_ = n;
  }
  template <class T>
  void value(const T& v) {
    bytes(&v, sizeof(T));
  }
  template <class T>
  void array(std::span<const T> v) {
    bytes(v.data(), v.size_bytes());
  }
  template <class T>
  void array(const std::vector<T>& v) {
    bytes(v.data(), v.size() * sizeof(T));
  }
  void string(std::string_view s) {
    // Strings are NUL-terminated; the reported size counts the terminator.
    if (value_) {
      check(size_ >= s.size() + 1, CL_INVALID_VALUE, "param_value_size is smaller than the answer");
      std::memcpy(value_, s.data(), s.size());
      static_cast<char*>(value_)[s.size()] = '\0';
    }
    if (size_ret_) *size_ret_ = s.size() + 1;
  }

 private:
  size_t size_;
  void* value_;
  size_t* size_ret_;
};

[[noreturn]] inline void unknown_param(const char* what) {
  fail(CL_INVALID_VALUE, std::string("unknown or unsupported ") + what + " query");
}

}  // namespace manifold
