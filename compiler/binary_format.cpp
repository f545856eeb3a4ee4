#include "compiler/binary_format.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/Support/xxhash.h>

#include <cstring>

namespace manifold::compiler {
namespace {

constexpr char kMagic[8] = {'M', 'N', 'F', 'D', 'C', 'L', 'B', '1'};
constexpr uint32_t kFormatVersion = 6;  // 6: kernel footprints
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 8;
// Sanity bound for any single count or length: rejects absurd values from corrupt input before
// they turn into huge allocations.
constexpr uint64_t kMaxCount = uint64_t(1) << 32;

class Writer {
 public:
  void u32(uint32_t value) { raw(&value, sizeof value); }
  void u64(uint64_t value) { raw(&value, sizeof value); }
  void str(const std::string& value) {
    u64(value.size());
    raw(value.data(), value.size());
  }
  void bytes(const std::vector<uint8_t>& value) {
    u64(value.size());
    raw(value.data(), value.size());
  }
  void raw(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    out.insert(out.end(), p, p + size);
  }
  std::vector<uint8_t> out;
};

// Bounds-checked reader: every read fails softly once the input is exhausted.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }
  uint32_t u32() {
    uint32_t value = 0;
    raw(&value, sizeof value);
    return value;
  }
  uint64_t u64() {
    uint64_t value = 0;
    raw(&value, sizeof value);
    return value;
  }
  std::string str() {
    uint64_t size = u64();
    if (!ok_ || size > in_.size() - pos_) return fail(), std::string();
    std::string value(reinterpret_cast<const char*>(in_.data() + pos_), size);
    pos_ += size;
    return value;
  }
  std::vector<uint8_t> bytes() {
    uint64_t size = u64();
    if (!ok_ || size > in_.size() - pos_) return fail(), std::vector<uint8_t>();
    std::vector<uint8_t> value(in_.begin() + pos_, in_.begin() + pos_ + size);
    pos_ += size;
    return value;
  }
  uint64_t count() {
    uint64_t value = u64();
    if (value > kMaxCount || value > in_.size()) fail();
    return ok_ ? value : 0;
  }

