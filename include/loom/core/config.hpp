// SPDX-License-Identifier: MIT
// loom/core/config.hpp — the index type and the few compiler attributes loom relies on.
#pragma once
#include <cstdint>

namespace loom {
/// All index arithmetic is 64-bit: extents, strides and affine index values.
using index_t = std::int64_t;
}  // namespace loom

/// Sanitizer builds (any AddressSanitizer build) do not force inlining: at -O0, forcing the whole
/// GEMM micro-kernel and its epilogue into one function makes clang 14 with ASan use tens of GiB
/// of memory for one test file. Speed is not what those builds are for.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOOM_NO_FORCED_INLINE 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define LOOM_NO_FORCED_INLINE 1
#endif

#if (defined(__GNUC__) || defined(__clang__)) && !defined(LOOM_NO_FORCED_INLINE)
#define LOOM_INLINE inline __attribute__((always_inline))
#else
#define LOOM_INLINE inline
#endif

/// After a lambda's parameter list: the fold-expression lambdas that unroll loops must inline, or
/// the register block they carry would be passed through memory.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(LOOM_NO_FORCED_INLINE)
#define LOOM_LAMBDA_INLINE __attribute__((always_inline))
#else
#define LOOM_LAMBDA_INLINE
#endif

/// A rare path kept out of line and optimized for size (less work for the compiler, too).
#if defined(__GNUC__) || defined(__clang__)
#define LOOM_COLD __attribute__((cold, noinline))
#else
#define LOOM_COLD
#endif

/// A function compiled once and called from several places (rather than a copy at each).
#if defined(__GNUC__) || defined(__clang__)
#define LOOM_NOINLINE __attribute__((noinline))
#else
#define LOOM_NOINLINE
#endif

#define LOOM_PRAGMA(x) _Pragma(#x)

/// Before a loop over a run-time trip that must vectorize: g++ 12 at -O2 vectorizes only loops
/// whose trip it knows unless told (`omp simd`). clang vectorizes them unasked, and warns
/// (-Wpass-failed) where its vectorizer does not run (-O1) if asked, so it is not.
#if defined(__clang__)
#define LOOM_SIMD_LOOP
#else
#define LOOM_SIMD_LOOP LOOM_PRAGMA(omp simd)
#endif

namespace loom::detail {
/// Division rounding down / up, exact for any signs and with no overflow (a block count
/// ceil(n / F) for a factor near 2^63 included).
constexpr index_t floor_div(index_t a, index_t b) {
  const index_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
constexpr index_t ceil_div(index_t a, index_t b) {
  const index_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

/// v itself, with the optimizer told nothing about how it was computed (an empty asm statement
/// that may change it): strength reduction and loop-invariant code motion stop at this value.
template <class T>
LOOM_INLINE T opaque(T v) {
#if defined(__GNUC__) || defined(__clang__)
  asm("" : "+r"(v));
#endif
  return v;
}
}  // namespace loom::detail
