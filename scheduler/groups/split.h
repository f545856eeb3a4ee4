// How one kernel launch on a device group becomes parts: ranges of its work-groups, one per
// member with a share, along one dimension. Members that work in one memory take any kernel (they
// are like the compute units of one device); members with memories of their own take parts only
// where the compiler proved what each part writes (compiler/footprint.h) and the parts' writes
// are disjoint: each part then reads what it needs on its member and leaves its writes current
// there. Anything else runs whole on one member.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "core/operations.h"
#include "scheduler/migration.h"

namespace manifold {

class GroupDevice;

struct KernelPart {
  size_t member = 0;
  compiler::NDRange range;
  size_t groups = 0;  // work-groups the part runs
  // Members with memories of their own: what the part needs moved to its member before it runs
  // (planned for every part first), then what it leaves current there.
  std::vector<RangeUse> reads, writes;
};

struct KernelSplit {
  std::vector<KernelPart> parts;
  // The parts carry their own uses (members of different memories); false: the launch's
  // migrations are planned once, for the whole operation, on the members' one memory.
  bool by_footprint = false;
  std::string why_whole;  // why the launch runs whole on one member (empty when it is split)
};

// `shares`: the balancer's fractions per member.
KernelSplit plan_kernel_split(const KernelOp& op, const GroupDevice& group,
                              std::span<const double> shares);

// The balancer's key of a launch: the kernel and the NDRange's shape.
std::string launch_key(const KernelOp& op);

}  // namespace manifold
