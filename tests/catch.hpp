// tests/catch.hpp — Catch2 2 or 3, whichever CMake found (LOOM_CATCH2_MAJOR, set in
// tests/CMakeLists.txt): every test file includes this header, never Catch2's own.
#pragma once

#if !defined(LOOM_CATCH2_MAJOR)
#if __has_include(<catch2/catch_all.hpp>)
#define LOOM_CATCH2_MAJOR 3
#else
#define LOOM_CATCH2_MAJOR 2
#endif
#endif

#if LOOM_CATCH2_MAJOR >= 3
#include <catch2/catch_all.hpp>

#include <string>

namespace Catch {
/// Catch2 2's substring matcher under its old name (Catch2 3 calls it Matchers::ContainsSubstring).
inline Matchers::StringContainsMatcher Contains(const std::string& text,
                                                CaseSensitive sensitivity = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(text, sensitivity);
}
}  // namespace Catch
#else
#include <catch2/catch.hpp>
#endif
