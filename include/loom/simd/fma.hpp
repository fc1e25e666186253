// SPDX-License-Identifier: MIT
// loom/simd/fma.hpp — fused multiply-add on xsimd batches that is always one instruction and one
// rounding. xsimd 8.1 has no AVX-512 fma kernel: its generic fallback computes x * y + z with two
// intrinsics, which g++ contracts into an FMA (-ffp-contract=fast) but clang does not — half the
// FMA throughput, and a second rounding. loom calls these instead of xsimd::fma / xsimd::fnma.
#pragma once
#include <type_traits>

#include "../core/config.hpp"
#include "arch.hpp"

namespace loom::simd {

namespace detail {
template <class A>
inline constexpr bool is_avx512 = false;
#if XSIMD_WITH_AVX512F
template <class A>
  requires std::is_base_of_v<xsimd::avx512f, A>
inline constexpr bool is_avx512<A> = true;
#endif
}  // namespace detail

/// x * y + z, rounded once.
template <class T, class A>
LOOM_INLINE xsimd::batch<T, A> fma(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& y, const xsimd::batch<T, A>& z) {
#if XSIMD_WITH_AVX512F
  if constexpr (detail::is_avx512<A> && std::is_same_v<T, float>)
    return _mm512_fmadd_ps(x, y, z);
  else if constexpr (detail::is_avx512<A> && std::is_same_v<T, double>)
    return _mm512_fmadd_pd(x, y, z);
  else
#endif
    return xsimd::fma(x, y, z);
}

/// z - x * y, rounded once.
template <class T, class A>
LOOM_INLINE xsimd::batch<T, A> fnma(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& y, const xsimd::batch<T, A>& z) {
#if XSIMD_WITH_AVX512F
  if constexpr (detail::is_avx512<A> && std::is_same_v<T, float>)
    return _mm512_fnmadd_ps(x, y, z);
  else if constexpr (detail::is_avx512<A> && std::is_same_v<T, double>)
    return _mm512_fnmadd_pd(x, y, z);
  else
#endif
    return xsimd::fnma(x, y, z);
}

}  // namespace loom::simd
