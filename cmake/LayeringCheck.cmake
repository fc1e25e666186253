# Checks that loom's layers include downward only, run by CTest as
#   cmake -DLOOM_INCLUDE_DIR=<loom>/include/loom -P LayeringCheck.cmake
#
# The layers, bottom up: core < simd < expr < schedule < lower < tune, kernels < pipeline <
# run.hpp/loom.hpp.
# A header may include its own folder and folders below it. kernels/ may include lower/ (an engine
# reuses the run's checks); lower/ never includes kernels/, so the two never include each other.
cmake_minimum_required(VERSION 3.20)

if(NOT DEFINED LOOM_INCLUDE_DIR)
  message(FATAL_ERROR "LayeringCheck.cmake: set LOOM_INCLUDE_DIR")
endif()

# What each folder may include, besides itself.
set(_allowed_core     "")
set(_allowed_simd     "core")
set(_allowed_expr     "core;simd")
set(_allowed_schedule "core;simd;expr")
set(_allowed_lower    "core;simd;expr;schedule")
set(_allowed_tune     "core;simd;expr;schedule;lower")
set(_allowed_kernels  "core;simd;expr;schedule;lower")
set(_allowed_pipeline "core;simd;expr;schedule;lower;tune")

set(_bad "")
foreach(_layer core simd expr schedule lower tune kernels pipeline)
  file(GLOB_RECURSE _headers "${LOOM_INCLUDE_DIR}/${_layer}/*.hpp")
  foreach(_h IN LISTS _headers)
    file(STRINGS "${_h}" _includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(_line IN LISTS _includes)
      string(REGEX REPLACE "^[^\"]*\"([^\"]*)\".*" "\\1" _path "${_line}")
      get_filename_component(_dir "${_h}" DIRECTORY)
      get_filename_component(_target "${_dir}/${_path}" ABSOLUTE)
      file(RELATIVE_PATH _rel "${LOOM_INCLUDE_DIR}" "${_target}")
      string(REGEX MATCH "^[^/]+" _to "${_rel}")
      if(_to STREQUAL _layer OR NOT _rel MATCHES "/")
        if(NOT _rel MATCHES "/")
          string(APPEND _bad "\n  ${_h}: includes ${_rel}, a top-level header")
        endif()
        continue()
      endif()
      if(NOT _to IN_LIST _allowed_${_layer})
        string(APPEND _bad "\n  ${_h}: ${_layer}/ includes ${_rel}")
      endif()
    endforeach()
  endforeach()
endforeach()

if(_bad)
  message(FATAL_ERROR "loom's layers include upward:${_bad}")
endif()
message(STATUS "layering: every header includes its own layer or the ones below")
