// SPDX-License-Identifier: MIT
// loom/simd/stream.hpp — non-temporal (streaming) stores, which xsimd 8.1 does not have: a whole
// aligned vector goes to memory without the read-for-ownership of its cache line, and without
// evicting data that is still wanted. Also the fence that makes them visible to other threads,
// and when they pay off.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../core/config.hpp"
#include "arch.hpp"
#include "cache.hpp"

namespace loom::simd {

namespace detail {
// One non-temporal store per register width: a streaming store moves bits, so every element
// type goes through the float form of its width.
#if XSIMD_WITH_AVX512F
LOOM_INLINE void stream_register(void* p, __m512 r) { _mm512_stream_ps(static_cast<float*>(p), r); }
#endif
#if XSIMD_WITH_AVX
LOOM_INLINE void stream_register(void* p, __m256 r) { _mm256_stream_ps(static_cast<float*>(p), r); }
#endif
#if XSIMD_WITH_SSE2
LOOM_INLINE void stream_register(void* p, __m128 r) { _mm_stream_ps(static_cast<float*>(p), r); }
#endif
}  // namespace detail

/// Stores v at p, non-temporally where the target has such a store for the batch; p must be
/// aligned to sizeof(B) (callers check can_stream first).
template <class B>
LOOM_INLINE void store_stream(typename B::value_type* p, const B& v) {
  using F = xsimd::batch<float, typename B::arch_type>;
  if constexpr (requires(F f) { detail::stream_register(p, static_cast<typename F::register_type>(f)); }) {
    if constexpr (std::is_same_v<typename B::value_type, float>)
      detail::stream_register(p, static_cast<typename F::register_type>(v));
    else
      detail::stream_register(p, static_cast<typename F::register_type>(xsimd::bitwise_cast<F>(v)));
  } else {
    v.store_aligned(p);
  }
}

/// Is p aligned for store_stream of a B?
template <class B>
LOOM_INLINE bool can_stream(const typename B::value_type* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & (sizeof(B) - 1)) == 0;
}

/// Orders this thread's streaming stores before its later stores (and so before an OpenMP barrier
/// or the return to the caller): they are weakly ordered, unlike every other store on x86.
LOOM_INLINE void stream_fence() {
#if XSIMD_WITH_SSE2
  _mm_sfence();
#endif
}

/// The bytes a run must touch before stream_stores<> (loom::beyond_cache) streams: twice the
/// last-level cache (at least 8 MiB): below that streaming gains nothing
/// (docs/tuning.md#streaming-stores).
inline index_t streaming_threshold_bytes() { return std::max<index_t>(2 * last_level_cache_bytes(), index_t{8} << 20); }

}  // namespace loom::simd
