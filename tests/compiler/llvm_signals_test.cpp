// Builds that run lld in-process (AMDGPU code objects) leave the application's signal state as
// it was: its signal actions, and the alternate signal stack of each thread that built. ctest runs
// each test in a process of its own, so each starts before anything of LLVM has run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "compiler/compiler.h"

namespace {

using namespace manifold::compiler;

void application_handler(int) {}

// SA_RESTORER: glibc's sigaction sets it on every action it installs (the kernel's return path);
// not part of what the application chose.
constexpr int kRestorerFlag = 0x04000000;

std::array<struct sigaction, NSIG> signal_actions() {
  std::array<struct sigaction, NSIG> actions{};
  for (int signal = 1; signal < NSIG; ++signal) sigaction(signal, nullptr, &actions[signal]);
  return actions;
}

// A real AMDGPU build (an empty cache: lld links) of a source no other build has.
void build_amdgpu(const std::string& name) {
  const std::string source = "kernel void " + name + "(global int* p) { p[get_global_id(0)] = 7; }";
  BuildOutput out = build(source, "", amdgpu_target("gfx90a").value());
  ASSERT_TRUE(out.success) << out.log;
  ASSERT_FALSE(out.from_cache);
}

class LlvmSignals : public testing::Test {
 protected:
  void SetUp() override {
    cache_ = (std::filesystem::temp_directory_path() /
              ("manifold-signals-" + std::to_string(::getpid())))
                 .string();
    ::setenv("MANIFOLD_CACHE_DIR", cache_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("MANIFOLD_CACHE_DIR");
    std::filesystem::remove_all(cache_);
  }
  std::string cache_;
};

TEST_F(LlvmSignals, ApplicationHandlersStayInstalled) {
  struct sigaction mine {};
  mine.sa_handler = application_handler;
  sigemptyset(&mine.sa_mask);
  for (int signal : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGINT, SIGTERM, SIGUSR1})
    ASSERT_EQ(sigaction(signal, &mine, nullptr), 0);
  const auto before = signal_actions();
  std::thread([] { build_amdgpu("first"); }).join();
  build_amdgpu("second");
  const auto after = signal_actions();
  for (int signal = 1; signal < NSIG; ++signal) {
    EXPECT_EQ(before[signal].sa_handler, after[signal].sa_handler) << "signal " << signal;
    EXPECT_EQ(before[signal].sa_flags & ~kRestorerFlag, after[signal].sa_flags & ~kRestorerFlag)
        << "signal " << signal;
  }
}

bool same_stack(const stack_t& a, const stack_t& b) {
  const bool a_off = a.ss_flags & SS_DISABLE, b_off = b.ss_flags & SS_DISABLE;
  if (a_off || b_off) return a_off == b_off;
  return a.ss_sp == b.ss_sp && a.ss_size == b.ss_size;
}

// A thread with a small alternate stack of its own keeps it: LLVM would replace any stack smaller
// than it wants. The thread's own stack is put back before it exits, since a sanitizer runtime
// unmaps whatever stack a thread has at its exit.
TEST_F(LlvmSignals, ThreadsKeepTheirAlternateStacks) {
  std::thread([] {
    stack_t runtime_given{};
    ASSERT_EQ(sigaltstack(nullptr, &runtime_given), 0);
    constexpr size_t kSize = 16 * 1024;
    void* memory = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(memory, MAP_FAILED);
    stack_t own{};
    own.ss_sp = memory;
    own.ss_size = kSize;
    ASSERT_EQ(sigaltstack(&own, nullptr), 0);
    build_amdgpu("with_stack");
    stack_t now{};
    ASSERT_EQ(sigaltstack(nullptr, &now), 0);
    EXPECT_EQ(now.ss_sp, memory);
    EXPECT_EQ(now.ss_size, kSize);
    runtime_given.ss_flags &= SS_DISABLE;
    sigaltstack(&runtime_given, nullptr);
    munmap(memory, kSize);
  }).join();
}

// A thread keeps exactly the stack it had before it built: none if it had none, or the one its
// runtime gave it (sanitizers give every thread one).
TEST_F(LlvmSignals, ThreadsWithoutAStackOfTheirOwnKeepWhatTheyHad) {
  std::thread([] {
    stack_t before{};
    ASSERT_EQ(sigaltstack(nullptr, &before), 0);
    build_amdgpu("without_stack");
    stack_t now{};
    ASSERT_EQ(sigaltstack(nullptr, &now), 0);
    EXPECT_TRUE(same_stack(before, now)) << "the build left the thread another signal stack";
  }).join();
}

}  // namespace
