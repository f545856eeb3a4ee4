// Memory migration between devices: before a command runs, each buffer it uses must be current
// where its device works (host memory for the CPU, the GPU's memory for a GPU). The scheduler
// plans the moves when the command is submitted to its native queue (for an in-order queue in
// that queue's order; an out-of-order queue's unordered commands in any order), and
// records where the command's writes leave the current bytes; the backend carries them out in the
// queue, before the operation.
//
// A copy a command makes is in flight until the command completes: commands of other queues that
// do not follow it make their own copy (the same bytes) rather than read a half-made one. Only the
// later commands of the same in-order queue rely on it at once: they enter the native queue after
// it. Those of an out-of-order queue make their own too: two unordered ones are planned and put
// into the shared native queue by different threads, and the one planned second may enter it
// first and read the place before the copy lands (its bytes of an older version). The two
// copies write identical bytes; host-side copies of one buffer hold its copy lock
// (MemObject::copy_mutex), so they never overlap each other or another host-side copy.
//
// Why submission time is right: a command is submitted only after everything it depends on has
// completed (another queue) or entered the same native queue ahead of it. A correct OpenCL program
// orders every command that writes a buffer before the commands that use it, so when a command is
// submitted, the residency already reflects all the writes it may see.
#pragma once

#include <span>
#include <vector>

#include "core/memory.h"
#include "core/operations.h"

namespace manifold {

class Device;

// How a command uses an operand's bytes.
enum class Access {
  Read,       // needs the current bytes, changes nothing
  Overwrite,  // writes every byte of the range: the old bytes are not needed
  Update,     // may read and write (a kernel argument that is not read-only, a rectangle)
};

// The transfers `op` needs before it runs on `device`, and the residency after it (its writes
// make its device's copy the only current one). `queue` is the in-order native queue the command
// goes to where its commands are planned in the order they enter it (null otherwise: commands
// that run unordered, or an out-of-order queue's) and `event` the command's: until it completes,
// the copies it makes serve only later commands of that queue. Thread: whichever thread submits
// the command.
std::vector<Transfer> plan_migrations(Operation& op, const Device& device, const void* queue,
                                      Event& event);

// One byte range of a buffer that a part of a device group's launch uses (scheduler/groups).
struct RangeUse {
  MemObject* mem;
  size_t offset, size;
  Access access;
};
// The transfers `uses` need on `device`, and the residency after them, as plan_migrations does
// for a whole operation; the copies serve only commands that follow `event`.
std::vector<Transfer> plan_range_uses(std::span<const RangeUse> uses, const Device& device,
                                      Event& event);

// Makes the memory of every buffer `op` uses on `device` (Device::make_backing), before
// plan_migrations: a failed allocation throws (CL_MEM_OBJECT_ALLOCATION_FAILURE) while the
// residency is as it was. Images are left to the operation (a backend may hold them apart).
void make_backings(Operation& op, Device& device, Event& event);

}  // namespace manifold
