// SPDX-License-Identifier: MIT
// loom/simd/memory.hpp — vector loads and stores beyond xsimd 8.1: masked (first n lanes, the
// rest read as zero and never written), strided (gather/scatter by a run-time element stride).
// AVX-512 uses its mask registers; other targets go through a small aligned buffer.
#pragma once
#include <cstring>

#include "../core/config.hpp"
#include "arch.hpp"

namespace loom::simd {

template <class B>
using elem_t = typename B::value_type;

namespace detail {
#if XSIMD_WITH_AVX512F
template <class T>
inline constexpr bool avx512_masked = sizeof(T) == 4 || sizeof(T) == 8;
template <class B>
inline constexpr bool use_avx512_mask = sizeof(B) == 64 && avx512_masked<elem_t<B>>;
#else
template <class B>
inline constexpr bool use_avx512_mask = false;
#endif
}  // namespace detail

/// Lanes [0, n) from p, lanes [n, W) zero; never touches p[n..W).
template <class B>
LOOM_INLINE B load_first(const elem_t<B>* p, index_t n) {
  using T = elem_t<B>;
  constexpr std::size_t W = B::size;
#if XSIMD_WITH_AVX512F
  if constexpr (detail::use_avx512_mask<B>) {
    if constexpr (sizeof(T) == 4) {
      const auto m = static_cast<__mmask16>((1u << n) - 1u);
      if constexpr (std::is_same_v<T, float>) return B(_mm512_maskz_loadu_ps(m, p));
      else return B(_mm512_maskz_loadu_epi32(m, p));
    } else {
      const auto m = static_cast<__mmask8>((1u << n) - 1u);
      if constexpr (std::is_same_v<T, double>) return B(_mm512_maskz_loadu_pd(m, p));
      else return B(_mm512_maskz_loadu_epi64(m, p));
    }
  }
#endif
  // Emulated through a buffer: a whole vector (a run-time n that is often W) loads directly.
  if (n == static_cast<index_t>(W)) return B::load_unaligned(p);
  alignas(64) T buf[W] = {};
  std::memcpy(buf, p, sizeof(T) * static_cast<std::size_t>(n));
  return B::load_aligned(buf);
}

/// Writes lanes [0, n) of v to p; p[n..W) untouched.
template <class B>
LOOM_INLINE void store_first(elem_t<B>* p, const B& v, index_t n) {
  using T = elem_t<B>;
  constexpr std::size_t W = B::size;
#if XSIMD_WITH_AVX512F
  if constexpr (detail::use_avx512_mask<B>) {
    if constexpr (sizeof(T) == 4) {
      const auto m = static_cast<__mmask16>((1u << n) - 1u);
      if constexpr (std::is_same_v<T, float>) _mm512_mask_storeu_ps(p, m, v);
      else _mm512_mask_storeu_epi32(p, m, v);
    } else {
      const auto m = static_cast<__mmask8>((1u << n) - 1u);
      if constexpr (std::is_same_v<T, double>) _mm512_mask_storeu_pd(p, m, v);
      else _mm512_mask_storeu_epi64(p, m, v);
    }
    return;
  }
#endif
  alignas(64) T buf[W];
  v.store_aligned(buf);
  std::memcpy(p, buf, sizeof(T) * static_cast<std::size_t>(n));
}

/// Writes lanes [0, n) of v to p, n <= W: a whole vector's plain store when n == W, else
/// store_first (the kernels' row and channel tails).
template <class B>
LOOM_INLINE void store_lanes(elem_t<B>* p, const B& v, index_t n) {
  if (n == static_cast<index_t>(B::size)) v.store_unaligned(p);
  else store_first<B>(p, v, n);
}

/// Lanes p[0], p[s], p[2s], ... (first n of them when n < W, the rest zero).
template <class B>
LOOM_INLINE B load_strided(const elem_t<B>* p, index_t s, index_t n = B::size) {
  using T = elem_t<B>;
  alignas(64) T buf[B::size] = {};
  for (index_t l = 0; l < n; ++l) buf[l] = p[l * s];
  return B::load_aligned(buf);
}

template <class B>
LOOM_INLINE void store_strided(elem_t<B>* p, index_t s, const B& v, index_t n = B::size) {
  using T = elem_t<B>;
  alignas(64) T buf[B::size];
  v.store_aligned(buf);
  for (index_t l = 0; l < n; ++l) p[l * s] = buf[l];
}

/// Lane mask with lanes [0, n) true.
template <class B>
LOOM_INLINE typename B::batch_bool_type first_lanes(index_t n) {
  // Integer lanes compare in their own type (lane indices fit every one of them: W <= 64), so
  // the mask is B's; float lanes compare as the same-size integers and convert the mask.
  using I = std::conditional_t<std::is_integral_v<elem_t<B>>, elem_t<B>, xsimd::as_integer_t<elem_t<B>>>;
  using IB = xsimd::batch<I, typename B::arch_type>;
  alignas(64) I iota[B::size];
  for (std::size_t l = 0; l < B::size; ++l) iota[l] = static_cast<I>(l);
  const auto mask = IB::load_aligned(iota) < IB(static_cast<I>(n));
  if constexpr (std::is_integral_v<elem_t<B>>)
    return mask;
  else
    return xsimd::bool_cast(mask);
}

}  // namespace loom::simd
