#include "core/group_binary.h"

#include <algorithm>
#include <cstring>

namespace manifold {

namespace {

constexpr char kMagic[8] = {'M', 'N', 'F', 'D', 'G', 'R', 'P', '1'};

template <class T>
void put(std::vector<uint8_t>& out, T value) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

// Reads through a container, remembering whether it ran past the end.
struct Reader {
  std::span<const uint8_t> bytes;
  size_t at = 0;
  bool overrun = false;

  template <class T>
  T take() {
    T value{};
    if (bytes.size() - at < sizeof value) {
      overrun = true;
      at = bytes.size();
      return value;
    }
    std::memcpy(&value, bytes.data() + at, sizeof value);
    at += sizeof value;
    return value;
  }
};

}  // namespace

bool is_group_binary(std::span<const uint8_t> binary) {
  return binary.size() >= sizeof kMagic && std::memcmp(binary.data(), kMagic, sizeof kMagic) == 0;
}

std::vector<uint8_t> bundle_member_binaries(const std::vector<std::vector<uint8_t>>& members) {
  // A member without a binary (its build failed) leaves the group without one.
  if (members.empty() ||
      std::any_of(members.begin(), members.end(), [](auto& b) { return b.empty(); }))
    return {};
  if (std::all_of(members.begin(), members.end(),
                  [&](const std::vector<uint8_t>& b) { return b == members.front(); }))
    return members.front();
  std::vector<const std::vector<uint8_t>*> entries;
  std::vector<uint32_t> index;
  for (const std::vector<uint8_t>& b : members) {
    auto found = std::find_if(entries.begin(), entries.end(), [&](auto* e) { return *e == b; });
    index.push_back(uint32_t(found - entries.begin()));
    if (found == entries.end()) entries.push_back(&b);
  }
  std::vector<uint8_t> out(kMagic, kMagic + sizeof kMagic);
  put(out, uint32_t(members.size()));
  put(out, uint32_t(entries.size()));
  for (uint32_t i : index) put(out, i);
  for (const std::vector<uint8_t>* e : entries) {
    put(out, uint64_t(e->size()));
    out.insert(out.end(), e->begin(), e->end());
  }
  return out;
}

std::optional<std::vector<std::vector<uint8_t>>> unbundle_member_binaries(
    std::span<const uint8_t> binary, std::string* error) {
  auto fail = [&](const char* why) {
    if (error) *error = why;
    return std::nullopt;
  };
  if (!is_group_binary(binary)) return fail("not a device group's binary");
  Reader in{binary, sizeof kMagic};
  const uint32_t member_count = in.take<uint32_t>();
  const uint32_t entry_count = in.take<uint32_t>();
  // Each member's index takes 4 bytes and each entry at least 8: larger counts cannot fit.
  if (in.overrun || member_count == 0 || entry_count == 0 || entry_count > member_count ||
      member_count > (binary.size() - in.at) / 4)
    return fail("a device group's binary with impossible member or entry counts");
  std::vector<uint32_t> index(member_count);
  for (uint32_t& i : index) {
    i = in.take<uint32_t>();
    if (i >= entry_count) return fail("a member of a device group's binary names no entry");
  }
  std::vector<std::vector<uint8_t>> entries;
  for (uint32_t e = 0; e < entry_count; ++e) {
    const uint64_t size = in.take<uint64_t>();
    if (in.overrun || size == 0 || size > binary.size() - in.at)
      return fail("a device group's binary is truncated");
    entries.emplace_back(binary.begin() + in.at, binary.begin() + in.at + size);
    in.at += size;
  }
  if (in.at != binary.size()) return fail("a device group's binary has bytes after its entries");
  std::vector<std::vector<uint8_t>> members;
  for (uint32_t i : index) members.push_back(entries[i]);
  return members;
}

}  // namespace manifold
