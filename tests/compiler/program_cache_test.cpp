// The on-disk program cache: hits, misses on any key change, and damaged entries that must be
// rebuilt rather than loaded.
#include "compiler/program_cache.h"

#include <gtest/gtest.h>
#include <llvm/Support/xxhash.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/binary_format.h"
#include "compiler/compiler.h"

namespace manifold::compiler {
namespace {

using cpu::CpuExecutable;

namespace fs = std::filesystem;

const Target& host() {
  static const Target target = host_cpu_target();
  return target;
}

// Each test gets an empty cache folder of its own through MANIFOLD_CACHE_DIR.
// Everything a kernel's info holds survives the program binary (and so the disk cache): a cached
// AMDGPU build once lost its work-group limit.
TEST(ProgramBinaryFormat, KernelInfoRoundTrips) {
  ProgramBinary program;
  program.type = BinaryType::Executable;
  KernelInfo k;
  k.name = "k";
  k.args.push_back(KernelArg{});
  k.reqd_work_group_size[0] = 64;
  k.work_group_size_hint[1] = 2;
  k.vec_type_hint = "float4";
  k.attributes = "reqd_work_group_size(64,1,1)";
  k.local_mem_size = 512;
  k.private_mem_size = 96;
  k.max_work_group_size = 256;
  k.arg_info_available = true;
  program.kernels.push_back(k);
  program.execs.push_back(KernelExec{});
  std::string error;
  auto back = deserialize(serialize(program), &error);
  ASSERT_TRUE(back.has_value()) << error;
  ASSERT_EQ(back->kernels.size(), 1u);
  const KernelInfo& r = back->kernels[0];
  EXPECT_EQ(r.name, "k");
  EXPECT_EQ(r.args.size(), 1u);
  EXPECT_EQ(r.reqd_work_group_size[0], 64u);
  EXPECT_EQ(r.work_group_size_hint[1], 2u);
  EXPECT_EQ(r.vec_type_hint, "float4");
  EXPECT_EQ(r.attributes, k.attributes);
  EXPECT_EQ(r.local_mem_size, 512u);
  EXPECT_EQ(r.private_mem_size, 96u);
  EXPECT_EQ(r.max_work_group_size, 256u);
  EXPECT_TRUE(r.arg_info_available);
}

class ProgramCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("manifold-cache-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    ::setenv("MANIFOLD_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("MANIFOLD_CACHE_DIR");
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string entry_for(const std::string& source, const std::string& options = "") {
    return program_cache::entry_path(program_cache::build_key(source, options, host()));
  }
  // Runs the kernel `scale` of a binary on 64 floats and returns whether it scaled them by 3.
  static bool runs_correctly(const std::vector<uint8_t>& binary) {
    std::string error;
    auto exe = CpuExecutable::load(binary, host(), &error);
    EXPECT_NE(exe, nullptr) << error;
    if (!exe) return false;
    std::vector<float> data(64);
    for (size_t i = 0; i < data.size(); ++i) data[i] = float(i);
    void* pointer = data.data();
    const void* args[] = {&pointer};
    NDRange range;
    range.global_size[0] = data.size();
    range.local_size[0] = 16;
    exe->run("scale", range, args, nullptr);
    for (size_t i = 0; i < data.size(); ++i)
      if (data[i] != 3.0f * float(i)) return false;
    return true;
  }

  fs::path dir_;
};

const std::string kSource = R"(
  __kernel void scale(__global float* data) { data[get_global_id(0)] *= FACTOR; }
)";

TEST_F(ProgramCache, SecondBuildIsAHitWithTheSameBinary) {
  BuildOutput first = build(kSource, "-DFACTOR=3", host());
  ASSERT_TRUE(first.success) << first.log;
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(fs::exists(entry_for(kSource, "-DFACTOR=3")));
  EXPECT_EQ(program_cache::stats().entries, 1u);

  BuildOutput second = build(kSource, "-DFACTOR=3", host());
  ASSERT_TRUE(second.success) << second.log;
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.binary, first.binary);
  EXPECT_EQ(second.log, first.log);
  ASSERT_EQ(second.kernels.size(), 1u);
  EXPECT_EQ(second.kernels[0].name, "scale");
  EXPECT_EQ(second.type, BinaryType::Executable);
  EXPECT_TRUE(runs_correctly(second.binary));
}

