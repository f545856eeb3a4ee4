#pragma once

#include "core/backend.h"

namespace manifold::hip {

// Every GPU the HIP runtime shows (AMD GPUs; NVIDIA GPUs where MANIFOLD_HIP_RUNTIME names a HIP
// over CUDA library). No runtime, no GPU: no devices (MANIFOLD_DEBUG says why).
class HipDriver final : public Driver {
 public:
  const char* name() const override { return "hip"; }
  std::vector<Device*> probe() override;
};

}  // namespace manifold::hip
