// Damaged program binaries (clCreateProgramWithBinary's input, the cache's entries) must never
// crash the loader: a binary whose bytes changed after it was written is refused by its checksum,
// and one damaged inside and sealed again (a new size and checksum: a buggy or hostile producer)
// is refused by the payload's reader or the CPU loader with a message, or loads. Nothing here
// runs a loaded mutant: machine code that was changed and sealed again is the producer's.
//
// Deterministic (fixed seeds), bounded by an iteration count; ctest's timeout catches a hang.
#include <gtest/gtest.h>
#include <llvm/Support/xxhash.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/binary_format.h"
#include "compiler/compiler.h"

namespace manifold::compiler {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 8;  // magic, version, type, size, checksum

const Target& host() {
  static const Target target = host_cpu_target();
  return target;
}

const char* const kSources[] = {
    R"(kernel void scale(global float* data, float factor) {
         data[get_global_id(0)] *= factor;
       })",
    R"(kernel void reduce(global const int* in, global int* out, local int* tmp) {
         tmp[get_local_id(0)] = in[get_global_id(0)];
         barrier(CLK_LOCAL_MEM_FENCE);
         if (get_local_id(0) == 0) {
           int sum = 0;
           for (size_t i = 0; i < get_local_size(0); ++i) sum += tmp[i];
           out[get_group_id(0)] = sum;
         }
       }
       kernel void hello(int x) { printf("%d\n", x); })",
};

// Executables, a compiled object and a library of the sources above.
std::vector<Bytes> seed_binaries() {
  ::setenv("MANIFOLD_CACHE_DIR", "off", 1);  // built here, not served from a cache
  std::vector<Bytes> seeds;
  for (const char* source : kSources) {
    BuildOutput built = build(source, "", host());
    EXPECT_TRUE(built.success) << built.log;
    if (built.success) seeds.push_back(built.binary);
  }
  BuildOutput object = compile(kSources[0], "", {}, host());
  EXPECT_TRUE(object.success) << object.log;
  if (object.success) {
    seeds.push_back(object.binary);
    BuildOutput library =
        link({std::span<const uint8_t>(object.binary)}, "-create-library", host());
    EXPECT_TRUE(library.success) << library.log;
    if (library.success) seeds.push_back(library.binary);
  }
  return seeds;
}

uint64_t llvm_xxh3(const Bytes& bytes) { return llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(bytes)); }

void put_u64(Bytes& bytes, size_t at, uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes[at + i] = uint8_t(value >> (8 * i));
}

// A mutation of the payload: bits flipped, words overwritten with huge or small values (lengths
// and counts), a cut, an insertion, a repeated piece.
Bytes mutate_payload(Bytes payload, std::mt19937_64& random) {
  auto at = [&](size_t size) { return size ? size_t(random() % size) : 0; };
  const int kind = int(random() % 6);
  switch (kind) {
    case 0:
      for (int i = 0, n = 1 + int(random() % 8); i < n && !payload.empty(); ++i)
        payload[at(payload.size())] ^= uint8_t(1u << (random() % 8));
      break;
    case 1:
    case 2: {
      if (payload.size() < 8) break;
      const uint64_t values[] = {~uint64_t(0),   uint64_t(1) << 31, uint64_t(1) << 40, 0, 1,
                                 payload.size(), random()};
      put_u64(payload, at(payload.size() - 7), values[random() % std::size(values)]);
      break;
    }
    case 3:
      payload.resize(at(payload.size()));
      break;
    case 4: {
      const size_t where = at(payload.size() + 1);
      Bytes noise(1 + random() % 64);
      for (uint8_t& b : noise) b = uint8_t(random());
      payload.insert(payload.begin() + ptrdiff_t(where), noise.begin(), noise.end());
      break;
    }
    default: {
      if (payload.empty()) break;
      const size_t from = at(payload.size());
      const size_t length = std::min(payload.size() - from, size_t(1 + random() % 256));
      const Bytes piece(payload.begin() + ptrdiff_t(from),
                        payload.begin() + ptrdiff_t(from + length));
      payload.insert(payload.begin() + ptrdiff_t(at(payload.size() + 1)), piece.begin(),
                     piece.end());
    }
  }
  return payload;
}

