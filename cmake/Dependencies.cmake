# Finds every dependency; a missing one stops configure with the Debian package to install.
# scripts/setup-debian.sh installs all of them.
include(FindPkgConfig)

macro(manifold_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "Manifold needs ${what}: install the Debian package '${package}' "
                        "(or run scripts/setup-debian.sh as root).")
  endif()
endmacro()

find_package(Threads REQUIRED)

find_path(OPENCL_HEADERS CL/cl.h)
find_path(OPENCL_ICD_HEADER CL/cl_icd.h)
manifold_require(OPENCL_ICD_HEADER "the Khronos OpenCL headers" "opencl-c-headers")

find_package(TBB CONFIG QUIET)
manifold_require(TBB_FOUND "oneTBB" "libtbb-dev")

pkg_check_modules(HWLOC QUIET IMPORTED_TARGET hwloc)
manifold_require(HWLOC_FOUND "hwloc" "libhwloc-dev")

pkg_check_modules(SLEEF QUIET IMPORTED_TARGET sleef)
manifold_require(SLEEF_FOUND "SLEEF" "libsleef-dev")

set(MANIFOLD_LLVM_ROOT /usr/lib/llvm-22 CACHE PATH "LLVM 22 installation prefix")
# LLVM's version file accepts only an exact major.minor, so check the major version here.
find_package(LLVM CONFIG QUIET PATHS ${MANIFOLD_LLVM_ROOT}/lib/cmake/llvm NO_DEFAULT_PATH)
if(LLVM_FOUND AND NOT LLVM_VERSION_MAJOR EQUAL 22)
  set(LLVM_FOUND OFF)
endif()
manifold_require(LLVM_FOUND "LLVM 22" "llvm-22-dev")
find_package(Clang CONFIG QUIET PATHS ${MANIFOLD_LLVM_ROOT}/lib/cmake/clang NO_DEFAULT_PATH)
manifold_require(Clang_FOUND "Clang 22" "libclang-22-dev")
set(MANIFOLD_CLANG_RESOURCE_DIR ${MANIFOLD_LLVM_ROOT}/lib/clang/${LLVM_VERSION_MAJOR})
if(NOT EXISTS ${MANIFOLD_CLANG_RESOURCE_DIR}/include/opencl-c-base.h)
  message(FATAL_ERROR "clang's OpenCL headers are missing: install the Debian package 'libclang-common-22-dev'")
endif()

find_program(OCL_ICD_LOADER_CONFIG NAMES clinfo)
find_library(OPENCL_LOADER OpenCL)
manifold_require(OPENCL_LOADER "the OpenCL ICD loader" "ocl-icd-opencl-dev")

if(MANIFOLD_BUILD_TESTS)
  find_package(GTest CONFIG QUIET)
  manifold_require(GTest_FOUND "GoogleTest" "libgtest-dev")
endif()

# The CUDA toolkit is optional: without it everything else builds.
set(MANIFOLD_CUDA_ROOT "" CACHE PATH "CUDA toolkit root")
if(NOT MANIFOLD_CUDA_ROOT)
  if(DEFINED ENV{CUDA_PATH})
    set(MANIFOLD_CUDA_ROOT $ENV{CUDA_PATH})
  elseif(EXISTS /usr/local/cuda/include/cuda.h)
    set(MANIFOLD_CUDA_ROOT /usr/local/cuda)
  endif()
endif()
if(MANIFOLD_CUDA_ROOT AND EXISTS ${MANIFOLD_CUDA_ROOT}/include/cuda.h)
  set(MANIFOLD_HAVE_CUDA ON)
  message(STATUS "Manifold: CUDA toolkit at ${MANIFOLD_CUDA_ROOT}")
else()
  set(MANIFOLD_HAVE_CUDA OFF)
  message(STATUS "Manifold: no CUDA toolkit found (set CUDA_PATH); building without the CUDA backend")
endif()
