// Plain values to bytes and back, little endian as the host stores them: what the remote
// backend's messages and a device's description (core/device_description.h) are made of. The
// reader is bounds-checked and fails softly: once a read runs past the end, every later read
// returns zeros and ok() is false, so that malformed input from the network is refused, never
// trusted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace manifold {

class ByteWriter {
 public:
  template <class T>
  requires std::is_trivially_copyable_v<T>
  void put(const T& value) { raw(&value, sizeof value); }
  void str(std::string_view value) {
    put(uint64_t(value.size()));
    raw(value.data(), value.size());
  }
  template <class T>
  requires std::is_trivially_copyable_v<T>
  void array(std::span<const T> values) {
    put(uint64_t(values.size()));
    raw(values.data(), values.size_bytes());
  }
  template <class T>
  void array(const std::vector<T>& values) {
    array(std::span<const T>(values));
  }
  void raw(const void* data, size_t size) {
    if (size == 0) return;
    // resize + memcpy, not insert: GCC 12 misreads an inlined insert of a few bytes into a
    // freshly grown vector as an overflow (-Wstringop-overflow in optimized builds).
    const size_t at = out_.size();
    out_.resize(at + size);
    std::memcpy(out_.data() + at, data, size);
  }
  std::vector<std::byte>& bytes() { return out_; }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  std::vector<std::byte> out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> in) : in_(in) {}
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }
  size_t remaining() const { return in_.size() - pos_; }

  template <class T>
  requires std::is_trivially_copyable_v<T> T get() {
    T value{};
    raw(&value, sizeof value);
    return value;
  }
  template <class T>
  void get(T& value) {
    value = get<T>();
  }
  std::string str() {
    const uint64_t size = get<uint64_t>();
    if (!ok_ || size > remaining()) return fail(), std::string();
    std::string value(reinterpret_cast<const char*>(in_.data() + pos_), size);
    pos_ += size;
    return value;
  }
  template <class T>
  requires std::is_trivially_copyable_v<T> std::vector<T> array() {
    const uint64_t count = get<uint64_t>();
    if (!ok_ || count > remaining() / (sizeof(T) ? sizeof(T) : 1)) return fail(), std::vector<T>();
    std::vector<T> values(count);
    raw(values.data(), count * sizeof(T));
    return values;
  }
  // The next `size` bytes in place (valid while the input is); empty, and failed, past the end.
  std::span<const std::byte> view(size_t size) {
    if (!ok_ || size > remaining()) return fail(), std::span<const std::byte>();
    auto bytes = in_.subspan(pos_, size);
    pos_ += size;
    return bytes;
  }
  void raw(void* data, size_t size) {
    if (size == 0) return;  // an empty array's data() may be null
    if (!ok_ || size > remaining()) {
      fail();
      std::memset(data, 0, size);
      return;
    }
    std::memcpy(data, in_.data() + pos_, size);
    pos_ += size;
  }
  void fail() { ok_ = false; }

 private:
  std::span<const std::byte> in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// Visitors that write or read one field of any kind a wire format holds (plain values, strings,
// vectors of plain values or of strings): a format lists its fields once, in a function that
// calls the visitor on each, and both directions follow the same list.
struct FieldWriter {
  ByteWriter& out;
  template <class T>
  void operator()(const T& value) {
    if constexpr (std::is_same_v<T, std::string>) {
      out.str(value);
    } else if constexpr (std::is_trivially_copyable_v<T>) {
      out.put(value);
    } else if constexpr (std::is_same_v<typename T::value_type, std::string>) {
      out.put(uint64_t(value.size()));
      for (const std::string& s : value) out.str(s);
    } else {
      out.array(value);
    }
  }
};

struct FieldReader {
  ByteReader& in;
  template <class T>
  void operator()(T& value) {
    if constexpr (std::is_same_v<T, std::string>) {
      value = in.str();
    } else if constexpr (std::is_trivially_copyable_v<T>) {
      in.raw(&value, sizeof value);
    } else if constexpr (std::is_same_v<typename T::value_type, std::string>) {
      const uint64_t count = in.get<uint64_t>();
      if (count > in.remaining()) return in.fail();
      value.resize(count);
      for (std::string& s : value) s = in.str();
    } else {
      value = in.array<typename T::value_type>();
    }
  }
};

}  // namespace manifold
