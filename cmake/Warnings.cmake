# Project-wide warning flags, applied per target with manifold_warnings(target).
function(manifold_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  # GCC 12 at -O3 reports -Wrestrict inside libstdc++'s string concatenation ("literal" + a
  # temporary std::string) where no overlap exists (GCC bug 105329).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-Wno-restrict>)
  endif()
endfunction()
