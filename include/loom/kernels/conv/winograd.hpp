// SPDX-License-Identifier: MIT
// loom/kernels/conv/winograd.hpp — 3 x 3, stride 1 convolutions by Winograd's minimal filtering
// F(4 x 4, 3 x 3) (Lavin & Gray, 2015): each 4 x 4 block of outputs is computed from a 6 x 6 block
// of inputs with 36 multiplications per (input, output) channel pair instead of 144, so the
// multiply-adds are a quarter of the direct method's, plus the transforms.
//
//   U = G g G^T        per (c, co): the 3 x 3 kernel to 6 x 6, once, when the weights are packed
//   V = B^T d B        per (tile, c): the 6 x 6 input block (padding included), vectors along c
//   M(xi) = V(xi) U(xi) 36 independent GEMMs (tiles x C) (C x CO): the register tile of direct.hpp
//   Y = A^T M A        per (tile, co): 4 x 4 outputs, the epilogue applied, stored (clipped)
//
// A work item is a run of 18 tiles (three register tiles) of one image for one block of output
// channels; its V and M live in per-thread scratch (36 x 18 x C and 36 x 18 x NR values).
// Accuracy: the transforms amplify rounding; docs/conv.md states the measured error.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>

#include "../../core/config.hpp"
#include "../../core/scratch.hpp"
#include "../../simd/arch.hpp"
#include "../../simd/fma.hpp"
#include "../../simd/memory.hpp"
#include "direct.hpp"
#include "params.hpp"

namespace loom::conv_detail {

/// B^T x for 6 values (scalars or vectors): the input transform's 1-D step.
template <class B>
LOOM_INLINE void winograd_bt(const B& x0, const B& x1, const B& x2, const B& x3, const B& x4, const B& x5, B* r) {
  using T = typename B::value_type;
  const B four(T(4)), five(T(5)), two(T(2));
  r[0] = simd::fma(four, x0, simd::fnma(five, x2, x4));
  r[1] = simd::fnma(four, x1 + x2, x3 + x4);
  r[2] = simd::fma(four, x1 - x2, x4 - x3);
  r[3] = simd::fma(two, x3 - x1, x4 - x2);
  r[4] = simd::fma(two, x1 - x3, x4 - x2);
  r[5] = simd::fma(four, x1, simd::fnma(five, x3, x5));
}

/// A^T x for 6 values: the output transform's 1-D step (6 -> 4).
template <class B>
LOOM_INLINE void winograd_at(const B& x0, const B& x1, const B& x2, const B& x3, const B& x4, const B& x5, B* r) {
  using T = typename B::value_type;
  const B a = x1 + x2, b = x1 - x2, c = x3 + x4, d = x3 - x4;
  r[0] = x0 + a + c;
  r[1] = simd::fma(B(T(2)), d, b);
  r[2] = simd::fma(B(T(4)), c, a);
  r[3] = simd::fma(B(T(8)), d, b) + x5;
}

/// Tiles per work item: three register tiles of the GEMM step.
template <class P, index_t V>
inline constexpr index_t winograd_run = 3 * tile_pixels<P, V>;

struct winograd_v_scratch {};
struct winograd_m_scratch {};

/// One GEMM step: tiles t0 .. t0 + MR - 1 of position xi, M(xi) = V(xi) U(xi) for NR channels.
template <class P, index_t V>
void winograd_gemm(index_t C, const typename P::value_type* __restrict vx, index_t cp, const typename P::value_type* __restrict ux,
                   typename P::value_type* __restrict mx) {
  using T = typename P::value_type;
  using B = simd::batch<T, std::size_t(P::lanes)>;
  constexpr index_t MR = tile_pixels<P, V>, W = P::lanes, NR = V * W;
  using pixels = std::make_integer_sequence<index_t, MR>;
  std::array<B, std::size_t(MR * V)> acc;
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    ((acc[Q] = B(T(0))), ...);
  }(std::make_integer_sequence<index_t, MR * V>{});
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 1
#endif
  for (index_t c = 0; c < C; ++c) {
    std::array<B, std::size_t(V)> w;
    [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
      ((w[R] = B::load_aligned(ux + c * NR + R * W)), ...);
    }(std::make_integer_sequence<index_t, V>{});
    [&]<index_t... M>(std::integer_sequence<index_t, M...>) LOOM_LAMBDA_INLINE {
      (dense_pixel<M>(acc, w, vx[M * cp + c]), ...);
    }(pixels{});
  }
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    (acc[Q].store_aligned(mx + (Q / V) * NR + (Q % V) * W), ...);
  }(std::make_integer_sequence<index_t, MR * V>{});
}

