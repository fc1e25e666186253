# Compile-fail / compile-ok driver, run by CTest as
#
#   cmake -DLOOM_BUILD_DIR=<build dir> -DLOOM_TARGET=<target> -DLOOM_SOURCE=<file.cpp>
#         -DLOOM_MODE=fail|ok [-DLOOM_CONFIG=<config>] [-DLOOM_DIRECT=ON] -P CompileFail.cmake
#
# Compiles <target> (an EXCLUDE_FROM_ALL object library made from <file.cpp>): with
# LOOM_DIRECT, by running the command compile_commands.json gives for it; else with
# `cmake --build --target`. Then
#   MODE=fail: asserts the build FAILS, that its output matches the CMake
#              regular expression from the file's first line `// expect: <regex>`, and
#              that the first line matching it is among the first 10 lines of the output
#              (a second header line `// within: <N>` may allow N lines, with a reason:
#              a user reads the top of a diagnostic, so loom's message must be there);
#   MODE=ok:   asserts the build SUCCEEDS (control variant, compiled with
#              -DLOOM_COMPILE_FAIL_CONTROL).
cmake_minimum_required(VERSION 3.20)

foreach(_var LOOM_BUILD_DIR LOOM_TARGET LOOM_SOURCE LOOM_MODE)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "CompileFail.cmake: ${_var} is not set")
  endif()
endforeach()

# Plain ASCII diagnostics (no locale-dependent quotes) so regexes are portable.
set(ENV{LC_ALL} C)

if(LOOM_DIRECT)
  # The exact command CMake exported for the target's one source: no build tool, no lock.
  set(_db "${LOOM_BUILD_DIR}/compile_commands.json")
  if(NOT EXISTS "${_db}")
    message(FATAL_ERROR "CompileFail.cmake: ${_db} is missing; configure the build tree again")
  endif()
  file(READ "${_db}" _json)
  string(JSON _count LENGTH "${_json}")
  set(_command "")
  if(_count GREATER 0)
    math(EXPR _last "${_count} - 1")
    foreach(_i RANGE ${_last})
      # The object path in the command names the target's directory (the Makefile generator
      # of CMake 3.25 writes no "output" field).
      string(JSON _entry_command GET "${_json}" ${_i} command)
      string(FIND "${_entry_command}" "CMakeFiles/${LOOM_TARGET}.dir/" _at)
      if(_at GREATER -1)
        set(_command "${_entry_command}")
        string(JSON _directory GET "${_json}" ${_i} directory)
        break()
      endif()
    endforeach()
  endif()
  if(_command STREQUAL "")
    message(FATAL_ERROR "CompileFail.cmake: no command for target ${LOOM_TARGET} in ${_db}")
  endif()
  separate_arguments(_cmd UNIX_COMMAND "${_command}")
else()
  set(_cmd "${CMAKE_COMMAND}" --build "${LOOM_BUILD_DIR}" --target "${LOOM_TARGET}")
  if(DEFINED LOOM_CONFIG AND NOT "${LOOM_CONFIG}" STREQUAL "")
    list(APPEND _cmd --config "${LOOM_CONFIG}")
  endif()
  set(_directory "${LOOM_BUILD_DIR}")
endif()

execute_process(
  COMMAND ${_cmd}
  WORKING_DIRECTORY "${_directory}"
  RESULT_VARIABLE _result
  OUTPUT_VARIABLE _output
  ERROR_VARIABLE  _output)   # same variable: stdout and stderr merged

# Strip ANSI colour escapes so regexes see plain compiler text.
string(ASCII 27 _esc)
string(REGEX REPLACE "${_esc}\\[[0-9;]*[mK]" "" _output "${_output}")

if(LOOM_MODE STREQUAL "ok")
  if(NOT _result EQUAL 0)
    message(FATAL_ERROR
      "compile_ok: '${LOOM_SOURCE}' with LOOM_COMPILE_FAIL_CONTROL defined must compile, "
      "but building target ${LOOM_TARGET} failed (${_result}):\n${_output}")
  endif()
  message(STATUS "compile_ok: ${LOOM_TARGET} compiled as expected")
  return()
elseif(NOT LOOM_MODE STREQUAL "fail")
  message(FATAL_ERROR "CompileFail.cmake: LOOM_MODE must be 'fail' or 'ok', got '${LOOM_MODE}'")
endif()

# MODE=fail: read the expectation from the source's first line.
file(READ "${LOOM_SOURCE}" _first LIMIT 4096)
string(FIND "${_first}" "\n" _eol)
if(_eol GREATER -1)
  string(SUBSTRING "${_first}" 0 ${_eol} _first)
endif()
if(NOT _first MATCHES "^[ \t]*//[ \t]*expect:[ \t]*(.*[^ \t\r])[ \t\r]*$")
  message(FATAL_ERROR "compile_fail: first line of '${LOOM_SOURCE}' must be `// expect: <regex>`")
endif()
set(_regex "${CMAKE_MATCH_1}")

if(_result EQUAL 0)
  message(FATAL_ERROR
    "compile_fail: '${LOOM_SOURCE}' was expected NOT to compile, "
    "but target ${LOOM_TARGET} built successfully:\n${_output}")
endif()

if(NOT _output MATCHES "${_regex}")
  message(FATAL_ERROR
    "compile_fail: '${LOOM_SOURCE}' failed to compile as expected, but the output "
    "does not match the expected regex\n  ${_regex}\n--- build output ---\n${_output}")
endif()

# The line of the first match: the output before the match, counted in newlines. The limit is
# 10 lines unless the source's second line says `// within: <N>`.
set(_within 10)
file(STRINGS "${LOOM_SOURCE}" _head LIMIT_COUNT 2)
list(LENGTH _head _head_lines)
if(_head_lines GREATER 1)
  list(GET _head 1 _second)
  if(_second MATCHES "^[ \t]*//[ \t]*within:[ \t]*([0-9]+)")
    set(_within "${CMAKE_MATCH_1}")
  endif()
endif()
string(REGEX MATCH "${_regex}" _match "${_output}")
string(FIND "${_output}" "${_match}" _at)
string(SUBSTRING "${_output}" 0 ${_at} _before)
string(REGEX REPLACE "[^\n]" "" _newlines "${_before}")
string(LENGTH "${_newlines}" _line)
math(EXPR _line "${_line} + 1")
if(_line GREATER _within)
  message(FATAL_ERROR
    "compile_fail: '${LOOM_SOURCE}': the expected message is on line ${_line} of the compiler output, "
    "past the first ${_within} (put the check where the user's call is instantiated)\n"
    "--- build output ---\n${_output}")
endif()

message(STATUS "compile_fail: ${LOOM_TARGET} failed to compile as expected (matched on line ${_line}: ${_regex})")
