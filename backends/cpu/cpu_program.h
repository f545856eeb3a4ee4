#pragma once

#include <memory>

#include "backends/cpu/cpu_executable.h"
#include "core/backend.h"

namespace manifold::cpu {

// A program JIT-compiled for the host CPU.
class CpuProgram final : public LoadedProgram {
 public:
  explicit CpuProgram(std::unique_ptr<CpuExecutable> exe) : exe_(std::move(exe)) {}
  const CpuExecutable& executable() const { return *exe_; }

 private:
  std::unique_ptr<CpuExecutable> exe_;
};

}  // namespace manifold::cpu
