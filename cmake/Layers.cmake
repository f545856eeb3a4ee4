# The layers (DESIGN.md): each folder includes only its own headers and those of the layers below
# it. Checked when the build is configured, so an include that climbs a layer fails the build.
#   settings <- compiler <- core <- backends, scheduler, svm <- api; settings <- tools
#   manifold-server (server/) talks OpenCL through the loader and uses the remote backend's
#   transport and protocol (backends/remote, which need only core's byte streams).
# A backend folder includes its own headers and the pieces the GPU backends share (gpu_driver/,
# gpu_stream/), never another backend's.
set(MANIFOLD_LAYER_RULES
  "settings:settings"
  "compiler:compiler,settings"
  "core:core,compiler,settings"
  "scheduler:scheduler,core,compiler,settings"
  "svm:svm,core,compiler,settings"
  "backends/gpu_stream:backends/gpu_stream,core,compiler,settings"
  "backends/gpu_driver:backends/gpu_driver,backends/gpu_stream,core,compiler,settings"
  "api:api,scheduler,svm,core,compiler,settings"
  "server:server,backends/remote,core,settings")
# Also runs as a script (tests/structure): cmake -DMANIFOLD_LAYERS_ROOT=<tree> -P cmake/Layers.cmake
if(NOT MANIFOLD_LAYERS_ROOT)
  set(MANIFOLD_LAYERS_ROOT ${CMAKE_SOURCE_DIR})
endif()
file(GLOB backend_folders LIST_DIRECTORIES true ${MANIFOLD_LAYERS_ROOT}/backends/*)
foreach(folder ${backend_folders})
  get_filename_component(name ${folder} NAME)
  if(IS_DIRECTORY ${folder} AND NOT name MATCHES "^gpu_(stream|driver)$")
    list(APPEND MANIFOLD_LAYER_RULES
         "backends/${name}:backends/${name},backends/gpu_driver,backends/gpu_stream,core,compiler,settings")
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
        if(NOT included MATCHES "^(api|backends|compiler|core|scheduler|server|settings|svm|tools|tests|bench)/")
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
# The environment is read in one place (settings/settings.h): no getenv anywhere else.
function(manifold_check_environment_reads root)
  set(violations "")
  foreach(folder api backends compiler core scheduler svm tools)
    file(GLOB_RECURSE sources ${root}/${folder}/*.h ${root}/${folder}/*.cpp ${root}/${folder}/*.c
         ${root}/${folder}/*.inc)
    foreach(source ${sources})
      file(STRINGS ${source} reads REGEX "getenv[ ]*\\(")
      if(reads)
        file(RELATIVE_PATH relative ${root} ${source})
        list(APPEND violations "${relative}")
      endif()
    endforeach()
  endforeach()
  if(violations)
    list(JOIN violations "\n  " text)
    message(FATAL_ERROR "Environment read outside settings/ (cmake/Layers.cmake):\n  ${text}")
  endif()
endfunction()
manifold_check_layers(${MANIFOLD_LAYERS_ROOT})
manifold_check_environment_reads(${MANIFOLD_LAYERS_ROOT})
