// How an image and a sampler reach a kernel on every device with images (the CPU and its
// emulated GPUs, CUDA). Shared by the runtime (C++, core/image.cpp, backends/cpu,
// backends/gpu_driver) and Manifold's builtin library (OpenCL C, compiler/builtins/image.cl, for
// the CPU and for NVPTX), so the two sides cannot drift apart.
//
// An image kernel argument is a pointer to a ManifoldImage that stays valid while the kernel runs:
// on the CPU on the host, on a GPU in the GPU's memory (made when the image is first used there).
// A sampler kernel argument, and the value `__translate_sampler_initializer` returns for a sampler
// declared in the source, is a pointer-sized integer holding the CLK_* bits of opencl-c-base.h:
//   CLK_NORMALIZED_COORDS_TRUE (1) | CLK_ADDRESS_* (0, 2, 4, 6, 8) | CLK_FILTER_* (0x10, 0x20).
#pragma once

#ifdef __OPENCL_C_VERSION__
typedef uint manifold_u32;
typedef ulong manifold_u64;
#else
#include <cstdint>
typedef std::uint32_t manifold_u32;
typedef std::uint64_t manifold_u64;
#endif

typedef struct ManifoldImage {
  manifold_u64 data;       // address of pixel (0, 0, 0) in device memory
  manifold_u64 row_pitch;  // bytes from one row to the next
  manifold_u64
      slice_pitch;      // bytes from one 2D slice (3D) or array layer (1D/2D arrays) to the next
  manifold_u32 width;   // pixels
  manifold_u32 height;  // rows; 1 for 1D images and 1D arrays
  manifold_u32 depth;   // slices; 1 unless 3D
  manifold_u32 array_size;         // layers of a 1D/2D array; 1 otherwise
  manifold_u32 image_type;         // CL_MEM_OBJECT_IMAGE1D ... CL_MEM_OBJECT_IMAGE1D_BUFFER
  manifold_u32 channel_order;      // CL_R, CL_RGBA, ... (as get_image_channel_order returns)
  manifold_u32 channel_data_type;  // CL_UNORM_INT8, CL_FLOAT, ...
  manifold_u32 element_size;       // bytes per pixel
  manifold_u32 num_channels;       // components stored per pixel
  manifold_u32 reserved[3];
} ManifoldImage;

// Sampler bits (the values opencl-c-base.h gives the CLK_* macros).
#define MANIFOLD_SAMPLER_NORMALIZED_COORDS 0x1
#define MANIFOLD_SAMPLER_ADDRESS_MASK 0xE
#define MANIFOLD_SAMPLER_FILTER_MASK 0x30
