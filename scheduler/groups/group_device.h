// A device group: one device of the platform whose members are physical devices or sub-devices.
// Its queues run each kernel as parts of its work-groups on the members at once
// (group_queue.h); everything else runs on one member. Made from MANIFOLD_DEVICE_GROUPS at
// start-up, or by the application (clCreateDeviceGroupMFLD).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/compiler.h"
#include "core/device.h"

namespace manifold {

class Balancer;

class GroupDevice final : public Device {
 public:
  // `shares`: fixed fractions of each kernel's work-groups per member (empty: learned).
  GroupDevice(std::vector<Ref<Device>> members, std::vector<double> shares, bool application_made);
  ~GroupDevice() override;

  const char* backend_name() const override { return "group"; }
  const compiler::Target& compiler_target() const override { return target_; }
  std::shared_ptr<const LoadedProgram> load_program(std::span<const uint8_t> binary,
                                                    std::string* error) override;
  bool shares_host_memory() const override;
  // A group splits whole NDRanges itself; a part given to it would be split as if whole.
  bool runs_partial_ranges() const override { return false; }

  // The member that runs what is not split (copies, fills, maps, whole kernels): the first one
  // that works in host memory when the operation is about host memory, else the first member.
  size_t member_for_host_work() const;
  Balancer& balancer() const { return *balancer_; }

 private:
  std::shared_ptr<NativeQueue> create_native_queue_impl(bool out_of_order) override;

  compiler::Target target_;
  std::unique_ptr<Balancer> balancer_;
};

// The groups that `spec` (MANIFOLD_DEVICE_GROUPS) describes over the platform's `devices`;
// a group that cannot be made is left out, and the debug log says why.
std::vector<Device*> make_groups_from_spec(std::string_view spec, std::span<Device* const> devices);

// The group the application asked for: `members` (at least one, no device twice, none a group),
// `shares` one per member or empty. Throws CL_INVALID_DEVICE / CL_INVALID_VALUE.
GroupDevice* make_application_group(std::vector<Device*> members, std::vector<double> shares);

}  // namespace manifold
