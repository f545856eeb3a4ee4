// LLVM's signal handling, kept out of the application's process state. LLVM installs handlers
// for fatal and interrupt signals, and an alternate signal stack on the calling thread, the first
// time anything registers a file to remove on a crash (lld's output file does). Inside an ICD
// those belong to the application: its own handlers and its threads' signal stacks (a sanitizer
// runtime's among them, which unmaps the stack it believes it installed when the thread exits).
#pragma once

#include <signal.h>

namespace manifold::compiler {

// Lets LLVM register its handlers once, on the calling thread, then puts back every signal
// action and the thread's alternate stack as they were. LLVM then believes its handlers are in
// place and never installs them again. Idempotent; initialize_llvm() calls it.
void keep_llvm_signal_handling_out();

// Restores the calling thread's alternate signal stack on destruction if LLVM code run inside
// the scope replaced it (a second line of defence around calls that register files).
class ThreadSignalStackGuard {
 public:
  ThreadSignalStackGuard();
  ~ThreadSignalStackGuard();
  ThreadSignalStackGuard(const ThreadSignalStackGuard&) = delete;
  ThreadSignalStackGuard& operator=(const ThreadSignalStackGuard&) = delete;

 private:
  stack_t saved_{};
  bool have_saved_ = false;
};

}  // namespace manifold::compiler
