#pragma once

#include <cstdint>
#include <vector>

#include "core/context.h"
#include "core/object.h"

namespace manifold {

class Sampler : public ApiObject<_cl_sampler, ObjectKind::Sampler, CL_INVALID_SAMPLER> {
 public:
  Sampler(Ref<Context> context, bool normalized, cl_addressing_mode addressing,
          cl_filter_mode filter, std::vector<cl_sampler_properties> properties)
      : context_(std::move(context)),
        normalized_(normalized),
        addressing_(addressing),
        filter_(filter),
        properties_(std::move(properties)) {}

  Context& context() const { return *context_; }
  bool normalized_coords() const { return normalized_; }
  cl_addressing_mode addressing_mode() const { return addressing_; }
  cl_filter_mode filter_mode() const { return filter_; }
  const std::vector<cl_sampler_properties>& properties() const { return properties_; }
  // The CLK_* bits a kernel receives for this sampler (compiler/image_abi.h): normalized
  // coordinates 1, CLK_ADDRESS_NONE..MIRRORED_REPEAT 0, 2, 4, 6, 8, CLK_FILTER_NEAREST 0x10,
  // CLK_FILTER_LINEAR 0x20.
  uintptr_t kernel_bits() const {
    return (normalized_ ? 1u : 0u) | ((addressing_ - CL_ADDRESS_NONE) << 1) |
           (0x10u << (filter_ - CL_FILTER_NEAREST));
  }

 private:
  Ref<Context> context_;
  bool normalized_;
  cl_addressing_mode addressing_;
  cl_filter_mode filter_;
  std::vector<cl_sampler_properties> properties_;
};

}  // namespace manifold
