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

/// B^T x for 4 values: F(2 x 2, 3 x 3)'s input transform.
template <class B>
LOOM_INLINE void winograd_bt(const B& x0, const B& x1, const B& x2, const B& x3, B* r) {
  r[0] = x0 - x2;
  r[1] = x1 + x2;
  r[2] = x2 - x1;
  r[3] = x1 - x3;
}

/// A^T x for 4 values: F(2 x 2, 3 x 3)'s output transform (4 -> 2).
template <class B>
LOOM_INLINE void winograd_at(const B& x0, const B& x1, const B& x2, const B& x3, B* r) {
  r[0] = x0 + x1 + x2;
  r[1] = x1 - x2 - x3;
}

/// The 1-D steps of F(M x M, 3 x 3) on the A = M + 2 values x(0), x(1), ...: B^T (A -> A) and
/// A^T (A -> M). (x hands out array elements by constant index once unrolled, so the arrays stay
/// in registers: a pointer into them kept them in memory.)
template <index_t M, class B, class X>
LOOM_INLINE void input_step(const X& x, B* r) {
  if constexpr (M == 4) winograd_bt(x(0), x(1), x(2), x(3), x(4), x(5), r);
  else winograd_bt(x(0), x(1), x(2), x(3), r);
}
template <index_t M, class B, class X>
LOOM_INLINE void output_step(const X& x, B* r) {
  if constexpr (M == 4) winograd_at(x(0), x(1), x(2), x(3), x(4), x(5), r);
  else winograd_at(x(0), x(1), x(2), x(3), r);
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

/// Where tile q of the batch lies (q = (n * TH + ty) * TW + tx): its image and first output row
/// and column.
struct winograd_tile {
  index_t n, oy, ox;
};
template <index_t M>
LOOM_INLINE winograd_tile tile_at(const conv2d_shape& s, index_t q) {
  const index_t TW = (s.OW + M - 1) / M, per_image = (s.OH + M - 1) / M * TW, r = q % per_image;
  return {q / per_image, r / TW * M, r % TW * M};
}

/// f(out_point) for each output pixel of tile `at` inside the image, rows in order.
template <index_t M, class F>
LOOM_INLINE void for_tile_pixels(const conv2d_shape& s, const winograd_tile& at, const F& f) {
  for (index_t i = 0; i < M && at.oy + i < s.OH; ++i)
    for (index_t j = 0; j < M && at.ox + j < s.OW; ++j)
      f(out_point{at.n, at.oy + i, at.ox + j, (at.n * s.OH + at.oy + i) * s.OW + at.ox + j});
}

/// Block b of NR output channels for tiles q0 .. q0 + count - 1, their V in vbuf: the products
/// M(xi) = V(xi) U(xi) into mbuf, then Y = A^T M A per tile, the epilogue, the store.
template <index_t M, class P, index_t V, class Epi>
void winograd_block(const conv2d_shape& s, const typename P::value_type* vbuf, typename P::value_type* mbuf,
                    const typename P::value_type* u, const nhwc<typename P::value_type>& out, index_t q0, index_t count, index_t b,
                    const Epi& epi) {
  using T = typename P::value_type;
  using B = simd::batch<T, std::size_t(P::lanes)>;
  constexpr index_t MR = tile_pixels<P, V>, W = P::lanes, NR = V * W, TB = winograd_run<P, V>;
  constexpr index_t A = M + 2, A2 = A * A;
  constexpr std::size_t a = std::size_t(A);
  const index_t cp = (s.C + W - 1) / W * W, groups = (count + MR - 1) / MR;
  const index_t co0 = b * NR, nco = std::min<index_t>(NR, s.CO - co0);
  const T* ub = u + b * A2 * s.C * NR;
  // What the epilogue reads at the tiles' pixels (skip(n, y, x, co)) is asked for into L2 over the
  // last third of the products, a share of the tiles after each position: asked for before all
  // of them, the lines were gone again when the output loop read them (the transformed weights
  // stream through L2 in between; docs/tuning.md#fused-epilogues).
  constexpr index_t spread_from = A2 - A2 / 3;
  [[maybe_unused]] index_t asked = 0;  // tiles whose reads were asked for
  // M(xi) = V(xi) U(xi), three register tiles per position.
  for (index_t xi = 0; xi < A2; ++xi) {
    for (index_t g = 0; g < groups; ++g)
      winograd_gemm<P, V>(s.C, vbuf + (xi * TB + g * MR) * cp, cp, ub + xi * s.C * NR, mbuf + (xi * TB + g * MR) * NR);
    if constexpr (prefetching_epilogue<Epi>)
      for (const index_t until = count * std::max<index_t>(xi + 1 - spread_from, 0) / (A2 - spread_from); asked < until; ++asked)
        for_tile_pixels<M>(s, tile_at<M>(s, q0 + asked), [&](const out_point& p) { epi.prefetch_at(p, co0, nco); });
  }
  // Y = A^T M A per tile and vector of channels, then the epilogue, then the store.
  constexpr bool plain_store = gemm_detail::is_identity_epilogue<Epi>;
  // With an epilogue, the tile's outputs wait here so that it runs pixel by pixel, its per-pixel
  // work (skip(n, y, x, co)'s address) once for all the pixel's vectors.
  alignas(64) std::array<T, plain_store ? 1 : std::size_t(M * M * NR)> ybuf;
  for (index_t t = 0; t < count; ++t) {
    const winograd_tile at = tile_at<M>(s, q0 + t);
    const index_t rows = std::min<index_t>(M, s.OH - at.oy), cols = std::min<index_t>(M, s.OW - at.ox);
    for (index_t r = 0; r * W < nco; ++r) {
      std::array<B, std::size_t(M * A)> x;  // A^T M: M x A
      for (std::size_t j = 0; j < a; ++j) {
        B m[A], o[M];
        for (std::size_t i = 0; i < a; ++i) m[i] = B::load_aligned(mbuf + (index_t(i * a + j) * TB + t) * NR + r * W);
        output_step<M>([&](std::size_t i) -> const B& { return m[i]; }, o);
        for (std::size_t i = 0; i < std::size_t(M); ++i) x[i * a + j] = o[i];
      }
      const index_t lanes = std::min<index_t>(W, nco - r * W);
      for (index_t i = 0; i < rows; ++i) {
        B o[M];
        output_step<M>([&](std::size_t j) -> const B& { return x[std::size_t(i) * a + j]; }, o);
        for (index_t j = 0; j < cols; ++j) {
          if constexpr (plain_store) simd::store_lanes(out.pixel(at.n, at.oy + i, at.ox + j) + co0 + r * W, o[j], lanes);
          else o[j].store_aligned(ybuf.data() + (i * M + j) * NR + r * W);
        }
      }
    }
    if constexpr (!plain_store) {
      for (index_t i = 0; i < rows; ++i)
        for (index_t j = 0; j < cols; ++j) {
          const index_t y = at.oy + i, xo = at.ox + j;
          auto pe = epilogue_at(epi, out_point{at.n, y, xo, (at.n * s.OH + y) * s.OW + xo});
          T* dst = out.pixel(at.n, y, xo) + co0;
          for (index_t r = 0; r * W < nco; ++r)
            store_through(B::load_aligned(ybuf.data() + (i * M + j) * NR + r * W), dst + r * W, std::min<index_t>(W, nco - r * W), pe,
                          co0 + r * W);
        }
    }
  }
}

/// One work item of F(M x M, 3 x 3): tiles q0 .. q0 + count - 1 of the batch (a run may span
/// images, so small images fill it), blocks b0 .. b1 - 1 of NR output channels, U the transformed
/// weights of all blocks. The run's V is computed once for all of them.
template <index_t M, class P, index_t V, class Epi>
void winograd_item(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const typename P::value_type* u,
                   const nhwc<typename P::value_type>& out, index_t q0, index_t count, index_t b0, index_t b1, const Epi& epi) {
  using T = typename P::value_type;
  using B = simd::batch<T, std::size_t(P::lanes)>;
  constexpr index_t MR = tile_pixels<P, V>, W = P::lanes, NR = V * W, TB = winograd_run<P, V>;
  constexpr index_t A = M + 2, A2 = A * A;  // the input tile's side, and the positions xi
  constexpr std::size_t a = std::size_t(A);
  const index_t cp = (s.C + W - 1) / W * W;  // a row of V per tile: channels rounded up to vectors
  T* vbuf = detail::scratch<T, winograd_v_scratch>(std::size_t(A2 * TB * cp));
  T* mbuf = detail::scratch<T, winograd_m_scratch>(std::size_t(A2 * TB * NR));
  const index_t groups = (count + MR - 1) / MR;
  const T pad = T(s.pad_value);

  // V = B^T d B for every tile of the run (tiles past `count`, up to whole register tiles, are 0).
  for (index_t t = 0; t < groups * MR; ++t) {
    if (t >= count) {
      for (index_t xi = 0; xi < A2; ++xi) std::fill_n(vbuf + (xi * TB + t) * cp, cp, T(0));
      continue;
    }
    const winograd_tile at = tile_at<M>(s, q0 + t);
    const index_t y0 = at.oy - s.pt, x0 = at.ox - s.pl;
    for (index_t c = 0; c < cp; c += W) {
      const index_t live = std::min<index_t>(W, s.C - c);
      std::array<B, std::size_t(A2)> d;
      for (index_t i = 0; i < A; ++i)
        for (index_t j = 0; j < A; ++j) {
          const index_t iy = y0 + i, ix = x0 + j;
          B& v = d[std::size_t(i * A + j)];
          // Lanes past C are never read by the GEMM step: a padded vector may fill them too.
          if (iy < 0 || iy >= s.H || ix < 0 || ix >= s.W) v = B(pad);
          else v = live == W ? B::load_unaligned(in.pixel(at.n, iy, ix) + c) : simd::load_first<B>(in.pixel(at.n, iy, ix) + c, live);
        }
      std::array<B, std::size_t(A2)> x;  // B^T d, column by column
      for (std::size_t j = 0; j < a; ++j) {
        B r[A];
        input_step<M>([&](std::size_t i) -> const B& { return d[i * a + j]; }, r);
        for (std::size_t i = 0; i < a; ++i) x[i * a + j] = r[i];
      }
      for (std::size_t i = 0; i < a; ++i) {  // (B^T d) B, row by row
        B r[A];
        input_step<M>([&](std::size_t j) -> const B& { return x[i * a + j]; }, r);
        for (std::size_t j = 0; j < a; ++j) r[j].store_aligned(vbuf + ((index_t(i * a + j)) * TB + t) * cp + c);
      }
    }
  }
  for (index_t b = b0; b < b1; ++b) winograd_block<M, P, V>(s, vbuf, mbuf, u, out, q0, count, b, epi);
}

/// Blocks of output channels per work item, for `runs` runs of tiles on a team of `team`: as few
/// as give the team enough items (as many as the team, a multiple of it, or at least four per
/// thread), since each item computes its run's V again.
constexpr index_t winograd_blocks_per_item(index_t blocks, index_t runs, index_t team) {
  index_t spans = 1;
  while (spans < blocks && (spans * runs < team || (spans * runs % team != 0 && spans * runs < 4 * team))) ++spans;
  return (blocks + spans - 1) / spans;
}

template <index_t M, class P, index_t V, class Epi>
void run_winograd_v(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const typename P::value_type* u,
                    const nhwc<typename P::value_type>& out, const Epi& epi) {
  constexpr index_t NR = V * P::lanes, TB = winograd_run<P, V>;
  const index_t blocks = (s.CO + NR - 1) / NR, tiles = s.tiles(M), runs = (tiles + TB - 1) / TB;
  const index_t per = winograd_blocks_per_item(blocks, runs, loom::get_num_threads()), spans = (blocks + per - 1) / per;
  // Runs innermost: a thread's consecutive items share one span of transformed weights.
  for_items(spans * runs, [&](index_t t) {
    const index_t r = t % runs, b0 = t / runs * per;
    winograd_item<M, P, V>(s, in, u, out, r * TB, std::min(TB, tiles - r * TB), b0, std::min(blocks, b0 + per), epi);
  });
}

/// The Winograd path F(M x M, 3 x 3), for weights transformed for it (the tile width they were
/// packed for).
template <index_t M, class P, class Epi>
void run_winograd(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, index_t vectors,
                  const typename P::value_type* u, const nhwc<typename P::value_type>& out, const Epi& epi) {
  static_assert(M == 4 || M == 2, "loom: Winograd F(4 x 4, 3 x 3) or F(2 x 2, 3 x 3)");
  [&]<index_t... V>(std::integer_sequence<index_t, V...>) {
    ([&] {
      if constexpr (tile_width_compiled<P>(V + 1)) {
        if (vectors == V + 1) run_winograd_v<M, P, V + 1>(s, in, u, out, epi);
      }
    }(), ...);
  }(std::make_integer_sequence<index_t, P::vectors>{});
}

}  // namespace loom::conv_detail
