// loom/core/config.hpp — the index type and the few compiler attributes loom relies on.
#pragma once
#include <cstdint>

namespace loom {
/// All index arithmetic is 64-bit: extents, strides and affine index values.
using index_t = std::int64_t;
}  // namespace loom

#if defined(__GNUC__) || defined(__clang__)
#define LOOM_INLINE inline __attribute__((always_inline))
#else
#define LOOM_INLINE inline
#endif

/// After a lambda's parameter list: the fold-expression lambdas that unroll loops must inline, or
/// the register block they carry would be passed through memory.
#if defined(__GNUC__) || defined(__clang__)
#define LOOM_LAMBDA_INLINE __attribute__((always_inline))
#else
#define LOOM_LAMBDA_INLINE
#endif

#define LOOM_PRAGMA(x) _Pragma(#x)
