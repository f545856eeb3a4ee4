// Helpers of the footprint tests: building kernels for the host CPU, describing footprints, and
// evaluating them for a part of an NDRange.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/compiler.h"

namespace manifold::compiler::testing {

inline const Target& host() {
  static const Target target = host_cpu_target();
  return target;
}

// The argument values of a launch, as clSetKernelArg would get them.
class ArgValues {
 public:
  ArgValues& buffer() { return add<uint64_t>(0); }
  template <typename T>
  ArgValues& add(const T& value) {
    std::vector<uint8_t> bytes(sizeof value);
    std::memcpy(bytes.data(), &value, sizeof value);
    values_.push_back(std::move(bytes));
    return *this;
  }
  std::vector<std::span<const uint8_t>> spans() const { return {values_.begin(), values_.end()}; }

 private:
  std::vector<std::vector<uint8_t>> values_;
};

inline NDRange range_1d(size_t global, size_t local, size_t first = 0, size_t count = 0) {
  NDRange r;
  r.work_dim = 1;
  r.global_size[0] = global;
  r.local_size[0] = local;
  r.group_first[0] = first;
  r.group_count[0] = count;
  return r;
}

inline std::string describe(const Polynomial& p) {
  static const char* kNames[] = {"gid", "lid", "grp", "gsz", "lsz", "ngr", "goff", "arg", "b"};
  std::string out;
  for (const Term& t : p.terms) {
    if (!out.empty()) out += " + ";
    out += std::to_string(t.coefficient);
    for (const Symbol& s : t.factors) {
      out += "*" + std::string(kNames[int(s.kind)]) + std::to_string(s.index);
      if (s.kind == SymbolKind::ScalarArg)
        out += "[" + std::to_string(s.byte_offset) + ":" + std::to_string(s.bytes) +
               (s.is_signed ? "s]" : "u]");
    }
  }
  return out.empty() ? "0" : out;
}

inline std::string describe(const KernelFootprint& f) {
  std::string out = f.analyzed ? "analyzed" : "not analyzed";
  if (!f.whole_reason.empty()) out += ", whole: " + f.whole_reason;
  out += "\n";
  for (size_t i = 0; i < f.args.size(); ++i) {
    const ArgFootprint& a = f.args[i];
    out += "arg " + std::to_string(i) + (a.reads_known ? "" : " reads unknown") +
           (a.writes_known ? "" : " writes unknown") + "\n";
    for (const Access& access : a.accesses) {
      out += std::string(access.write ? "  write " : "  read ") + std::to_string(access.size) +
             " at " + describe(access.offset);
      for (const RangeCheck& c : access.checks)
        out += " [check " + describe(c.value) + " in " + (c.is_signed ? "i" : "u") +
               std::to_string(c.bits) + "]";
      out += "\n";
    }
  }
  for (size_t i = 0; i < f.bounded.size(); ++i)
    out += "b" + std::to_string(i) + " in [" + describe(f.bounded[i].first) + ", " +
           describe(f.bounded[i].last) + "]\n";
  return out;
}

}  // namespace manifold::compiler::testing
