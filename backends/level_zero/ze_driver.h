#pragma once

#include "core/backend.h"

namespace manifold::level_zero {

// Every GPU the Level Zero loader (libze_loader.so.1) shows. No loader, no driver (zeInit
// fails), no GPU: no devices, and MANIFOLD_DEBUG says why.
class LevelZeroDriver final : public Driver {
 public:
  const char* name() const override { return "level_zero"; }
  std::vector<Device*> probe() override;
};

}  // namespace manifold::level_zero
