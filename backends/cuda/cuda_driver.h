#pragma once

#include "core/backend.h"

namespace manifold::cuda {

// Every NVIDIA GPU the CUDA driver shows. No driver, no GPU: no devices (MANIFOLD_DEBUG says why).
class CudaDriver final : public Driver {
 public:
  const char* name() const override { return "cuda"; }
  std::vector<Device*> probe() override;
};

}  // namespace manifold::cuda