 private:
  void fail() { ok_ = false; }
  void raw(void* data, size_t size) {
    if (!ok_ || size > in_.size() - pos_) {
      fail();
      std::memset(data, 0, size);
      return;
    }
    std::memcpy(data, in_.data() + pos_, size);
    pos_ += size;
  }
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

void write_polynomial(Writer& w, const Polynomial& p) {
  w.u64(p.terms.size());
  for (const Term& t : p.terms) {
    w.u64(uint64_t(t.coefficient));
    w.u64(t.factors.size());
    for (const Symbol& s : t.factors) {
      w.u32(uint32_t(s.kind));
      w.u32(s.index);
      w.u32(s.byte_offset);
      w.u32(uint32_t(s.bytes) | (s.is_signed ? 0x100u : 0u));
    }
  }
}

void write_footprint(Writer& w, const KernelFootprint& f) {
  w.u32(f.analyzed ? 1 : 0);
  w.str(f.whole_reason);
  w.u64(f.args.size());
  for (const ArgFootprint& a : f.args) {
    w.u32((a.reads_known ? 1u : 0u) | (a.writes_known ? 2u : 0u));
    w.u64(a.accesses.size());
    for (const Access& access : a.accesses) {
      w.u32(access.write ? 1 : 0);
      write_polynomial(w, access.offset);
      w.u64(access.size);
      w.u64(access.checks.size());
      for (const RangeCheck& c : access.checks) {
        write_polynomial(w, c.value);
        w.u32(uint32_t(c.bits) | (c.is_signed ? 0x100u : 0u));
      }
    }
  }
  w.u64(f.bounded.size());
  for (const BoundedVariable& b : f.bounded) {
    write_polynomial(w, b.first);
    write_polynomial(w, b.last);
  }
}

// `*valid` turns false on a symbol kind this reader does not know.
Polynomial read_polynomial(Reader& r, bool* valid) {
  Polynomial p;
  const uint64_t terms = r.count();
  for (uint64_t i = 0; i < terms && r.ok(); ++i) {
    Term t;
    t.coefficient = int64_t(r.u64());
    const uint64_t factors = r.count();
    for (uint64_t j = 0; j < factors && r.ok(); ++j) {
      Symbol s;
      const uint32_t kind = r.u32();
      if (kind > uint32_t(SymbolKind::Bounded)) *valid = false;
      s.kind = SymbolKind(kind);
      s.index = r.u32();
      s.byte_offset = r.u32();
      const uint32_t bytes = r.u32();
      s.bytes = uint8_t(bytes);
      s.is_signed = bytes & 0x100u;
      t.factors.push_back(s);
    }
    p.terms.push_back(std::move(t));
  }
  return p;
}

KernelFootprint read_footprint(Reader& r) {
  KernelFootprint f;
  bool valid = true;
  f.analyzed = r.u32() != 0;
  f.whole_reason = r.str();
  const uint64_t args = r.count();
  for (uint64_t i = 0; i < args && r.ok(); ++i) {
    ArgFootprint a;
    const uint32_t known = r.u32();
    a.reads_known = known & 1u;
    a.writes_known = known & 2u;
    const uint64_t accesses = r.count();
    for (uint64_t j = 0; j < accesses && r.ok(); ++j) {
      Access access;
      access.write = r.u32() != 0;
      access.offset = read_polynomial(r, &valid);
      access.size = r.u64();
      const uint64_t checks = r.count();
      for (uint64_t k = 0; k < checks && r.ok(); ++k) {
        RangeCheck c;
        c.value = read_polynomial(r, &valid);
        const uint32_t bits = r.u32();
        c.bits = uint8_t(bits);
        c.is_signed = bits & 0x100u;
        access.checks.push_back(std::move(c));
      }
      a.accesses.push_back(std::move(access));
    }
    f.args.push_back(std::move(a));
  }
  const uint64_t bounded = r.count();
  for (uint64_t i = 0; i < bounded && r.ok(); ++i) {
    BoundedVariable b;
    b.first = read_polynomial(r, &valid);
    b.last = read_polynomial(r, &valid);
    f.bounded.push_back(std::move(b));
  }
  // Nothing proven is always a safe answer.
  return valid ? f : KernelFootprint{};
}

void write_kernel(Writer& w, const KernelInfo& k) {
  w.str(k.name);
  w.u64(k.args.size());
  for (const KernelArg& a : k.args) {
    w.u32(static_cast<uint32_t>(a.kind));
    w.u64(a.size);
    w.u32(a.address);
    w.u32(a.access);
    w.u64(a.type_qualifier);
    w.str(a.type_name);
    w.str(a.name);
  }
  for (size_t v : k.reqd_work_group_size) w.u64(v);
  for (size_t v : k.work_group_size_hint) w.u64(v);
  w.str(k.vec_type_hint);
  w.str(k.attributes);
  w.u64(k.local_mem_size);
  w.u64(k.private_mem_size);
  w.u64(k.max_work_group_size);
  w.u32(k.arg_info_available ? 1 : 0);
  write_footprint(w, k.footprint);
}

KernelInfo read_kernel(Reader& r) {
  KernelInfo k;
  k.name = r.str();
  uint64_t count = r.count();
  for (uint64_t i = 0; i < count && r.ok(); ++i) {
    KernelArg a;
    uint32_t kind = r.u32();
    a.kind =
        kind <= static_cast<uint32_t>(ArgKind::Image) ? static_cast<ArgKind>(kind) : ArgKind::Value;
    a.size = r.u64();
    a.address = r.u32();
    a.access = r.u32();
    a.type_qualifier = r.u64();
    a.type_name = r.str();
    a.name = r.str();
    k.args.push_back(std::move(a));
  }
  for (size_t& v : k.reqd_work_group_size) v = r.u64();
  for (size_t& v : k.work_group_size_hint) v = r.u64();
  k.vec_type_hint = r.str();
  k.attributes = r.str();
  k.local_mem_size = r.u64();
  k.private_mem_size = r.u64();
  k.max_work_group_size = r.u64();
  k.arg_info_available = r.u32() != 0;
  k.footprint = read_footprint(r);
  return k;
}

}  // namespace

const std::string& producer_id() {
  static const std::string id = "Manifold OpenCL C compiler 1 (LLVM " LLVM_VERSION_STRING ")";
  return id;
}

std::vector<uint8_t> serialize(const ProgramBinary& program) {
  Writer payload;
  payload.str(program.triple);
  payload.str(program.options);
  payload.str(program.producer);
  payload.u64(program.kernels.size());
  for (const KernelInfo& k : program.kernels) write_kernel(payload, k);
  payload.u64(program.execs.size());
  for (const KernelExec& e : program.execs) {
    payload.str(e.entry_symbol);
    payload.u64(e.static_local_size);
    payload.u64(e.scratch_bytes_per_item);
    payload.u32((e.has_barriers ? 1u : 0u) | (e.uses_printf ? 2u : 0u) |
                (e.item_loop_fits_any_group ? 4u : 0u) | (e.item_loop_preferred ? 8u : 0u) |
                (e.partition_independent ? 16u : 0u) |
                (std::min<uint32_t>(e.item_loop_lockstep_items, 255) << 8));
    payload.str(e.item_loop_symbol);
  }
  payload.bytes(program.bitcode);
  payload.str(program.cpu);
  payload.str(program.features);
  payload.bytes(program.object);
  payload.u64(program.global_variable_bytes);

  Writer out;
  out.raw(kMagic, sizeof kMagic);
  out.u32(kFormatVersion);
  out.u32(static_cast<uint32_t>(program.type));
  out.u64(payload.out.size());
  out.u64(llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(payload.out)));
  out.raw(payload.out.data(), payload.out.size());
  return std::move(out.out);
}

