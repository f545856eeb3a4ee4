#pragma once

#include "core/backend.h"
#include "core/device.h"

namespace manifold::cpu {

// The host CPU is always there: Manifold's embedded default device.
class CpuDriver final : public Driver {
 public:
  const char* name() const override { return "cpu"; }
  std::vector<Device*> probe() override;
};

// MANIFOLD_EMULATED_GPUS=N: N more CPU devices with memory of their own (tests, CI). Listed after
// every real GPU, so that "the first GPU" is a real one wherever there is one.
class EmulatedGpuDriver final : public Driver {
 public:
  const char* name() const override { return "emulated-gpu"; }
  std::vector<Device*> probe() override;
};

}  // namespace manifold::cpu
