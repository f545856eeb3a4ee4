# The NVPTX pipeline (CUDA devices): Manifold's shim compiled for nvptx64 at build time, and the
# three bitcode libraries a program may link embedded in manifold_compiler with .incbin, so a
# self-contained build needs no libclc or CUDA toolkit where it runs. libclc's nvptx library
# (libclc-22) and CUDA's libdevice are embedded when found here; otherwise the pipeline looks
# for them on disk at run time (libdevice: MANIFOLD_LIBDEVICE, $CUDA_PATH, /usr/local/cuda).
set(MANIFOLD_NVPTX_SHIM_BC ${CMAKE_CURRENT_BINARY_DIR}/nvptx_shim.bc)
add_custom_command(
  OUTPUT ${MANIFOLD_NVPTX_SHIM_BC}
  COMMAND ${MANIFOLD_CLANG} -cc1 -triple nvptx64-nvidia-cuda -target-feature +ptx60
          -emit-llvm-bc -x cl -cl-std=CL1.2 -O2 -fdeclare-opencl-builtins
          -finclude-default-header -internal-isystem ${MANIFOLD_CLANG_RESOURCE_DIR}/include
          "-cl-ext=-all,+cl_khr_fp64,+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics,+cl_khr_global_int32_base_atomics,+cl_khr_global_int32_extended_atomics,+cl_khr_local_int32_base_atomics,+cl_khr_local_int32_extended_atomics"
          -I ${CMAKE_CURRENT_SOURCE_DIR}/builtins
          ${CMAKE_CURRENT_SOURCE_DIR}/nvptx/shim.cl -o ${MANIFOLD_NVPTX_SHIM_BC}
  DEPENDS nvptx/shim.cl builtins/common.h builtins/saturating_fp_conversions.h
  COMMENT "Compiling the NVPTX builtin shim"
  VERBATIM)
# OpenCL C 3.0 builtins compiled for nvptx64 and linked after the shim, before libclc: portable
# parts of the CPU builtin library (the C11-style atomics of every type and address space, which
# libclc mostly lacks; vstore_half with every rounding mode, where libclc rounds doubles through
# float; get_fence; the images, which libclc lacks: image.cl's software path over
# compiler/image_abi.h's descriptors; every builtin of half, which libclc lacks) and the NVPTX's
# own (nvptx/*.cl: the generic address space, collectives, the sub-group functions over warp
# instructions, PTX 6.2 for activemask).
set(MANIFOLD_NVPTX_PORTABLE_SOURCES builtins/atomics.cl builtins/vstore_half.cl
    builtins/address_space.cl builtins/image.cl builtins/half.cl nvptx/generic_address_space.cl
    nvptx/collectives.cl nvptx/subgroups.cl)
set(nvptx_portable_parts)
foreach(source ${MANIFOLD_NVPTX_PORTABLE_SOURCES})
  get_filename_component(stem ${source} NAME_WE)
  set(part ${CMAKE_CURRENT_BINARY_DIR}/nvptx_${stem}.bc)
  add_custom_command(
    OUTPUT ${part}
    COMMAND ${MANIFOLD_CLANG} -cc1 -triple nvptx64-nvidia-cuda -target-feature +ptx62
            -emit-llvm-bc -x cl -cl-std=CL3.0 -O2 -fno-builtin -fdeclare-opencl-builtins
            -internal-isystem ${MANIFOLD_CLANG_RESOURCE_DIR}/include -include opencl-c-base.h
            "-cl-ext=-all,+cl_khr_fp64,+__opencl_c_fp64,+cl_khr_fp16,+__opencl_c_generic_address_space,+__opencl_c_program_scope_global_variables,+__opencl_c_atomic_order_acq_rel,+__opencl_c_atomic_order_seq_cst,+__opencl_c_atomic_scope_device,+__opencl_c_atomic_scope_all_devices,+__opencl_c_int64,+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics,+cl_khr_global_int32_base_atomics,+cl_khr_global_int32_extended_atomics,+cl_khr_local_int32_base_atomics,+cl_khr_local_int32_extended_atomics,+__opencl_c_images,+__opencl_c_read_write_images,+__opencl_c_3d_image_writes,+cl_khr_3d_image_writes,+cl_khr_depth_images"
            -I ${CMAKE_CURRENT_SOURCE_DIR}/builtins
            ${CMAKE_CURRENT_SOURCE_DIR}/${source} -o ${part}
    DEPENDS ${source} builtins/common.h builtins/half_rounding.h builtins/image_texels.h image_abi.h
    COMMENT "Compiling ${source} for NVPTX"
    VERBATIM)
  list(APPEND nvptx_portable_parts ${part})
