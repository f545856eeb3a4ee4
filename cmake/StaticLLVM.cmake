# MANIFOLD_STATIC_LLVM=ON: LLVM and Clang 22 linked statically into the ICD, so it runs where no
# LLVM 22 is installed (the GPU machines: scripts/gpu-bundle.sh). Only the archive members the
# code reaches are linked (the LLVM libraries of the used components, inside one link group);
# the result is stripped at install/bundle time. TBB and SLEEF stay shared libraries (Debian has
# no static ones) and travel next to the ICD, found through RPATH $ORIGIN.
# MANIFOLD_LLVM_LIBS is what manifold_compiler links: the shared libLLVM and libclang-cpp by
# default.
option(MANIFOLD_STATIC_LLVM "Link LLVM and Clang statically (self-contained ICD)" OFF)

# lld's ELF driver links AMDGPU code objects in-process (compiler/amdgpu/code_object_link.cpp).
# Debian ships it as archives only (liblld-22-dev); they go before the LLVM they depend on.
find_library(MANIFOLD_LLD_ELF lldELF PATHS ${MANIFOLD_LLVM_ROOT}/lib NO_DEFAULT_PATH)
find_library(MANIFOLD_LLD_COMMON lldCommon PATHS ${MANIFOLD_LLVM_ROOT}/lib NO_DEFAULT_PATH)
if(NOT MANIFOLD_LLD_ELF OR NOT MANIFOLD_LLD_COMMON)
  message(FATAL_ERROR "lld's libraries (lldELF, lldCommon) are missing: install liblld-22-dev")
endif()

# lld compresses debug sections itself: it calls zlib and zstd directly.
find_package(ZLIB REQUIRED)
find_library(MANIFOLD_ZSTD zstd REQUIRED)

if(NOT MANIFOLD_STATIC_LLVM)
  set(MANIFOLD_LLVM_LIBS ${MANIFOLD_LLD_ELF} ${MANIFOLD_LLD_COMMON} LLVM clang-cpp ZLIB::ZLIB
                         ${MANIFOLD_ZSTD})
  return()
endif()

# The LLVM components Manifold's compiler uses: the host (X86), NVPTX, AMDGPU and SPIR-V targets,
# the ORC JIT of the CPU pipeline, the pass pipelines, bitcode, the linker, and what clang's
# frontend and code generator need.
set(MANIFOLD_LLVM_COMPONENTS
    x86 nvptx amdgpu spirv orcjit jitlink passes linker irreader irprinter bitreader bitwriter asmparser
    coverage frontendhlsl frontendopenmp frontenddriver frontendoffloading lto option
    dtlto profiledata windowsdriver extensions instrumentation objcarcopts coroutines ipo vectorize
    scalaropts aggressiveinstcombine instcombine cfguard codegen selectiondag globalisel
    asmprinter mc mcparser mcdisassembler object objectyaml textapi binaryformat remarks
    bitstreamreader debuginfodwarf debuginfodwarflowlevel symbolize targetparser support demangle
    sandboxir hipstdpar cgdata frontendatomic frontenddirective orcshared orctargetprocess
    executionengine runtimedyld analysis core transformutils target)
execute_process(
  COMMAND ${LLVM_TOOLS_BINARY_DIR}/llvm-config --link-static --libfiles ${MANIFOLD_LLVM_COMPONENTS}
  OUTPUT_VARIABLE llvm_files OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE llvm_config_result
  ERROR_VARIABLE llvm_config_error)
if(NOT llvm_config_result EQUAL 0)
  message(FATAL_ERROR "llvm-config cannot list LLVM's static libraries: ${llvm_config_error} "
                      "(install llvm-22-dev)")
endif()
separate_arguments(llvm_files UNIX_COMMAND "${llvm_files}")
# llvm-config names some archives Debian does not ship (e.g. Polly's): keep those that exist.
set(existing)
foreach(f ${llvm_files})
  if(EXISTS ${f})
    list(APPEND existing ${f})
  endif()
endforeach()
set(llvm_files ${existing})

set(clang_files)
foreach(lib clangCodeGen clangFrontend clangDriver clangOptions clangParse clangSema
            clangSerialization clangAnalysis clangAnalysisLifetimeSafety clangASTMatchers clangAST
            clangAPINotes clangEdit clangLex clangBasic clangSupport)
  if(EXISTS ${LLVM_LIBRARY_DIR}/lib${lib}.a)
    list(APPEND clang_files ${LLVM_LIBRARY_DIR}/lib${lib}.a)
  endif()
endforeach()

add_library(manifold_static_llvm_stubs STATIC ${CMAKE_CURRENT_LIST_DIR}/static_llvm_stubs.cpp)
target_include_directories(manifold_static_llvm_stubs SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS})
set_target_properties(manifold_static_llvm_stubs PROPERTIES POSITION_INDEPENDENT_CODE ON)

set(MANIFOLD_LLVM_LIBS
    -Wl,--start-group ${MANIFOLD_LLD_ELF} ${MANIFOLD_LLD_COMMON} ${clang_files} ${llvm_files} manifold_static_llvm_stubs -Wl,--end-group
    ZLIB::ZLIB ${MANIFOLD_ZSTD} ${CMAKE_DL_LIBS} Threads::Threads)
# The ICD finds the TBB and SLEEF libraries carried next to it.
set(CMAKE_BUILD_RPATH_USE_ORIGIN ON)
set(CMAKE_INSTALL_RPATH "$ORIGIN")
message(STATUS "Manifold: LLVM and Clang linked statically (${CMAKE_CURRENT_LIST_FILE})")
