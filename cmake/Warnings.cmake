# Project-wide warning flags, applied per target with manifold_warnings(target).
function(manifold_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()
