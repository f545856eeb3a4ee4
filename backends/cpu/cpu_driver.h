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

}  // namespace manifold::cpu