endforeach()
# image.cl's glue (builtins/image_glue.ll, hand-written IR) for nvptx64: the same functions, with
# NVPTX's triple and data layout (clang's for nvptx64) and a sampler in NVPTX's constant address
# space (4; 2 in x86-64's fake map).
file(READ ${CMAKE_CURRENT_SOURCE_DIR}/builtins/image_glue.ll nvptx_image_glue)
string(REGEX REPLACE "target datalayout = \"[^\"]*\""
                     "target datalayout = \"e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64\""
                     nvptx_image_glue "${nvptx_image_glue}")
string(REGEX REPLACE "target triple = \"[^\"]*\"" "target triple = \"nvptx64-nvidia-cuda\""
                     nvptx_image_glue "${nvptx_image_glue}")
string(REPLACE "addrspace(2)" "addrspace(4)" nvptx_image_glue "${nvptx_image_glue}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/nvptx_image_glue.ll.new "${nvptx_image_glue}")
configure_file(${CMAKE_CURRENT_BINARY_DIR}/nvptx_image_glue.ll.new
               ${CMAKE_CURRENT_BINARY_DIR}/nvptx_image_glue.ll COPYONLY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS builtins/image_glue.ll)
list(APPEND nvptx_portable_parts ${CMAKE_CURRENT_BINARY_DIR}/nvptx_image_glue.ll)
set(MANIFOLD_NVPTX_PORTABLE_BC ${CMAKE_CURRENT_BINARY_DIR}/nvptx_portable.bc)
add_custom_command(
  OUTPUT ${MANIFOLD_NVPTX_PORTABLE_BC}
  COMMAND ${MANIFOLD_LLVM_LINK} ${nvptx_portable_parts} -o ${MANIFOLD_NVPTX_PORTABLE_BC}
  DEPENDS ${nvptx_portable_parts}
  COMMENT "Linking the portable builtins for NVPTX"
  VERBATIM)
add_custom_target(manifold_nvptx_shim DEPENDS ${MANIFOLD_NVPTX_SHIM_BC} ${MANIFOLD_NVPTX_PORTABLE_BC})

find_file(MANIFOLD_LIBCLC_NVPTX nvptx64--nvidiacl.bc PATHS /usr/lib/clc /usr/share/clc
          ${MANIFOLD_LLVM_ROOT}/lib/clc NO_DEFAULT_PATH)
set(MANIFOLD_LIBDEVICE_BC "")
if(MANIFOLD_CUDA_ROOT AND EXISTS ${MANIFOLD_CUDA_ROOT}/nvvm/libdevice/libdevice.10.bc)
  set(MANIFOLD_LIBDEVICE_BC ${MANIFOLD_CUDA_ROOT}/nvvm/libdevice/libdevice.10.bc)
endif()
option(MANIFOLD_EMBED_NVPTX_LIBRARIES
       "Embed libclc's nvptx library and CUDA's libdevice into the compiler" ON)
# Packages leave libdevice out (NVIDIA's licence, not the project's): CUDA's own copy is found at
# run time on every machine with the toolkit.
option(MANIFOLD_EMBED_LIBDEVICE "Embed CUDA's libdevice (with MANIFOLD_EMBED_NVPTX_LIBRARIES)" ON)

# One blob: `name` and `name_size` (0 and an empty blob when the file is absent). Pass GENERATED
# for a file the build makes: it does not exist yet when a fresh build tree is configured.
function(manifold_incbin out name file)
  if(file AND (EXISTS "${file}" OR "${ARGN}" STREQUAL "GENERATED"))
    set(body "\".globl ${name}\\n.hidden ${name}\\n${name}:\\n.incbin \\\"${file}\\\"\\n${name}_end:\\n.balign 8\\n\"\n        \".globl ${name}_size\\n.hidden ${name}_size\\n${name}_size:\\n.quad ${name}_end - ${name}\\n\"\n")
  else()
    set(body "\".globl ${name}\\n.hidden ${name}\\n${name}:\\n.byte 0\\n.balign 8\\n\"\n        \".globl ${name}_size\\n.hidden ${name}_size\\n${name}_size:\\n.quad 0\\n\"\n")
  endif()
  set(${out} "${${out}}        \".balign 16\\n\"\n        ${body}" PARENT_SCOPE)
endfunction()
set(MANIFOLD_NVPTX_ASM "")
manifold_incbin(MANIFOLD_NVPTX_ASM manifold_nvptx_shim_bitcode ${MANIFOLD_NVPTX_SHIM_BC} GENERATED)
# Split like libclc below: every build parsed the whole library's declarations, thousands since
# it has the half builtins.
manifold_split_library(manifold_nvptx_portable_split ${MANIFOLD_NVPTX_PORTABLE_BC}
                       nvptx_portable_split 16)
set(portable_split ${CMAKE_CURRENT_BINARY_DIR}/nvptx_portable_split.bc)
set(portable_index ${CMAKE_CURRENT_BINARY_DIR}/nvptx_portable_split.index)
manifold_incbin(MANIFOLD_NVPTX_ASM manifold_nvptx_portable_bitcode ${portable_split} GENERATED)
manifold_incbin(MANIFOLD_NVPTX_ASM manifold_nvptx_portable_index ${portable_index} GENERATED)
set(embedded_libclc "")
set(embedded_libdevice "")
if(MANIFOLD_EMBED_NVPTX_LIBRARIES)
  set(embedded_libclc "${MANIFOLD_LIBCLC_NVPTX}")
  if(MANIFOLD_EMBED_LIBDEVICE)
    set(embedded_libdevice "${MANIFOLD_LIBDEVICE_BC}")
  endif()
endif()
# An embedded libclc is split into parts with a symbol index, as the CPU builtin library is
# (compiler/builtins/split_library.cmake): a build then parses only the parts it links, where
# reading the whole library's declarations was most of every NVPTX build's linking time.
set(embedded_libclc_index "")
if(embedded_libclc)
  manifold_split_library(manifold_nvptx_libclc_split ${embedded_libclc} nvptx_libclc_split 64)
  set(libclc_split ${CMAKE_CURRENT_BINARY_DIR}/nvptx_libclc_split.bc)
  set(embedded_libclc_index ${CMAKE_CURRENT_BINARY_DIR}/nvptx_libclc_split.index)
  manifold_incbin(MANIFOLD_NVPTX_ASM manifold_nvptx_libclc_bitcode ${libclc_split} GENERATED)
  manifold_incbin(MANIFOLD_NVPTX_ASM manifold_nvptx_libclc_index ${embedded_libclc_index}
                  GENERATED)
else()
  manifold_incbin(MANIFOLD_NVPTX_ASM manifold_nvptx_libclc_bitcode "")
  manifold_incbin(MANIFOLD_NVPTX_ASM manifold_nvptx_libclc_index "")
endif()
manifold_incbin(MANIFOLD_NVPTX_ASM manifold_nvptx_libdevice_bitcode "${embedded_libdevice}")
# clang's OpenCL base header, for a self-contained build running where no clang is installed
# (the frontend serves it from memory when the file is absent).
manifold_incbin(MANIFOLD_NVPTX_ASM manifold_opencl_c_base_header
                ${MANIFOLD_CLANG_RESOURCE_DIR}/include/opencl-c-base.h)
set(MANIFOLD_NVPTX_EMBED ${CMAKE_CURRENT_BINARY_DIR}/nvptx_embed.cpp)
file(CONFIGURE OUTPUT ${MANIFOLD_NVPTX_EMBED} CONTENT
     "// Generated by compiler/nvptx/nvptx.cmake: embeds the NVPTX bitcode libraries.\n__asm__(\".section .rodata\\n\"\n${MANIFOLD_NVPTX_ASM}        \".previous\\n\");\n"
     @ONLY)
set(nvptx_embed_depends ${MANIFOLD_NVPTX_SHIM_BC} ${portable_split} ${portable_index})
foreach(f ${embedded_libclc} ${libclc_split} ${embedded_libclc_index} ${embedded_libdevice})
  if(f)
    list(APPEND nvptx_embed_depends ${f})
  endif()
endforeach()
set_source_files_properties(${MANIFOLD_NVPTX_EMBED} PROPERTIES OBJECT_DEPENDS
                                                               "${nvptx_embed_depends}")
target_sources(manifold_compiler PRIVATE nvptx_pipeline.cpp nvptx_target.cpp nvptx_address_spaces.cpp
  nvptx_printf.cpp nvptx_atomics.cpp nvptx_warp_atomics.cpp nvptx_math.cpp nvptx_unroll.cpp
  nvptx_narrow_integers.cpp
  ${MANIFOLD_NVPTX_EMBED})
add_dependencies(manifold_compiler manifold_nvptx_shim manifold_nvptx_portable_split)
if(embedded_libclc)
  add_dependencies(manifold_compiler manifold_nvptx_libclc_split)
endif()
message(STATUS "Manifold: NVPTX pipeline (libclc: ${MANIFOLD_LIBCLC_NVPTX}, libdevice: "
               "${MANIFOLD_LIBDEVICE_BC})")
