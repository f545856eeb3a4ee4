#include "compiler/program_cache.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <llvm/Support/BLAKE3.h>
#include <llvm/Support/xxhash.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

#include "compiler/binary_format.h"
#include "settings/settings.h"

extern "C" const unsigned char manifold_builtins_bitcode[];
extern "C" const unsigned long manifold_builtins_bitcode_size;

namespace manifold::compiler::program_cache {
namespace {

constexpr char kMagic[8] = {'M', 'N', 'F', 'D', 'C', 'C', 'H', '1'};
constexpr size_t kHeaderSize = 8 + 8 + 8;
constexpr size_t kDigestSize = 32;
// Bumped when the key's composition or the entry layout changes.
constexpr const char* kLayoutFolder = "v1";

// What identifies this compiler beyond its producer string: the file (shared library or
// executable) that holds this code, builtin library included; a rebuilt compiler has a new file.
// Only where the file cannot be identified, the builtin library's bytes (hashing them reads
// megabytes, a cost a process's first build would pay).
const std::string& compiler_identity() {
  static const std::string identity = [] {
    std::string id = producer_id();
    Dl_info info{};
    struct stat file {};
    if (dladdr(reinterpret_cast<void*>(&compiler_identity), &info) && info.dli_fname &&
        stat(info.dli_fname, &file) == 0) {
      id += "|file=" + std::string(info.dli_fname) + ":" + std::to_string(file.st_size) + ":" +
            std::to_string(file.st_ino) + ":" + std::to_string(file.st_mtim.tv_sec) + "." +
            std::to_string(file.st_mtim.tv_nsec);
    } else {
      const uint64_t builtins = llvm::xxh3_64bits(
          llvm::ArrayRef<uint8_t>(manifold_builtins_bitcode, manifold_builtins_bitcode_size));
      id += "|builtins=" + std::to_string(builtins);
    }
    return id;
  }();
  return identity;
}

class Hasher {
 public:
  void add(std::string_view text) {
    const uint64_t size = text.size();
    hasher_.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(&size), sizeof size));
    hasher_.update(
        llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  }
  std::string hex() {
    auto digest = hasher_.final();
    static const char kHex[] = "0123456789abcdef";
    std::string out;
    for (uint8_t byte : digest) {
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
    return out;
  }

 private:
  llvm::BLAKE3 hasher_;
};

void put_u64(std::vector<uint8_t>& out, uint64_t value) {
  const size_t at = out.size();
  out.resize(at + sizeof value);
  std::memcpy(out.data() + at, &value, sizeof value);
}

uint64_t get_u64(const uint8_t* p) {
  uint64_t value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

bool read_file(const std::string& path, std::vector<uint8_t>* bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat info {};
  bool ok = fstat(fd, &info) == 0 && info.st_size >= 0;
  if (ok) {
    bytes->resize(static_cast<size_t>(info.st_size));
    size_t done = 0;
    while (ok && done < bytes->size()) {
      const ssize_t n = ::read(fd, bytes->data() + done, bytes->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        ok = false;
      else
        done += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  return ok;
}

bool write_all(int fd, const std::vector<uint8_t>& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Digest bytes from the key's hex form.
std::vector<uint8_t> digest_bytes(const std::string& key) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < key.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoul(key.substr(i, 2), nullptr, 16)));
  return out;
}

}  // namespace

std::string directory() { return program_cache_directory(); }

std::string build_key(std::string_view source, std::string_view options, const Target& target) {
  Hasher h;
  h.add("build");
  h.add(compiler_identity());
  h.add(target.triple);
  h.add(target.cpu);
  h.add(target.features);
  h.add(std::to_string(target.opencl_c_version));
  h.add(std::to_string(target.opencl_version));
  for (const std::string& feature : target.opencl_c_features) h.add(feature);
  h.add("|");
  for (const std::string& extension : target.extensions) h.add(extension);
  h.add(std::string{char('0' + target.fp64), char('0' + target.fp16), char('0' + target.images)});
  h.add(options);
  h.add(source);
  return h.hex();
}

std::string entry_path(const std::string& key) {
  const std::string dir = directory();
  if (dir.empty() || key.size() != 2 * kDigestSize) return {};
  return dir + "/" + kLayoutFolder + "/" + key + ".mfc";
}

std::optional<BuildOutput> load(const std::string& key) {
  const std::string path = entry_path(key);
  if (path.empty()) return std::nullopt;
  std::vector<uint8_t> bytes;
  if (!read_file(path, &bytes)) return std::nullopt;
  auto reject = [&]() -> std::optional<BuildOutput> {
    ::unlink(path.c_str());  // a bad entry is rebuilt, never loaded
    return std::nullopt;
  };
  if (bytes.size() < kHeaderSize + kDigestSize + 16 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    return reject();
  const uint64_t payload_size = get_u64(bytes.data() + 8);
  const uint64_t checksum = get_u64(bytes.data() + 16);
  if (payload_size != bytes.size() - kHeaderSize) return reject();
  const uint8_t* payload = bytes.data() + kHeaderSize;
  if (llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(payload, payload_size)) != checksum)
    return reject();
  if (digest_bytes(key) != std::vector<uint8_t>(payload, payload + kDigestSize)) return reject();
  size_t pos = kDigestSize;
  auto take = [&](std::span<const uint8_t>* out) {
    if (payload_size - pos < 8) return false;
    const uint64_t size = get_u64(payload + pos);
    pos += 8;
    if (size > payload_size - pos) return false;
    *out = std::span<const uint8_t>(payload + pos, size);
    pos += size;
    return true;
  };
  std::span<const uint8_t> log, binary;
  if (!take(&log) || !take(&binary) || pos != payload_size) return reject();
  std::string error;
  std::optional<ProgramBinary> program = deserialize(binary, &error);
  if (!program || program->producer != producer_id()) return reject();
  BuildOutput out;
  out.success = true;
  out.from_cache = true;
  out.log.assign(log.begin(), log.end());
  out.binary.assign(binary.begin(), binary.end());
  out.kernels = std::move(program->kernels);
  out.type = program->type;
  return out;
}

void store(const std::string& key, const BuildOutput& output) {
  const std::string path = entry_path(key);
  if (path.empty() || !output.success) return;
  std::error_code error;
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::filesystem::create_directories(folder, error);
  if (error) return;

  std::vector<uint8_t> payload = digest_bytes(key);
  put_u64(payload, output.log.size());
  payload.insert(payload.end(), output.log.begin(), output.log.end());
  put_u64(payload, output.binary.size());
  payload.insert(payload.end(), output.binary.begin(), output.binary.end());
  std::vector<uint8_t> entry(kMagic, kMagic + 8);
  put_u64(entry, payload.size());
  put_u64(entry, llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(payload)));
  entry.insert(entry.end(), payload.begin(), payload.end());

  // A name no other writer uses (process, thread, counter), in the same folder so rename is
  // atomic: concurrent writers of one key each rename a whole entry; the last one stays.
  static std::atomic<uint64_t> counter{0};
  const std::string temporary =
      (folder / (".tmp." + std::to_string(::getpid()) + "." +
                 std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." +
                 std::to_string(counter.fetch_add(1))))
          .string();
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const bool written = write_all(fd, entry);
  ::close(fd);
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) ::unlink(temporary.c_str());
}

Stats stats() {
  Stats out;
  const std::string dir = directory();
  if (dir.empty()) return out;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(dir) / kLayoutFolder, error)) {
    if (entry.path().extension() != ".mfc") continue;
    ++out.entries;
    out.bytes += entry.file_size(error);
  }
  return out;
}

uint64_t clear() {
  const std::string dir = directory();
  if (dir.empty()) return 0;
  uint64_t removed = 0;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(dir) / kLayoutFolder, error)) {
    const bool is_entry = entry.path().extension() == ".mfc";
    // Leftovers of writers that died before their rename go too.
    if (is_entry || entry.path().filename().string().starts_with(".tmp."))
      if (std::filesystem::remove(entry.path(), error) && is_entry) ++removed;
  }
  return removed;
}

}  // namespace manifold::compiler::program_cache
