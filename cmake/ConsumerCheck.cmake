# Out-of-tree consumer check, run by CTest as
#
#   cmake -DLOOM_MODE=<mode>
#         -DLOOM_SOURCE_DIR=... -DLOOM_BUILD_DIR=... -DLOOM_WORK_DIR=...
#         -DLOOM_CXX_COMPILER=... -DLOOM_GENERATOR=... [-DLOOM_MAKE_PROGRAM=...]
#         [-DLOOM_CONFIG=...] [-DLOOM_XSIMD_DIR=...] [-DLOOM_XSIMD_INCLUDE_DIR=...]
#         [-DLOOM_PKG_CONFIG=<pkg-config>] -P ConsumerCheck.cmake
#
# Modes (each builds and runs tests/consumer/main.cpp):
#   find_package             installs loom from LOOM_BUILD_DIR into LOOM_WORK_DIR/prefix, then
#                            find_package(loom CONFIG REQUIRED); checks the version file too.
#   add_subdirectory         add_subdirectory(<loom source dir> loom-build).
#   fetchcontent             FetchContent_Declare(loom SOURCE_DIR <loom source dir>) +
#                            FetchContent_MakeAvailable(loom); nothing is downloaded.
#   fetchcontent_own_xsimd   the same, in a project that defines its own `xsimd` target first
#                            (an INTERFACE target on LOOM_XSIMD_INCLUDE_DIR) and forbids
#                            find_package(xsimd): loom must take the parent's target.
#   pkg_config               installs loom into LOOM_WORK_DIR/prefix and compiles main.cpp with
#                            `<compiler> $(pkg-config --cflags loom) main.cpp $(pkg-config --libs loom)`
#                            (PKG_CONFIG_PATH=<prefix>/share/pkgconfig).
cmake_minimum_required(VERSION 3.20)

foreach(_var LOOM_MODE LOOM_SOURCE_DIR LOOM_BUILD_DIR LOOM_WORK_DIR LOOM_CXX_COMPILER LOOM_GENERATOR)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "ConsumerCheck.cmake: ${_var} is not set")
  endif()
endforeach()

# Runs a command; fails the check with its output unless it exits 0. OUTPUT_VARIABLE <var> (the
# first two arguments, optional) returns its standard output.
function(loom_step what)
  set(_args ${ARGN})
  set(_outvar "")
  list(GET _args 0 _first)
  if(_first STREQUAL "OUTPUT_VARIABLE")
    list(GET _args 1 _outvar)
    list(REMOVE_AT _args 0 1)
  endif()
  message(STATUS "consumer.${LOOM_MODE}: ${what}")
  execute_process(COMMAND ${_args}
                  RESULT_VARIABLE _rc
                  OUTPUT_VARIABLE _out
                  ERROR_VARIABLE  _err)
  if(NOT _rc EQUAL 0)
    string(REPLACE ";" " " _cmdline "${_args}")
    message(FATAL_ERROR "consumer.${LOOM_MODE}: ${what} failed (${_rc})\n  ${_cmdline}\n${_out}${_err}")
  endif()
  if(_outvar)
    string(STRIP "${_out}" _out)
    set(${_outvar} "${_out}" PARENT_SCOPE)
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
set(_xsimd_args)
if(DEFINED LOOM_XSIMD_DIR AND NOT "${LOOM_XSIMD_DIR}" STREQUAL "" AND EXISTS "${LOOM_XSIMD_DIR}")
  set(_xsimd_args "-Dxsimd_DIR=${LOOM_XSIMD_DIR}")
endif()

set(_consumer_src "${LOOM_SOURCE_DIR}/tests/consumer")
set(_prefix "${LOOM_WORK_DIR}/prefix")
set(_build "${LOOM_WORK_DIR}/build")
file(REMOVE_RECURSE "${LOOM_WORK_DIR}")

# Every mode that installs: a fresh prefix of its own, so the checks can run in parallel.
if(LOOM_MODE STREQUAL "find_package" OR LOOM_MODE STREQUAL "pkg_config")
  loom_step("install loom into ${_prefix}"
    "${CMAKE_COMMAND}" --install "${LOOM_BUILD_DIR}" --prefix "${_prefix}" ${_config_args})
  if(NOT EXISTS "${_prefix}/include/loom/loom.hpp")
    message(FATAL_ERROR "consumer.${LOOM_MODE}: ${_prefix}/include/loom/loom.hpp was not installed")
  endif()
endif()

# The version in include/loom/version.hpp, which the package files must repeat.
file(STRINGS "${LOOM_SOURCE_DIR}/include/loom/version.hpp" _lines REGEX "^#define LOOM_VERSION_(MAJOR|MINOR|PATCH) ")
set(_header_version "")
foreach(_part MAJOR MINOR PATCH)
  string(REGEX MATCH "LOOM_VERSION_${_part} +([0-9]+)" _m "${_lines}")
  list(APPEND _header_version "${CMAKE_MATCH_1}")
endforeach()
string(REPLACE ";" "." _header_version "${_header_version}")

