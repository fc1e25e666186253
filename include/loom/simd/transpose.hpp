// SPDX-License-Identifier: MIT
// loom/simd/transpose.hpp — square blocks of W x W elements (W the lanes of a vector) transposed
// in registers: W row loads, the shuffles of the target (AVX-512, AVX; other targets through a
// small buffer), W row stores. Only bits move, so any 4- or 8-byte type can go through the float
// or double version. The convolution's layout copies and the permutation engine use them.
#pragma once
#include <algorithm>
#include <array>

#include "../core/config.hpp"
#include "arch.hpp"
#include "memory.hpp"

namespace loom::simd {

/// Transposes the square block of rows r in place: r[i] lane j becomes r[j] lane i.
template <class B>
LOOM_INLINE void transpose_registers(std::array<B, B::size>& r) {
  using T = typename B::value_type;
  constexpr std::size_t W = B::size;
#if XSIMD_WITH_AVX512F
  if constexpr (sizeof(B) == 64 && sizeof(T) == 4) {
    // Unpack and shuffle within 128-bit lanes: u[4k + q], lane l = rows 4k..4k+3 of column 4l + q;
    // then two rounds of 128-bit lane shuffles gather each column's four lanes.
    __m512 t[16], u[16];
    for (std::size_t j = 0; j < 8; ++j) {
      t[2 * j] = _mm512_unpacklo_ps(r[2 * j], r[2 * j + 1]);
      t[2 * j + 1] = _mm512_unpackhi_ps(r[2 * j], r[2 * j + 1]);
    }
    for (std::size_t k = 0; k < 4; ++k) {
      u[4 * k + 0] = _mm512_shuffle_ps(t[4 * k + 0], t[4 * k + 2], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * k + 1] = _mm512_shuffle_ps(t[4 * k + 0], t[4 * k + 2], _MM_SHUFFLE(3, 2, 3, 2));
      u[4 * k + 2] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * k + 3] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (std::size_t k = 0; k < 2; ++k)
      for (std::size_t q = 0; q < 4; ++q) {
        t[8 * k + q] = _mm512_shuffle_f32x4(u[8 * k + q], u[8 * k + 4 + q], _MM_SHUFFLE(2, 0, 2, 0));
        t[8 * k + 4 + q] = _mm512_shuffle_f32x4(u[8 * k + q], u[8 * k + 4 + q], _MM_SHUFFLE(3, 1, 3, 1));
      }
    for (std::size_t q = 0; q < 8; ++q) {
      r[q] = B(_mm512_shuffle_f32x4(t[q], t[8 + q], _MM_SHUFFLE(2, 0, 2, 0)));
      r[q + 8] = B(_mm512_shuffle_f32x4(t[q], t[8 + q], _MM_SHUFFLE(3, 1, 3, 1)));
    }
    return;
  }
  if constexpr (sizeof(B) == 64 && sizeof(T) == 8) {
    // t[2j + q], 128-bit lane l = rows 2j, 2j + 1 of column 2l + q; then the same lane shuffles.
    __m512d t[8], u[8];
    for (std::size_t j = 0; j < 4; ++j) {
      t[2 * j] = _mm512_unpacklo_pd(r[2 * j], r[2 * j + 1]);
      t[2 * j + 1] = _mm512_unpackhi_pd(r[2 * j], r[2 * j + 1]);
    }
    for (std::size_t k = 0; k < 2; ++k)
      for (std::size_t q = 0; q < 2; ++q) {
        u[4 * k + q] = _mm512_shuffle_f64x2(t[4 * k + q], t[4 * k + 2 + q], _MM_SHUFFLE(2, 0, 2, 0));
        u[4 * k + 2 + q] = _mm512_shuffle_f64x2(t[4 * k + q], t[4 * k + 2 + q], _MM_SHUFFLE(3, 1, 3, 1));
      }
    for (std::size_t q = 0; q < 4; ++q) {
      r[q] = B(_mm512_shuffle_f64x2(u[q], u[4 + q], _MM_SHUFFLE(2, 0, 2, 0)));
      r[q + 4] = B(_mm512_shuffle_f64x2(u[q], u[4 + q], _MM_SHUFFLE(3, 1, 3, 1)));
    }
    return;
  }
#endif
#if XSIMD_WITH_AVX
  if constexpr (sizeof(B) == 32 && sizeof(T) == 4) {
    __m256 t[8], u[8];
    for (std::size_t j = 0; j < 4; ++j) {
      t[2 * j] = _mm256_unpacklo_ps(r[2 * j], r[2 * j + 1]);
      t[2 * j + 1] = _mm256_unpackhi_ps(r[2 * j], r[2 * j + 1]);
    }
    for (std::size_t k = 0; k < 2; ++k) {
      u[4 * k + 0] = _mm256_shuffle_ps(t[4 * k + 0], t[4 * k + 2], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * k + 1] = _mm256_shuffle_ps(t[4 * k + 0], t[4 * k + 2], _MM_SHUFFLE(3, 2, 3, 2));
      u[4 * k + 2] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * k + 3] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (std::size_t q = 0; q < 4; ++q) {
      r[q] = B(_mm256_permute2f128_ps(u[q], u[4 + q], 0x20));
      r[q + 4] = B(_mm256_permute2f128_ps(u[q], u[4 + q], 0x31));
    }
    return;
  }
  if constexpr (sizeof(B) == 32 && sizeof(T) == 8) {
    const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = B(_mm256_permute2f128_pd(t0, t2, 0x20));
    r[1] = B(_mm256_permute2f128_pd(t1, t3, 0x20));
    r[2] = B(_mm256_permute2f128_pd(t0, t2, 0x31));
    r[3] = B(_mm256_permute2f128_pd(t1, t3, 0x31));
    return;
  }
#endif
  alignas(64) std::array<T, W * W> buf;
  for (std::size_t i = 0; i < W; ++i) r[i].store_aligned(buf.data() + i * W);
  for (std::size_t j = 0; j < W; ++j) {
    alignas(64) std::array<T, W> col;
    for (std::size_t i = 0; i < W; ++i) col[i] = buf[i * W + j];
    r[j] = B::load_aligned(col.data());
  }
}

/// dst[i * ds + j] = src[j * ss + i] for i < ni, j < nj (1 <= ni, nj <= B::size): src rows past nj
/// read as zero, dst rows past ni not stored; nothing past ni lanes of a src row or nj lanes of a
/// dst row is read or written.
template <class B>
LOOM_INLINE void transpose_block(const typename B::value_type* src, index_t ss, typename B::value_type* dst, index_t ds, index_t ni,
                                 index_t nj) {
  constexpr index_t W = index_t(B::size);
  std::array<B, B::size> r;
  if (ni == W && nj == W) {
    for (index_t j = 0; j < W; ++j) r[std::size_t(j)] = B::load_unaligned(src + j * ss);
    transpose_registers(r);
    for (index_t i = 0; i < W; ++i) r[std::size_t(i)].store_unaligned(dst + i * ds);
    return;
  }
  for (index_t j = 0; j < W; ++j) {
    if (j >= nj) r[std::size_t(j)] = B(typename B::value_type(0));
    else if (ni == W) r[std::size_t(j)] = B::load_unaligned(src + j * ss);
    else r[std::size_t(j)] = simd::load_first<B>(src + j * ss, ni);
  }
  transpose_registers(r);
  for (index_t i = 0; i < ni; ++i) {
    if (nj == W) r[std::size_t(i)].store_unaligned(dst + i * ds);
    else simd::store_first<B>(dst + i * ds, r[std::size_t(i)], nj);
  }
}

/// dst[i * ds + j] = src[j * ss + i] for i < ni, j < nj, in blocks.
template <class B>
void transpose(const typename B::value_type* src, index_t ss, typename B::value_type* dst, index_t ds, index_t ni, index_t nj) {
  constexpr index_t W = index_t(B::size);
  for (index_t i = 0; i < ni; i += W)
    for (index_t j = 0; j < nj; j += W)
      transpose_block<B>(src + j * ss + i, ss, dst + i * ds + j, ds, std::min(W, ni - i), std::min(W, nj - j));
}

}  // namespace loom::simd