TEST_F(ProgramCache, OptionSourceOrTargetChangeMisses) {
  ASSERT_TRUE(build(kSource, "-DFACTOR=3", host()).success);
  BuildOutput other_options = build(kSource, "-DFACTOR=3 -cl-mad-enable", host());
  ASSERT_TRUE(other_options.success) << other_options.log;
  EXPECT_FALSE(other_options.from_cache);
  BuildOutput other_source = build(kSource + "\n", "-DFACTOR=3", host());
  ASSERT_TRUE(other_source.success);
  EXPECT_FALSE(other_source.from_cache);
  Target without_fp64 = host();
  without_fp64.fp64 = false;
  without_fp64.extensions.clear();
  EXPECT_NE(program_cache::build_key(kSource, "-DFACTOR=3", without_fp64),
            program_cache::build_key(kSource, "-DFACTOR=3", host()));
  Target other_cpu = host();
  other_cpu.cpu = "x86-64";
  EXPECT_NE(program_cache::build_key(kSource, "-DFACTOR=3", other_cpu),
            program_cache::build_key(kSource, "-DFACTOR=3", host()));
  // Each distinct build has an entry of its own; the original is still a hit.
  EXPECT_EQ(program_cache::stats().entries, 3u);
  EXPECT_TRUE(build(kSource, "-DFACTOR=3", host()).from_cache);
}

TEST_F(ProgramCache, FailedBuildsAreNotCached) {
  BuildOutput failed = build("__kernel void k() { undeclared(); }", "", host());
  EXPECT_FALSE(failed.success);
  EXPECT_EQ(program_cache::stats().entries, 0u);
}

// Damages the entry of kSource with `damage`, then checks that the next build does not load it,
// rebuilds a working binary and leaves a good entry (the build after is a hit).
template <class Damage>
void expect_rebuilt_after(ProgramCache* test, const std::string& entry, Damage damage) {
  (void)test;
  ASSERT_TRUE(fs::exists(entry));
  damage(entry);
  BuildOutput rebuilt = build(kSource, "-DFACTOR=3", host());
  ASSERT_TRUE(rebuilt.success) << rebuilt.log;
  EXPECT_FALSE(rebuilt.from_cache);
  BuildOutput again = build(kSource, "-DFACTOR=3", host());
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.binary, rebuilt.binary);
}

TEST_F(ProgramCache, CorruptedEntryIsRebuilt) {
  BuildOutput original = build(kSource, "-DFACTOR=3", host());
  ASSERT_TRUE(original.success);
  const std::string entry = entry_for(kSource, "-DFACTOR=3");
  const uintmax_t size = fs::file_size(entry);
  // One flipped bit anywhere: in the header, the log or the middle of the program binary.
  for (uintmax_t offset : {uintmax_t(3), uintmax_t(20), size / 2, size - 1}) {
    SCOPED_TRACE("byte " + std::to_string(offset));
    expect_rebuilt_after(this, entry, [offset](const std::string& path) {
      std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
      file.seekg(std::streamoff(offset));
      char byte = 0;
      file.read(&byte, 1);
      byte = char(byte ^ 0x10);
      file.seekp(std::streamoff(offset));
      file.write(&byte, 1);
    });
  }
}

TEST_F(ProgramCache, TruncatedEntryIsRebuilt) {
  ASSERT_TRUE(build(kSource, "-DFACTOR=3", host()).success);
  const std::string entry = entry_for(kSource, "-DFACTOR=3");
  const uintmax_t size = fs::file_size(entry);
  for (uintmax_t keep : {uintmax_t(0), uintmax_t(10), size / 2, size - 1}) {
    SCOPED_TRACE("kept " + std::to_string(keep) + " bytes");
    expect_rebuilt_after(this, entry,
                         [keep](const std::string& path) { fs::resize_file(path, keep); });
  }
}

TEST_F(ProgramCache, EntryUnderAnotherKeyIsNotLoaded) {
  // A valid entry copied to the name of another key (e.g. a hash collision or a stray copy)
  // carries its own key inside and is rejected.
  ASSERT_TRUE(build(kSource, "-DFACTOR=3", host()).success);
  const std::string other = entry_for(kSource, "-DFACTOR=3 -w");
  fs::copy_file(entry_for(kSource, "-DFACTOR=3"), other);
  BuildOutput out = build(kSource, "-DFACTOR=3 -w", host());
  ASSERT_TRUE(out.success);
  EXPECT_FALSE(out.from_cache);
}

TEST_F(ProgramCache, ConcurrentBuildersShareOneFolder) {
  // Threads of this process and child processes build the same program into an empty cache at
  // once: every build succeeds and no temporary files are left behind.
  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      BuildOutput out = build(kSource, "-DFACTOR=3", host());
      std::_Exit(out.success ? 0 : 1);
    }
    children.push_back(child);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&] {
      if (!build(kSource, "-DFACTOR=3", host()).success) ++failures;
    });
  for (std::thread& thread : threads) thread.join();
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(failures.load(), 0);
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir_))
    if (entry.is_regular_file()) ++files;
  EXPECT_EQ(files, 1u);
  BuildOutput cached = build(kSource, "-DFACTOR=3", host());
  EXPECT_TRUE(cached.from_cache);
  EXPECT_TRUE(runs_correctly(cached.binary));
}

