# Out-of-tree consumer check, run by CTest as
#
#   cmake -DLOOM_MODE=find_package|add_subdirectory
#         -DLOOM_SOURCE_DIR=... -DLOOM_BUILD_DIR=... -DLOOM_WORK_DIR=...
#         -DLOOM_CXX_COMPILER=... -DLOOM_GENERATOR=... [-DLOOM_MAKE_PROGRAM=...]
#         [-DLOOM_CONFIG=...] [-DLOOM_XSIMD_DIR=...] -P ConsumerCheck.cmake
#
# find_package:     installs loom from LOOM_BUILD_DIR into
#                   LOOM_BUILD_DIR/consumer-prefix, then configures, builds and
#                   runs tests/consumer with find_package(loom CONFIG REQUIRED).
# add_subdirectory: configures, builds and runs tests/consumer with
#                   add_subdirectory(<loom source dir> loom-build).
cmake_minimum_required(VERSION 3.20)

foreach(_var LOOM_MODE LOOM_SOURCE_DIR LOOM_BUILD_DIR LOOM_WORK_DIR LOOM_CXX_COMPILER LOOM_GENERATOR)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "ConsumerCheck.cmake: ${_var} is not set")
  endif()
endforeach()

function(loom_step what)
  message(STATUS "consumer.${LOOM_MODE}: ${what}")
  execute_process(COMMAND ${ARGN}
                  RESULT_VARIABLE _rc
                  OUTPUT_VARIABLE _out
                  ERROR_VARIABLE  _out)
  if(NOT _rc EQUAL 0)
    string(REPLACE ";" " " _cmdline "${ARGN}")
    message(FATAL_ERROR "consumer.${LOOM_MODE}: ${what} failed (${_rc})\n  ${_cmdline}\n${_out}")
  endif()
endfunction()

set(_config_args)
set(_build_type_args)
if(DEFINED LOOM_CONFIG AND NOT "${LOOM_CONFIG}" STREQUAL "")
  set(_config_args --config "${LOOM_CONFIG}")
  set(_build_type_args "-DCMAKE_BUILD_TYPE=${LOOM_CONFIG}")
endif()

set(_gen_args -G "${LOOM_GENERATOR}")
if(DEFINED LOOM_MAKE_PROGRAM AND NOT "${LOOM_MAKE_PROGRAM}" STREQUAL "")
  list(APPEND _gen_args "-DCMAKE_MAKE_PROGRAM=${LOOM_MAKE_PROGRAM}")
endif()
if(DEFINED LOOM_XSIMD_DIR AND NOT "${LOOM_XSIMD_DIR}" STREQUAL "" AND EXISTS "${LOOM_XSIMD_DIR}")
  list(APPEND _gen_args "-Dxsimd_DIR=${LOOM_XSIMD_DIR}")
endif()

set(_consumer_src "${LOOM_SOURCE_DIR}/tests/consumer")
file(REMOVE_RECURSE "${LOOM_WORK_DIR}")

if(LOOM_MODE STREQUAL "find_package")
  set(_prefix "${LOOM_BUILD_DIR}/consumer-prefix")
  file(REMOVE_RECURSE "${_prefix}")
  loom_step("install loom into ${_prefix}"
    "${CMAKE_COMMAND}" --install "${LOOM_BUILD_DIR}" --prefix "${_prefix}" ${_config_args})
  if(NOT EXISTS "${_prefix}/include/loom/loom.hpp")
    message(FATAL_ERROR "consumer.find_package: ${_prefix}/include/loom/loom.hpp was not installed")
  endif()
  set(_mode_args
    -DLOOM_CONSUMER_MODE=find_package
    "-DCMAKE_PREFIX_PATH=${_prefix}"
    "-DLOOM_EXPECTED_PREFIX=${_prefix}")
elseif(LOOM_MODE STREQUAL "add_subdirectory")
  set(_mode_args
    -DLOOM_CONSUMER_MODE=add_subdirectory
    "-DLOOM_SOURCE_DIR=${LOOM_SOURCE_DIR}")
else()
  message(FATAL_ERROR "ConsumerCheck.cmake: unknown LOOM_MODE '${LOOM_MODE}'")
endif()

loom_step("configure"
  "${CMAKE_COMMAND}" -S "${_consumer_src}" -B "${LOOM_WORK_DIR}"
  ${_gen_args} "-DCMAKE_CXX_COMPILER=${LOOM_CXX_COMPILER}" ${_build_type_args} ${_mode_args})
loom_step("build"
  "${CMAKE_COMMAND}" --build "${LOOM_WORK_DIR}" ${_config_args})
set(_exe "${LOOM_WORK_DIR}/bin/consumer")
if(CMAKE_HOST_WIN32)
  string(APPEND _exe ".exe")
endif()
loom_step("run" "${_exe}")

message(STATUS "consumer.${LOOM_MODE}: OK")