// The binary's header with `payload` after it, its size and checksum made to match.
Bytes sealed(const Bytes& original, const Bytes& payload) {
  Bytes out(original.begin(), original.begin() + kHeaderSize);
  out.insert(out.end(), payload.begin(), payload.end());
  put_u64(out, 16, payload.size());
  put_u64(out, 24, llvm_xxh3(payload));
  return out;
}

TEST(BinaryFuzz, ChangedBytesAreRefusedByTheChecksum) {
  const std::vector<Bytes> seeds = seed_binaries();
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 random(7);
  for (const Bytes& seed : seeds) {
    for (int i = 0; i < 64; ++i) {
      Bytes damaged = seed;
      const size_t offset = kHeaderSize + random() % (seed.size() - kHeaderSize);
      damaged[offset] ^= uint8_t(1u << (random() % 8));
      std::string error;
      EXPECT_FALSE(deserialize(damaged, &error)) << "byte " << offset;
      EXPECT_NE(error.find("checksum"), std::string::npos) << error;
    }
    // Cut anywhere, or grown: the header's size no longer agrees.
    for (size_t keep :
         {size_t(0), size_t(7), kHeaderSize - 1, kHeaderSize, seed.size() / 2, seed.size() - 1}) {
      std::string error;
      EXPECT_FALSE(deserialize(std::span(seed.data(), keep), &error)) << "kept " << keep;
      EXPECT_FALSE(error.empty());
    }
    Bytes longer = seed;
    longer.push_back(0);
    EXPECT_FALSE(deserialize(longer, nullptr));
    EXPECT_EQ(cpu::CpuExecutable::load(longer, host(), nullptr), nullptr);
  }
}

TEST(BinaryFuzz, HeaderFieldsOutOfRangeAreRefused) {
  const std::vector<Bytes> seeds = seed_binaries();
  ASSERT_FALSE(seeds.empty());
  const Bytes& seed = seeds.front();
  struct Case {
    size_t offset;
    uint8_t value;
    const char* expected;
  } cases[] = {{0, 'X', "magic"}, {8, 0x7f, "version"}, {12, 0, "type"}, {12, 0x40, "type"}};
  for (const Case& c : cases) {
    Bytes damaged = seed;
    damaged[c.offset] = c.value;
    std::string error;
    EXPECT_FALSE(deserialize(damaged, &error));
    EXPECT_NE(error.find(c.expected), std::string::npos) << error;
    error.clear();
    EXPECT_EQ(cpu::CpuExecutable::load(damaged, host(), &error), nullptr);
    EXPECT_FALSE(error.empty());
  }
}

TEST(BinaryFuzz, SealedMutantsAreRefusedWithAMessageOrLoad) {
  const std::vector<Bytes> seeds = seed_binaries();
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 random(2024);
  int refused = 0, loaded = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    const Bytes& seed = seeds[size_t(iteration) % seeds.size()];
    const Bytes payload(seed.begin() + kHeaderSize, seed.end());
    const Bytes mutant = sealed(seed, mutate_payload(payload, random));
    SCOPED_TRACE("iteration " + std::to_string(iteration));
    std::string error;
    const std::optional<ProgramBinary> program = deserialize(mutant, &error);
    if (!program) {
      EXPECT_FALSE(error.empty());
      ++refused;
      continue;
    }
    if (program->type != BinaryType::Executable) continue;
    error.clear();
    if (cpu::CpuExecutable::load(mutant, host(), &error)) {
      ++loaded;
    } else {
      EXPECT_FALSE(error.empty());
      ++refused;
    }
  }
  // The mutations reach the reader's checks, not only the checksum.
  EXPECT_GT(refused, 100);
  std::printf("sealed mutants: %d refused, %d loaded\n", refused, loaded);
}

}  // namespace
}  // namespace manifold::compiler
