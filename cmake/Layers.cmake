# The layers (DESIGN.md): each folder includes only its own headers and those of the layers below
# it. Checked when the build is configured, so an include that climbs a layer fails the build.
#   compiler <- core <- backends, scheduler, svm <- api <- tools
# A backend folder includes its own headers and the pieces the GPU backends share (gpu_driver/,
# gpu_stream/), never another backend's.
set(MANIFOLD_LAYER_RULES
  "compiler:compiler"
  "core:core,compiler"
  "scheduler:scheduler,core,compiler"
  "svm:svm,core,compiler"
  "backends/gpu_stream:backends/gpu_stream,core,compiler"
  "backends/gpu_driver:backends/gpu_driver,backends/gpu_stream,core,compiler"
  "api:api,scheduler,svm,core,compiler")
# Also runs as a script (tests/structure): cmake -DMANIFOLD_LAYERS_ROOT=<tree> -P cmake/Layers.cmake
if(NOT MANIFOLD_LAYERS_ROOT)
  set(MANIFOLD_LAYERS_ROOT ${CMAKE_SOURCE_DIR})
endif()
file(GLOB backend_folders LIST_DIRECTORIES true ${MANIFOLD_LAYERS_ROOT}/backends/*)
foreach(folder ${backend_folders})
  get_filename_component(name ${folder} NAME)
  if(IS_DIRECTORY ${folder} AND NOT name MATCHES "^gpu_(stream|driver)$")
    list(APPEND MANIFOLD_LAYER_RULES
         "backends/${name}:backends/${name},backends/gpu_driver,backends/gpu_stream,core,compiler")
  endif()
endforeach()

function(manifold_check_layers root)
  set(violations "")
  foreach(rule ${MANIFOLD_LAYER_RULES})
    string(REPLACE ":" ";" parts "${rule}")
    list(GET parts 0 layer)
    list(GET parts 1 allowed)
    string(REPLACE "," ";" allowed "${allowed}")
    file(GLOB_RECURSE sources ${root}/${layer}/*.h ${root}/${layer}/*.cpp
         ${root}/${layer}/*.inc)
    foreach(source ${sources})
      file(RELATIVE_PATH relative ${root} ${source})
      file(STRINGS ${source} includes REGEX "^#include \"[a-z_]+/")
      foreach(line ${includes})
        string(REGEX MATCH "^#include \"([^\"]+)\"" _ "${line}")
        set(included "${CMAKE_MATCH_1}")
        # Only the project's own folders are layers (llvm/, clang/... are not).
        if(NOT included MATCHES "^(api|backends|compiler|core|scheduler|svm|tools|tests|bench)/")
          continue()
        endif()
        set(ok FALSE)
        foreach(prefix ${allowed})
          if(included MATCHES "^${prefix}/")
            set(ok TRUE)
          endif()
        endforeach()
        if(NOT ok)
          list(APPEND violations "${relative}: ${line}")
        endif()
      endforeach()
    endforeach()
  endforeach()
  if(violations)
    list(JOIN violations "\n  " text)
    message(FATAL_ERROR "Includes that climb a layer (cmake/Layers.cmake):\n  ${text}")
  endif()
endfunction()
manifold_check_layers(${MANIFOLD_LAYERS_ROOT})
