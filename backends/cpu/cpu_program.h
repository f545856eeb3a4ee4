#pragma once

#include <memory>

#include "compiler/compiler.h"
#include "core/backend.h"

namespace manifold::cpu {

// A program JIT-compiled for the host CPU.
class CpuProgram final : public LoadedProgram {
 public:
  explicit CpuProgram(std::unique_ptr<compiler::CpuExecutable> exe) : exe_(std::move(exe)) {}
  const compiler::CpuExecutable& executable() const { return *exe_; }

 private:
  std::unique_ptr<compiler::CpuExecutable> exe_;
};

}  // namespace manifold::cpu
