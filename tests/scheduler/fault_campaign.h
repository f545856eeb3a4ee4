// The scheduler's soak-and-fault campaign (fault_campaign_test.cpp runs it,
// fault_campaign_round.cpp makes and checks one round): what a round needs of the test's context,
// and what the campaign counts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fault_hooks.h"
#include "sched_test.h"

namespace schedtest {

// A device of the campaign's context and what may be asked of it.
struct CampaignDevice {
  cl_device_id id = nullptr;
  std::string name;
  bool computes = true;     // false: the simulated CUDA driver (its kernels compute nothing)
  bool null_cuda = false;   // launches and allocations can be failed (FaultHooks)
  bool level_zero = false;  // allocations can be failed, the device can be lost
  std::vector<int> queues;  // indices into CampaignEnv::queues
};

struct CampaignQueue {
  Queue queue;
  int device = 0;
  cl_command_queue_properties props = 0;
  bool in_order = true;
};

struct CampaignFigures {
  long rounds = 0;
  long commands = 0;         // commands enqueued (checks included)
  long user_failures = 0;    // user events set to a negative status
  long launch_faults = 0;    // launches the simulated CUDA driver refused
  long alloc_faults = 0;     // device allocations a test driver refused
  long device_losses = 0;    // devices lost
  long releases = 0;         // events, buffers and queues released while commands use them
  long kernel_releases = 0;  // kernels released right after their launch was enqueued
  uint64_t bytes_checked = 0;
  long faults() const {
    return user_failures + launch_faults + alloc_faults + device_losses + releases;
  }
};

// What every round shares: the context, its devices and queues (a round may release a queue and
// put a new one with the same properties in its place), the program and the fault controls.
struct CampaignEnv {
  cl_context context = nullptr;
  cl_program program = nullptr;
  std::vector<CampaignDevice> devices;
  std::vector<CampaignQueue> queues;
  FaultHooks hooks;
  CampaignFigures figures;
};

// Kernels of the campaign: mix and step compute (the sequential model repeats them), touch takes
// a buffer and leaves it as it is (what the simulated CUDA driver's kernels do anyway).
inline constexpr const char* kCampaignSource = R"CLC(
kernel void mix(global const uint* a, global const uint* b, global uint* out, uint salt, uint off) {
  uint i = (uint)get_global_id(0) + off;
  out[i] = a[i] * 2654435761u + (b[i] ^ salt) + i;
}
kernel void step(global uint* x, uint salt, uint off) {
  uint i = (uint)get_global_id(0) + off;
  x[i] = x[i] * 1664525u + salt;
}
kernel void touch(global uint* x, uint off) {
  uint i = (uint)get_global_id(0) + off;
  if (x[i] == 0x5eed5eedu && off == 0xffffffffu) x[i] = 0;
}
)CLC";

// Runs round `index` of the campaign of `seed`: a random DAG of about `commands` commands with
// faults, drained and checked (GoogleTest failures name the seed and the round). Every round
// draws from its own generator, so that `--seed=S --round=R` repeats round R alone.
void runCampaignRound(CampaignEnv& env, uint64_t seed, long index, int commands);

// Loses the Level Zero test driver's device (final: nothing of the process may use it again)
// while commands of it and of the other devices are in flight, and checks that its commands fail,
// the others complete, and the data the other devices hold stays right.
void runDeviceLoss(CampaignEnv& env, uint64_t seed);

}  // namespace schedtest
