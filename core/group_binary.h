// The program binary of a device group whose members need different binaries (a CPU beside a
// GPU): one container holding each member's binary, so that CL_PROGRAM_BINARIES of a group can
// be given back to clCreateProgramWithBinary for the same group. Members with equal binaries (the
// CPU's sub-devices, GPUs of one kind) share one entry; a group whose members all have the same
// binary keeps that plain binary instead.
//
//   char   magic[8] = "MNFDGRP1"
//   uint32 member count M, uint32 entry count E
//   uint32 entry index of each member (M of them)
//   E times: uint64 size, then that many bytes (a Manifold program binary)
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace manifold {

// Whether `binary` starts as a group's container (a damaged one included).
bool is_group_binary(std::span<const uint8_t> binary);

// Each member's binary in one container; the plain binary when every member's is the same.
std::vector<uint8_t> bundle_member_binaries(const std::vector<std::vector<uint8_t>>& members);

// Each member's binary from a container, or nullopt with *error where it is malformed.
std::optional<std::vector<std::vector<uint8_t>>> unbundle_member_binaries(
    std::span<const uint8_t> binary, std::string* error);

}  // namespace manifold
