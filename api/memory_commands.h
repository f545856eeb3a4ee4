// The memory commands that both an enqueue (api/enqueue_buffer.cpp, api/enqueue_image.cpp,
// api/svm.cpp) and a command-buffer recording (api/command_record.cpp) make: each checks its
// arguments against `queue` (context, device limits) with the spec's errors of the clEnqueue*
// function and returns the operation.
#pragma once

#include "core/operations.h"
#include "core/queue.h"

namespace manifold::api::impl {

struct MemoryCommand {
  cl_command_type type;
  Operation op;
};

MemoryCommand copy_buffer_command(CommandQueue& queue, cl_mem src_buffer, cl_mem dst_buffer,
                                  size_t src_offset, size_t dst_offset, size_t size);
MemoryCommand copy_buffer_rect_command(CommandQueue& queue, cl_mem src_buffer, cl_mem dst_buffer,
                                       const size_t* src_origin, const size_t* dst_origin,
                                       const size_t* region, size_t src_row_pitch,
                                       size_t src_slice_pitch, size_t dst_row_pitch,
                                       size_t dst_slice_pitch);
MemoryCommand fill_buffer_command(CommandQueue& queue, cl_mem buffer, const void* pattern,
                                  size_t pattern_size, size_t offset, size_t size);
MemoryCommand fill_image_command(CommandQueue& queue, cl_mem image, const void* fill_color,
                                 const size_t* origin, const size_t* region);
MemoryCommand copy_image_command(CommandQueue& queue, cl_mem src_image, cl_mem dst_image,
                                 const size_t* src_origin, const size_t* dst_origin,
                                 const size_t* region);
MemoryCommand copy_image_to_buffer_command(CommandQueue& queue, cl_mem src_image, cl_mem dst_buffer,
                                           const size_t* src_origin, const size_t* region,
                                           size_t dst_offset);
// SVM (api/svm.cpp): the queue's device must support SVM.
MemoryCommand svm_memcpy_command(CommandQueue& queue, void* dst_ptr, const void* src_ptr,
                                 size_t size);
MemoryCommand svm_fill_command(CommandQueue& queue, void* svm_ptr, const void* pattern,
                               size_t pattern_size, size_t size);
MemoryCommand copy_buffer_to_image_command(CommandQueue& queue, cl_mem src_buffer, cl_mem dst_image,
                                           size_t src_offset, const size_t* dst_origin,
                                           const size_t* region);

}  // namespace manifold::api::impl