std::optional<ProgramBinary> deserialize(std::span<const uint8_t> bytes, std::string* error) {
  auto fail = [&](const char* message) -> std::optional<ProgramBinary> {
    if (error) *error = message;
    return std::nullopt;
  };
  if (bytes.size() < kHeaderSize) return fail("binary is truncated (no complete header)");
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return fail("not a Manifold program binary (bad magic)");
  Reader header(bytes.subspan(sizeof kMagic, kHeaderSize - sizeof kMagic));
  uint32_t version = header.u32();
  uint32_t type = header.u32();
  uint64_t payload_size = header.u64();
  uint64_t checksum = header.u64();
  if (version != kFormatVersion) return fail("unsupported Manifold binary format version");
  if (type > static_cast<uint32_t>(BinaryType::Executable) || type == 0)
    return fail("binary has an unknown program type");
  if (payload_size != bytes.size() - kHeaderSize)
    return fail("binary is truncated or has trailing bytes (size mismatch)");
  std::span<const uint8_t> payload = bytes.subspan(kHeaderSize);
  if (llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(payload.data(), payload.size())) != checksum)
    return fail("binary is corrupt (checksum mismatch)");

  ProgramBinary program;
  program.type = static_cast<BinaryType>(type);
  Reader r(payload);
  program.triple = r.str();
  program.options = r.str();
  program.producer = r.str();
  uint64_t kernel_count = r.count();
  for (uint64_t i = 0; i < kernel_count && r.ok(); ++i) program.kernels.push_back(read_kernel(r));
  uint64_t exec_count = r.count();
  for (uint64_t i = 0; i < exec_count && r.ok(); ++i) {
    KernelExec e;
    e.entry_symbol = r.str();
    e.static_local_size = r.u64();
    e.scratch_bytes_per_item = r.u64();
    uint32_t flags = r.u32();
    e.has_barriers = flags & 1u;
    e.uses_printf = flags & 2u;
    e.item_loop_fits_any_group = flags & 4u;
    e.item_loop_preferred = flags & 8u;
    e.partition_independent = flags & 16u;
    e.item_loop_lockstep_items = (flags >> 8) & 255u;
    e.item_loop_symbol = r.str();
    program.execs.push_back(std::move(e));
  }
  program.bitcode = r.bytes();
  program.cpu = r.str();
  program.features = r.str();
  program.object = r.bytes();
  program.global_variable_bytes = r.u64();
  if (!r.ok() || !r.at_end()) return fail("binary payload is malformed");
  if (!program.execs.empty() && program.execs.size() != program.kernels.size())
    return fail("binary payload is malformed (kernel tables disagree)");
  return program;
}

std::optional<ProgramBinary> deserialize_executable(std::span<const uint8_t> bytes,
                                                    std::string_view triple_prefix,
                                                    const char* what, std::string* error) {
  std::optional<ProgramBinary> program = deserialize(bytes, error);
  if (!program) return std::nullopt;
  if (program->type != BinaryType::Executable ||
      std::string_view(program->triple).substr(0, triple_prefix.size()) != triple_prefix) {
    if (error) *error = std::string("not ") + what;
    return std::nullopt;
  }
  return program;
}

}  // namespace manifold::compiler