if(LOOM_MODE STREQUAL "pkg_config")
  if(NOT LOOM_PKG_CONFIG)
    message(FATAL_ERROR "consumer.pkg_config: no pkg-config program (LOOM_PKG_CONFIG); scripts/deps installs it")
  endif()
  set(_pcdir "${_prefix}/share/pkgconfig")
  if(NOT EXISTS "${_pcdir}/loom.pc")
    message(FATAL_ERROR "consumer.pkg_config: ${_pcdir}/loom.pc was not installed")
  endif()
  # PKG_CONFIG_PATH is searched before the system's directories, where xsimd.pc is.
  set(_pc "${CMAKE_COMMAND}" -E env "PKG_CONFIG_PATH=${_pcdir}" "${LOOM_PKG_CONFIG}")
  loom_step("pkg-config --modversion loom" OUTPUT_VARIABLE _pc_version ${_pc} --modversion loom)
  if(NOT _pc_version STREQUAL _header_version)
    message(FATAL_ERROR "consumer.pkg_config: loom.pc says version ${_pc_version}, version.hpp ${_header_version}")
  endif()
  loom_step("pkg-config --cflags loom" OUTPUT_VARIABLE _cflags ${_pc} --cflags loom)
  loom_step("pkg-config --libs loom" OUTPUT_VARIABLE _libs ${_pc} --libs loom)
  message(STATUS "consumer.pkg_config: --cflags: ${_cflags}")
  message(STATUS "consumer.pkg_config: --libs: ${_libs}")
  # The include directory must be the installed one (the source tree is not on the path).
  file(REAL_PATH "${_prefix}/include" _real_inc)
  separate_arguments(_cflags UNIX_COMMAND "${_cflags}")
  separate_arguments(_libs UNIX_COMMAND "${_libs}")
  set(_found_inc OFF)
  foreach(_flag IN LISTS _cflags)
    if(_flag MATCHES "^-I(.+)$")
      file(REAL_PATH "${CMAKE_MATCH_1}" _dir)
      if(_dir STREQUAL _real_inc)
        set(_found_inc ON)
      endif()
    endif()
  endforeach()
  if(NOT _found_inc)
    message(FATAL_ERROR "consumer.pkg_config: --cflags has no -I for ${_real_inc}")
  endif()
  file(MAKE_DIRECTORY "${_build}")
  string(REPLACE "." ";" _v "${_pc_version}")
  list(GET _v 0 _major)
  list(GET _v 1 _minor)
  list(GET _v 2 _patch)
  set(_exe "${_build}/consumer")
  loom_step("compile main.cpp with pkg-config's flags"
    "${LOOM_CXX_COMPILER}" ${_cflags}
    "-DLOOM_CONSUMER_EXPECT_MAJOR=${_major}" "-DLOOM_CONSUMER_EXPECT_MINOR=${_minor}"
    "-DLOOM_CONSUMER_EXPECT_PATCH=${_patch}"
    "${_consumer_src}/main.cpp" -o "${_exe}" ${_libs})
  loom_step("run" "${_exe}")
  message(STATUS "consumer.${LOOM_MODE}: OK")
  return()
endif()

if(LOOM_MODE STREQUAL "find_package")
  set(_mode_args
    -DLOOM_CONSUMER_MODE=find_package
    "-DCMAKE_PREFIX_PATH=${_prefix}"
    "-DLOOM_EXPECTED_PREFIX=${_prefix}"
    ${_xsimd_args})
elseif(LOOM_MODE MATCHES "^(add_subdirectory|fetchcontent)$")
  set(_mode_args
    "-DLOOM_CONSUMER_MODE=${LOOM_MODE}"
    "-DLOOM_SOURCE_DIR=${LOOM_SOURCE_DIR}"
    ${_xsimd_args})
elseif(LOOM_MODE STREQUAL "fetchcontent_own_xsimd")
  if(NOT LOOM_XSIMD_INCLUDE_DIR OR NOT EXISTS "${LOOM_XSIMD_INCLUDE_DIR}/xsimd/xsimd.hpp")
    message(FATAL_ERROR "consumer.${LOOM_MODE}: LOOM_XSIMD_INCLUDE_DIR ('${LOOM_XSIMD_INCLUDE_DIR}') has no xsimd/xsimd.hpp")
  endif()
  set(_mode_args
    -DLOOM_CONSUMER_MODE=fetchcontent
    "-DLOOM_SOURCE_DIR=${LOOM_SOURCE_DIR}"
    "-DLOOM_CONSUMER_OWN_XSIMD=${LOOM_XSIMD_INCLUDE_DIR}")
else()
  message(FATAL_ERROR "ConsumerCheck.cmake: unknown LOOM_MODE '${LOOM_MODE}'")
endif()

loom_step("configure"
  "${CMAKE_COMMAND}" -S "${_consumer_src}" -B "${_build}"
  ${_gen_args} "-DCMAKE_CXX_COMPILER=${LOOM_CXX_COMPILER}" ${_build_type_args} ${_mode_args}
  "-DLOOM_EXPECTED_VERSION=${_header_version}")
loom_step("build"
  "${CMAKE_COMMAND}" --build "${_build}" ${_config_args})
set(_exe "${_build}/bin/consumer")
if(CMAKE_HOST_WIN32)
  string(APPEND _exe ".exe")
endif()
loom_step("run" "${_exe}")

message(STATUS "consumer.${LOOM_MODE}: OK")
