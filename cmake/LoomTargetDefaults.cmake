# loom_target_defaults(<target>)
#
# Applies loom's in-tree build settings to <target> (tests, compile-fail
# targets, docs lessons/snippets, examples, benchmarks). Never used for the
# loom library target itself, and never touches global flags.
#
#   * links loom::loom
#   * warnings: -Wall -Wextra -Wpedantic (+ -Werror when LOOM_WERROR)
#   * -march=native when LOOM_NATIVE (falls back to -mcpu=native, or nothing,
#     when the compiler does not accept -march=native)
#   * clang 14: -mllvm -openmp-opt-disable (see below; compile time only)
#   * -fsanitize=address,undefined -fno-omit-frame-pointer
#     -fno-sanitize-recover=all (compile + link) when LOOM_SANITIZE
include_guard(GLOBAL)

include(CheckCXXCompilerFlag)

if(LOOM_NATIVE AND NOT DEFINED LOOM_NATIVE_FLAG)
  if(MSVC)
    set(_loom_native_flag "")
  else()
    check_cxx_compiler_flag("-march=native" LOOM_HAS_MARCH_NATIVE)
    if(LOOM_HAS_MARCH_NATIVE)
      set(_loom_native_flag "-march=native")
    else()
      check_cxx_compiler_flag("-mcpu=native" LOOM_HAS_MCPU_NATIVE)
      if(LOOM_HAS_MCPU_NATIVE)
        set(_loom_native_flag "-mcpu=native")
      else()
        set(_loom_native_flag "")
        message(WARNING "loom: LOOM_NATIVE=ON but the compiler accepts neither -march=native nor -mcpu=native")
      endif()
    endif()
  endif()
  set(LOOM_NATIVE_FLAG "${_loom_native_flag}" CACHE STRING
      "Architecture flag used for in-tree targets when LOOM_NATIVE=ON")
  mark_as_advanced(LOOM_NATIVE_FLAG)
  unset(_loom_native_flag)
endif()

function(loom_target_defaults target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "loom_target_defaults: '${target}' is not a target")
  endif()

  target_link_libraries(${target} PRIVATE loom::loom)

  if(MSVC)
    target_compile_options(${target} PRIVATE /W4 /permissive-)
    if(LOOM_WERROR)
      target_compile_options(${target} PRIVATE /WX)
    endif()
  else()
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
    if(LOOM_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
    if(LOOM_NATIVE AND LOOM_NATIVE_FLAG)
      target_compile_options(${target} PRIVATE ${LOOM_NATIVE_FLAG})
    endif()
    if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 15)
      # clang 14's OpenMPOpt pass walks every function of the module for each call-graph SCC
      # (fixed in clang 15). loom makes one OpenMP region per loop nest, so on the test files it
      # was 31 % of the compile (tests/test_elementwise.cpp at -O3: 98 -> 67 s of CPU) for
      # byte-identical code: the pass serves offloading, not host loops.
      target_compile_options(${target} PRIVATE "SHELL:-mllvm -openmp-opt-disable")
    endif()
    if(LOOM_SANITIZE)
      set(_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
      target_compile_options(${target} PRIVATE ${_san})
      target_link_options(${target} PRIVATE ${_san})
      if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        # GCC documents that -fsanitize makes -Wmaybe-uninitialized unreliable;
        # GCC 12 reports false positives in inlined libstdc++ code under ASan
        # (e.g. std::regex, used by Catch2's main). The warning is checked by
        # the non-sanitized builds; here it is off.
        target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
      endif()
    endif()
  endif()
endfunction()
