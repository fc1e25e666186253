// SPDX-License-Identifier: MIT
// loom/kernels/conv/layout.hpp — activations in and out of NHWC around the kernels: an (N, H, W,
// C) view whose channels are not unit stride (an NCHW tensor seen through a permuted view) is
// gathered into a dense NHWC buffer, and the kernel's dense NHWC result scattered back into such a
// view. A copy: every value is moved as it is, so the result has the NHWC call's bits.
//
// Where the pixels are unit stride (NCHW; rows may be padded, then each row is a run, else each
// image's plane is one) it is a (pixels x channels) transpose in blocks of L x L, L the lanes of
// a native vector, transposed in registers (AVX-512 and AVX shuffles; other targets through a
// small buffer); a block at the end of a run or of the channels loads and stores only its own
// lanes. The work items of loom's team are strips of about 64 L pixels x one block of L channels
// (relayout() says why). Any other strides: a plain loop per row of pixels, the channels or the
// pixels innermost, whichever is nearer.
//
// The buffers are the calling thread's scratch (core/scratch.hpp), one for the input and one for
// the output: a call allocates (and zeroes) nothing once they have grown (a fresh pair of
// tensors cost more than the copies: page faults).
#pragma once
#include <algorithm>
#include <array>
#include <cstdlib>

#include "../../core/config.hpp"
#include "../../core/scratch.hpp"
#include "../../simd/arch.hpp"
#include "../../simd/memory.hpp"
#include "direct.hpp"

namespace loom::conv_detail {

/// The scratch purposes of the NHWC copies of an input and of an output.
struct relayout_in_scratch {};
struct relayout_out_scratch {};

/// A rank-4 (N, H, W, C) view as pointer, extents and strides (one instantiation per element type).
template <class E>
struct strided4 {
  E* p;
  index_t N, H, W, C, sn, sh, sw, sc;
};

template <class E, class V>
strided4<E> strided_of(const V& v) {
  return {v.data(), v.extent(0), v.extent(1), v.extent(2), v.extent(3), v.stride(0), v.stride(1), v.stride(2), v.stride(3)};
}

namespace relayout_detail {

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

/// Copies between the view v and the dense NHWC buffer d of its extents: d from v (Gather) or v
/// from d.
template <bool Gather, class T, class VE, class DE>
void relayout(const strided4<VE>& v, DE* d) {
  using B = simd::batch<T, simd::native_width<T>>;
  constexpr index_t L = index_t(B::size);
  const index_t N = v.N, H = v.H, W = v.W, C = v.C;
  if (N == 0 || H == 0 || W == 0 || C == 0) return;
  // The pixels of a run are unit stride in v: a row, or a whole image when its rows follow each
  // other. Its pixel q is at v.p + n sn + row sh + q, and at d + ((n H + row) W + q) C.
  const bool merged = H == 1 || v.sh == W;
  const index_t run = merged ? H * W : W, runs = merged ? 1 : H;
  if (C > 1 && v.sc != 1 && (v.sw == 1 || W == 1) && run > 1) {
    // An item: a strip of up to S pixels of a run (strips of about 64 L pixels, all of one size
    // but the last), for one block of L channels. A thread walks each of its strips a block of
    // channels at a time: L long streams in the strided view and one in the dense buffer rather
    // than C streams open at once (docs/tuning.md#convolution-layouts). The blocks
    // of a strip are consecutive items, so a team splits the pixels as the kernels do.
    const index_t parts = (run + 64 * L - 1) / (64 * L), S = (run + parts * L - 1) / (parts * L) * L;
    const index_t strips = (run + S - 1) / S, blocks = (C + L - 1) / L;
    for_items(N * runs * strips * blocks, [&](index_t t) {
      const index_t b = t % blocks, strip = t / blocks % strips, row = t / blocks / strips % runs, n = t / blocks / strips / runs;
      const index_t q = strip * S, np = std::min(S, run - q), c = b * L, nc = std::min(L, C - c);
      VE* vp = v.p + n * v.sn + row * v.sh + q + c * v.sc;
      DE* dp = d + ((n * H + row) * W + q) * C + c;
      if constexpr (Gather) transpose<B>(vp, v.sc, dp, C, np, nc);
      else transpose<B>(dp, C, vp, v.sc, nc, np);
    });
    return;
  }
  // Any strides: a row of pixels at a time, the nearer of pixels and channels innermost.
  const bool channels_inner = std::abs(v.sc) <= std::abs(v.sw);
  for_items(N * H, [&](index_t t) {
    const index_t n = t / H, y = t % H;
    VE* vp = v.p + n * v.sn + y * v.sh;
    DE* dp = d + (n * H + y) * W * C;
    auto move = [&](index_t x, index_t c) LOOM_LAMBDA_INLINE {
      if constexpr (Gather) dp[x * C + c] = vp[x * v.sw + c * v.sc];
      else vp[x * v.sw + c * v.sc] = dp[x * C + c];
    };
    if (channels_inner && v.sc == 1) {
      for (index_t x = 0; x < W; ++x)
        if constexpr (Gather) std::copy_n(vp + x * v.sw, C, dp + x * C);
        else std::copy_n(dp + x * C, C, vp + x * v.sw);
    } else if (channels_inner) {
      for (index_t x = 0; x < W; ++x)
        for (index_t c = 0; c < C; ++c) move(x, c);
    } else {
      for (index_t c = 0; c < C; ++c)
        for (index_t x = 0; x < W; ++x) move(x, c);
    }
  });
}

}  // namespace relayout_detail

/// The dense NHWC view of a buffer of n x h x w x c elements.
template <class T>
nhwc<T> dense_nhwc(T* p, index_t h, index_t w, index_t c) {
  return {p, h * w * c, w * c, c};
}

/// A dense NHWC copy of the (N, H, W, C) view v (any strides), in the calling thread's scratch for
/// Purpose (valid until the next call for Purpose on this thread).
template <class Purpose, class T>
T* gather_nhwc(const strided4<const T>& v) {
  T* d = loom::detail::scratch<T, Purpose>(std::size_t(std::max<index_t>(1, v.N * v.H * v.W * v.C)));
  relayout_detail::relayout<true, T>(v, d);
  return d;
}

/// v = the dense NHWC buffer d of v's extents (v any strides).
template <class T>
void scatter_nhwc(const T* d, const strided4<T>& v) {
  relayout_detail::relayout<false, T>(v, d);
}

}  // namespace loom::conv_detail
