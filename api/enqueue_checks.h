// What the enqueued buffer and image commands (api/enqueue_buffer.cpp, api/enqueue_image.cpp)
// share: the queue and wait list a command goes to, the checks of its memory objects and host
// access, rect pitches and overlap, and the locations an operation reads and writes.
#pragma once

#include <vector>

#include "api/common.h"
#include "api/impl.h"
#include "api/memory_commands.h"
#include "core/memory.h"

namespace manifold::api::impl {

struct Target {
  CommandQueue& queue;
  std::vector<Event*> waits;
  void submit(MemoryCommand c, cl_event* event) {
    submit_command(Command::make(queue, c.type, std::move(c.op)), waits, event);
  }
};

Target prepare(cl_command_queue command_queue, cl_uint num_events, const cl_event* events);

// cl_arm_import_memory: CL_INVALID_OPERATION when an imported memory object is passed to the
// read, write, copy, fill, map and unmap commands of buffers and images (every caller of
// buffer_in and image_in, and clEnqueueUnmapMemObject).
void check_not_imported(const MemObject& m);

MemObject& buffer_in(CommandQueue& q, cl_mem mem);

// The range (offset, extent) lies inside [0, size), without overflow.
bool range_inside(size_t offset, size_t extent, size_t size);

// The spec: CL_INVALID_OPERATION if a read is called on a buffer created with
// CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS (and likewise for writes).
void check_host_reads(const MemObject& m);
void check_host_writes(const MemObject& m);

// Pitches of one side of a rect transfer, defaults applied and checked as the spec says.
struct Pitches {
  size_t row, slice;
};

// a * b, or CL_INVALID_VALUE when it does not fit in size_t (offsets must never wrap around).
size_t mul(size_t a, size_t b, const char* what);

// Appendix D of the spec ("Checking for Memory Copy Overlap"), for source and destination
// rectangles with the same pitches in one buffer. Offsets are linear byte offsets: only their
// positions modulo the pitches matter, as with (x, y, z) origins.
bool rect_copy_overlap(size_t src_start, size_t dst_start, const size_t* region, size_t row_pitch,
                       size_t slice_pitch);

Location at(MemObject& m, size_t offset);
Location host(const void* p);

}  // namespace manifold::api::impl
