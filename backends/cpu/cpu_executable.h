// The host CPU's executor: loads an executable binary of the CPU pipeline (compiler/
// cpu_pipeline.cpp) into this process with ORC LLJIT and runs a kernel's work-groups over TBB.
//
// Thread safety: a CpuExecutable is immutable after load() and may be shared between threads;
// run may be called from several threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/binary_format.h"
#include "compiler/compiler.h"
#include "compiler/printf_buffer.h"

namespace manifold::cpu {

// Groups of a few work-items cannot fill a vector of work-items, and each one costs a call.
// A kernel whose results do not depend on the division into groups (compiler/binary_format.h,
// KernelExec::partition_independent) then runs in groups along x of this many items instead
// (0: keep the application's groups): large enough for the vectorized work-item loop or the
// item loop's work-items in lockstep (at least as many as it runs at once), small enough to
// leave several groups per thread. Kernels that run one work-item at a time anyway
// (item_loop_preferred without lockstep) keep their groups: larger ones would only balance
// worse.
size_t regrouped_local_size(const compiler::KernelExec& exec, const compiler::NDRange& range);

class CpuExecutable {
 public:
  // JIT-compiles an Executable binary for the host CPU. nullptr (with *error) when the binary
  // is corrupt, truncated, not an executable, or built for another target.
  static std::unique_ptr<CpuExecutable> load(std::span<const uint8_t> binary,
                                             const compiler::Target&, std::string* error);
  ~CpuExecutable();

  const compiler::KernelInfo* find(std::string_view name) const;
  const std::vector<compiler::KernelInfo>& kernels() const;

  // Runs the work-groups of one launch (all of the NDRange, or the sub-range it selects),
  // spreading them over cores with tbb::parallel_for (the caller already runs inside its
  // tbb::task_arena). Thread-safe; several runs may overlap.
  // arg_values[i]: pointer to the argument's bytes (for Buffer args: pointer to the void*
  // device address; NULL buffer = pointer to nullptr). local_sizes[i]: bytes for Local args
  // (ignored for the others). printf output goes to `printf_buffer` where given, else to
  // stdout, flushed before return.
  // An unknown kernel name does nothing (callers validate with find()).
  void run(std::string_view kernel, const compiler::NDRange&, const void* const* arg_values,
           const size_t* local_sizes, compiler::PrintfBuffer* printf_buffer = nullptr) const;

  class Impl;

 private:
  explicit CpuExecutable(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace manifold::cpu