TEST_F(ProgramCache, OffMeansNoEntries) {
  ::setenv("MANIFOLD_CACHE_DIR", "off", 1);
  EXPECT_EQ(program_cache::directory(), "");
  ASSERT_TRUE(build(kSource, "-DFACTOR=3", host()).success);
  EXPECT_FALSE(build(kSource, "-DFACTOR=3", host()).from_cache);
  EXPECT_FALSE(fs::exists(dir_));
}

// An entry whose checksums all agree but whose program binary is of another format version (a
// cache shared with another Manifold) is rebuilt, not handed to a loader that would refuse it.
TEST_F(ProgramCache, EntryOfAnotherFormatVersionIsRebuilt) {
  ASSERT_TRUE(build(kSource, "-DFACTOR=3", host()).success);
  const std::string entry = entry_for(kSource, "-DFACTOR=3");
  expect_rebuilt_after(this, entry, [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    in.close();
    // Entry: magic, payload size, checksum, then the key's digest, the log and the binary, each
    // after its u64 length. The binary's version follows its 8-byte magic.
    constexpr size_t kEntryHeader = 24, kDigest = 32;
    auto u64_at = [&](size_t at) {
      uint64_t value = 0;
      for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[at + size_t(i)];
      return value;
    };
    const size_t log_at = kEntryHeader + kDigest;
    const size_t binary_at = log_at + 8 + size_t(u64_at(log_at)) + 8;
    ASSERT_LT(binary_at + 12, bytes.size());
    ASSERT_EQ(std::memcmp(bytes.data() + binary_at, "MNFDCLB1", 8), 0);
    bytes[binary_at + 8] ^= 0x40;
    const uint64_t checksum = llvm::xxh3_64bits(
        llvm::ArrayRef<uint8_t>(bytes.data() + kEntryHeader, bytes.size() - kEntryHeader));
    for (int i = 0; i < 8; ++i) bytes[16 + size_t(i)] = uint8_t(checksum >> (8 * i));
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  });
}

// A cache folder that cannot be made (its parent is a file): builds work, uncached.
TEST_F(ProgramCache, FolderThatCannotBeMadeLeavesBuildsUncached) {
  fs::create_directories(dir_);
  const fs::path file = dir_ / "a-file";
  std::ofstream(file) << "not a folder";
  ::setenv("MANIFOLD_CACHE_DIR", (file / "cache").c_str(), 1);
  for (int i = 0; i < 2; ++i) {
    BuildOutput out = build(kSource, "-DFACTOR=3", host());
    ASSERT_TRUE(out.success) << out.log;
    EXPECT_FALSE(out.from_cache);
    EXPECT_TRUE(runs_correctly(out.binary));
  }
  EXPECT_EQ(program_cache::stats().entries, 0u);
}

// A full disk (here: a file size limit, which fails writes as a full disk does, with SIGXFSZ
// ignored): the build succeeds, no entry and no temporary file is left, and the next build works.
TEST_F(ProgramCache, FullDiskLeavesNoEntryAndBuildsStillWork) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{512, 512};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    bool ok = true;
    for (int i = 0; i < 2; ++i) {
      BuildOutput out = build(kSource, "-DFACTOR=3", host());
      ok = ok && out.success && !out.from_cache && runs_correctly(out.binary);
    }
    std::_Exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::error_code ignored;
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir_, ignored))
    if (entry.is_regular_file()) ++files;
  EXPECT_EQ(files, 0u) << "a partial entry or a temporary file was left";
  BuildOutput after = build(kSource, "-DFACTOR=3", host());
  ASSERT_TRUE(after.success);
  EXPECT_FALSE(after.from_cache);
  EXPECT_TRUE(build(kSource, "-DFACTOR=3", host()).from_cache);
}

TEST_F(ProgramCache, ClearRemovesEntries) {
  ASSERT_TRUE(build(kSource, "-DFACTOR=3", host()).success);
  ASSERT_TRUE(build(kSource, "-DFACTOR=2", host()).success);
  EXPECT_EQ(program_cache::stats().entries, 2u);
  EXPECT_GT(program_cache::stats().bytes, 0u);
  EXPECT_EQ(program_cache::clear(), 2u);
  EXPECT_EQ(program_cache::stats().entries, 0u);
  EXPECT_FALSE(build(kSource, "-DFACTOR=3", host()).from_cache);
}

}  // namespace
}  // namespace manifold::compiler
