#include "compiler/llvm_signals.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Signals.h>

#include <array>
#include <mutex>

namespace manifold::compiler {
namespace {

// SA_RESTORER: glibc adds it to every action it installs.
constexpr int kRestorerFlag = 0x04000000;

bool same_action(const struct sigaction& a, const struct sigaction& b) {
  return (a.sa_flags & ~kRestorerFlag) == (b.sa_flags & ~kRestorerFlag) &&
         ((a.sa_flags & SA_SIGINFO) ? a.sa_sigaction == b.sa_sigaction
                                    : a.sa_handler == b.sa_handler);
}

bool same_stack(const stack_t& a, const stack_t& b) {
  const bool a_off = a.ss_flags & SS_DISABLE, b_off = b.ss_flags & SS_DISABLE;
  if (a_off || b_off) return a_off == b_off;
  return a.ss_sp == b.ss_sp && a.ss_size == b.ss_size;
}

void restore_stack(const stack_t& saved) {
  stack_t now{};
  if (sigaltstack(nullptr, &now) != 0 || (now.ss_flags & SS_ONSTACK) || same_stack(now, saved))
    return;
  stack_t put = saved;
  put.ss_flags &= SS_DISABLE;  // SS_ONSTACK is reported, never set
  sigaltstack(&put, nullptr);
}

}  // namespace

ThreadSignalStackGuard::ThreadSignalStackGuard() {
  have_saved_ = sigaltstack(nullptr, &saved_) == 0;
}

ThreadSignalStackGuard::~ThreadSignalStackGuard() {
  if (have_saved_) restore_stack(saved_);
}

void keep_llvm_signal_handling_out() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::array<struct sigaction, NSIG> before{};
    std::array<bool, NSIG> known{};
    for (int signal = 1; signal < NSIG; ++signal)
      known[signal] = sigaction(signal, nullptr, &before[signal]) == 0;
    ThreadSignalStackGuard stack_guard;
    // Any file registered for removal makes LLVM install its handlers; none is ever written.
    const char* const never_created = "/nonexistent/manifold-llvm-signal-registration";
    llvm::sys::RemoveFileOnSignal(never_created);
    llvm::sys::DontRemoveFileOnSignal(never_created);
    for (int signal = 1; signal < NSIG; ++signal) {
      struct sigaction now {};
      if (known[signal] && sigaction(signal, nullptr, &now) == 0 &&
          !same_action(now, before[signal]))
        sigaction(signal, &before[signal], nullptr);
    }
  });
}

}  // namespace manifold::compiler