/// One work item: tiles q0 .. q0 + count - 1 of the batch (q = (n * TH + ty) * TW + tx: a run may
/// span images, so small images fill it), block b of NR output channels, U the block's
/// transformed weights.
template <class P, index_t V, class Epi>
void winograd_item(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const typename P::value_type* u,
                   const nhwc<typename P::value_type>& out, index_t q0, index_t count, index_t b, const Epi& epi) {
  using T = typename P::value_type;
  using B = simd::batch<T, std::size_t(P::lanes)>;
  constexpr index_t MR = tile_pixels<P, V>, W = P::lanes, NR = V * W, TB = winograd_run<P, V>;
  const index_t TW = (s.OW + 3) / 4, tiles = (s.OH + 3) / 4 * TW;
  const index_t cp = (s.C + W - 1) / W * W;  // a row of V per tile: channels rounded up to vectors
  T* vbuf = detail::scratch<T, winograd_v_scratch>(std::size_t(36 * TB * cp));
  T* mbuf = detail::scratch<T, winograd_m_scratch>(std::size_t(36 * TB * NR));
  const index_t groups = (count + MR - 1) / MR;
  const T pad = T(s.pad_value);

  // V = B^T d B for every tile of the run (tiles past `count`, up to whole register tiles, are 0).
  for (index_t t = 0; t < groups * MR; ++t) {
    if (t >= count) {
      for (index_t xi = 0; xi < 36; ++xi) std::fill_n(vbuf + (xi * TB + t) * cp, cp, T(0));
      continue;
    }
    const index_t n = (q0 + t) / tiles, q = (q0 + t) % tiles, y0 = q / TW * 4 - s.pt, x0 = q % TW * 4 - s.pl;
    for (index_t c = 0; c < cp; c += W) {
      const index_t live = std::min<index_t>(W, s.C - c);
      std::array<B, 36> d;
      for (index_t i = 0; i < 6; ++i)
        for (index_t j = 0; j < 6; ++j) {
          const index_t iy = y0 + i, ix = x0 + j;
          B& v = d[std::size_t(i * 6 + j)];
          // Lanes past C are never read by the GEMM step: a padded vector may fill them too.
          if (iy < 0 || iy >= s.H || ix < 0 || ix >= s.W) v = B(pad);
          else v = live == W ? B::load_unaligned(in.pixel(n, iy, ix) + c) : simd::load_first<B>(in.pixel(n, iy, ix) + c, live);
        }
      std::array<B, 36> x;  // B^T d, column by column
      for (std::size_t j = 0; j < 6; ++j) {
        B r[6];
        winograd_bt(d[j], d[6 + j], d[12 + j], d[18 + j], d[24 + j], d[30 + j], r);
        for (std::size_t i = 0; i < 6; ++i) x[i * 6 + j] = r[i];
      }
      for (std::size_t i = 0; i < 6; ++i) {  // (B^T d) B, row by row
        B r[6];
        winograd_bt(x[i * 6], x[i * 6 + 1], x[i * 6 + 2], x[i * 6 + 3], x[i * 6 + 4], x[i * 6 + 5], r);
        for (std::size_t j = 0; j < 6; ++j) r[j].store_aligned(vbuf + ((index_t(i * 6 + j)) * TB + t) * cp + c);
      }
    }
  }
  // M(xi) = V(xi) U(xi), three register tiles per position.
  for (index_t xi = 0; xi < 36; ++xi)
    for (index_t g = 0; g < groups; ++g)
      winograd_gemm<P, V>(s.C, vbuf + (xi * TB + g * MR) * cp, cp, u + xi * s.C * NR, mbuf + (xi * TB + g * MR) * NR);
  // Y = A^T M A per tile and vector of channels, then the epilogue, then the store.
  const index_t co0 = b * NR, nco = std::min<index_t>(NR, s.CO - co0);
  for (index_t t = 0; t < count; ++t) {
    const index_t n = (q0 + t) / tiles, q = (q0 + t) % tiles, oy0 = q / TW * 4, ox0 = q % TW * 4;
    for (index_t r = 0; r * W < nco; ++r) {
      std::array<B, 24> x;  // A^T M: 4 x 6
      for (std::size_t j = 0; j < 6; ++j) {
        B m[6], o[4];
        for (std::size_t i = 0; i < 6; ++i) m[i] = B::load_aligned(mbuf + (index_t(i * 6 + j) * TB + t) * NR + r * W);
        winograd_at(m[0], m[1], m[2], m[3], m[4], m[5], o);
        for (std::size_t i = 0; i < 4; ++i) x[i * 6 + j] = o[i];
      }
      const index_t lanes = std::min<index_t>(W, nco - r * W);
      for (index_t i = 0; i < 4 && oy0 + i < s.OH; ++i) {
        B o[4];
        const std::size_t k = std::size_t(i) * 6;
        winograd_at(x[k], x[k + 1], x[k + 2], x[k + 3], x[k + 4], x[k + 5], o);
        for (index_t j = 0; j < 4 && ox0 + j < s.OW; ++j)
          store_vector(o[j], out.pixel(n, oy0 + i, ox0 + j) + co0 + r * W, lanes, epi,
                       out_point{n, oy0 + i, ox0 + j, (n * s.OH + oy0 + i) * s.OW + ox0 + j}, co0 + r * W);
      }
    }
  }
}

template <class P, index_t V, class Epi>
void run_winograd_v(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const typename P::value_type* u,
                    const nhwc<typename P::value_type>& out, const Epi& epi) {
  constexpr index_t NR = V * P::lanes, TB = winograd_run<P, V>;
  const index_t blocks = (s.CO + NR - 1) / NR;
  const index_t tiles = s.N * ((s.OH + 3) / 4) * ((s.OW + 3) / 4), runs = (tiles + TB - 1) / TB;
  // Runs innermost: a thread's consecutive items share one block of transformed weights.
  for_items(blocks * runs, [&](index_t t) {
    const index_t r = t % runs, b = t / runs;
    winograd_item<P, V>(s, in, u + b * 36 * s.C * NR, out, r * TB, std::min(TB, tiles - r * TB), b, epi);
  });
}

/// The Winograd path, for weights packed for it (the tile width they were packed for).
template <class P, class Epi>
void run_winograd(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, index_t vectors,
                  const typename P::value_type* u, const nhwc<typename P::value_type>& out, const Epi& epi) {
  [&]<index_t... V>(std::integer_sequence<index_t, V...>) {
    ([&] {
      if constexpr (tile_width_compiled<P>(V + 1)) {
        if (vectors == V + 1) run_winograd_v<P, V + 1>(s, in, u, out, epi);
      }
    }(), ...);
  }(std::make_integer_sequence<index_t, P::vectors>{});
}

}  // namespace loom::conv_detail
