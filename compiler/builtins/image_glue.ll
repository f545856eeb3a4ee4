; Glue between OpenCL C's opaque image and sampler types and compiler/image_abi.h, for image.cl.
; On x86-64 with clang's fake address-space map an image value is a `ptr addrspace(1)` (here: to
; its ManifoldImage) and a sampler value a `ptr addrspace(2)` whose integer value is the CLK_*
; bits; OpenCL C cannot convert either, so these identities are written in IR. All are inlined.
; NVPTX's copy is made from this file (compiler/nvptx/nvptx.cmake): its triple, and addrspace(4)
; wherever this file says addrspace(2), which must stay the sampler's address space only.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; __manifold_image(<access> <image type>): the image's descriptor.
define ptr addrspace(1) @_Z16__manifold_image14ocl_image1d_ro(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image14ocl_image1d_wo(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image14ocl_image1d_rw(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image21ocl_image1d_buffer_ro(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image21ocl_image1d_buffer_wo(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image21ocl_image1d_buffer_rw(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image20ocl_image1d_array_ro(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image20ocl_image1d_array_wo(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image20ocl_image1d_array_rw(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image14ocl_image2d_ro(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image14ocl_image2d_wo(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image14ocl_image2d_rw(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image20ocl_image2d_array_ro(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image20ocl_image2d_array_wo(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image20ocl_image2d_array_rw(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image14ocl_image3d_ro(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image14ocl_image3d_wo(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image14ocl_image3d_rw(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image20ocl_image2d_depth_ro(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image20ocl_image2d_depth_wo(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image20ocl_image2d_depth_rw(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image26ocl_image2d_array_depth_ro(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image26ocl_image2d_array_depth_wo(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}
define ptr addrspace(1) @_Z16__manifold_image26ocl_image2d_array_depth_rw(ptr addrspace(1) %image) #0 {
  ret ptr addrspace(1) %image
}

; __manifold_sampler(sampler_t): the CLK_* bits.
define i32 @_Z18__manifold_sampler11ocl_sampler(ptr addrspace(2) %sampler) #0 {
  %bits = ptrtoint ptr addrspace(2) %sampler to i32
  ret i32 %bits
}

; What clang calls for a sampler declared in the source (`const sampler_t s = CLK_...`): the
; sampler value whose integer value is the bits, like a sampler kernel argument's.
define ptr addrspace(2) @__translate_sampler_initializer(i32 %bits) #0 {
  %wide = zext i32 %bits to i64
  %sampler = inttoptr i64 %wide to ptr addrspace(2)
  ret ptr addrspace(2) %sampler
}

; Descriptor fields, by byte offset. The descriptor does not change while a kernel runs:
; invariant loads, so they leave the work-item loops even past image writes.
define i32 @__manifold_image_u32(ptr addrspace(1) %image, i32 %offset) #0 {
  %wide = zext i32 %offset to i64
  %field = getelementptr inbounds i8, ptr addrspace(1) %image, i64 %wide
  %value = load i32, ptr addrspace(1) %field, align 4, !invariant.load !0
  ret i32 %value
}

define i64 @__manifold_image_u64(ptr addrspace(1) %image, i32 %offset) #0 {
  %wide = zext i32 %offset to i64
  %field = getelementptr inbounds i8, ptr addrspace(1) %image, i64 %wide
  %value = load i64, ptr addrspace(1) %field, align 8, !invariant.load !0
  ret i64 %value
}

attributes #0 = { alwaysinline nounwind willreturn }

!0 = !{}
