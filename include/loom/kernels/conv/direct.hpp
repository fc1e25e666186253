// SPDX-License-Identifier: MIT
// loom/kernels/conv/direct.hpp — direct convolution on NHWC activations, reading the input where
// it is (no im2col): a register tile of output pixels x output channels accumulates over the taps
// and input channels, one broadcast of an input value per pixel and a few vectors of packed
// weights per step (the GEMM micro-kernel's shape, with the A sliver read from the input rows).
//
// Contract of both kernels:
//   in   NHWC with unit channel stride, any N, H, W strides; out likewise
//   pw   weights packed for the same policy (pack.hpp)
//   epi  applied to each vector of the tile before it is stored:
//        v = epi.apply(v, i, j, lanes) with i the output pixel ((n * OH + oy) * OW + ox) and j
//        the first of its `lanes` output channels (the GEMM engine's epilogue, with the output
//        seen as an (N * OH * OW) x CO matrix)
// Padded taps read a row of zeros (dense) or are skipped (depthwise); nothing outside `in` is
// read. A row's last tile, when the row is not a multiple of the tile, recomputes pixels of the
// row (clamped) and stores only its own.
#pragma once
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "../../core/config.hpp"
#include "../../core/threads.hpp"
#include "../../simd/arch.hpp"
#include "../../simd/fma.hpp"
#include "../../simd/memory.hpp"
#include "../gemm/epilogue.hpp"
#include "pack.hpp"
#include "params.hpp"
#include "policy.hpp"

namespace loom::conv_detail {

/// An NHWC view with unit channel stride, as the kernels read or write it.
template <class T>
struct nhwc {
  T* p;
  index_t sn, sh, sw;
  LOOM_INLINE T* pixel(index_t n, index_t y, index_t x) const { return p + n * sn + y * sh + x * sw; }
};

/// Pixels per tile for a tile of V vectors: the policy's own when V is its width, else as many as
/// the vector registers allow, at most 8 (each pixel holds a pointer in a general register).
template <class P, index_t V>
inline constexpr index_t tile_pixels =
    V == P::vectors ? P::pixels
                    : std::min<index_t>(8, (simd::vector_registers<typename P::value_type, std::size_t(P::lanes)> - V - 1) / V);

/// Stores vector r of pixel m's accumulators through the epilogue.
template <class B, class T, class Epi>
LOOM_INLINE void store_vector(B v, T* dst, index_t lanes, const Epi& epi, index_t pixel, index_t channel) {
  if constexpr (!gemm_detail::is_identity_epilogue<Epi>) v = epi.template apply<B>(v, pixel, channel, lanes);
  if (lanes == index_t(B::size)) v.store_unaligned(dst);
  else simd::store_first<B>(dst, v, lanes);
}

/// Pixel M's accumulators (vectors M * V ...) += a * w.
template <index_t M, class Acc, class Wv, class T>
LOOM_INLINE void dense_pixel(Acc& acc, const Wv& w, T a_value) {
  using B = typename Wv::value_type;
  constexpr index_t V = index_t(std::tuple_size_v<Wv>);
  const B a(a_value);
  [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
    ((acc[M * V + R] = simd::fma(a, w[R], acc[M * V + R])), ...);
  }(std::make_integer_sequence<index_t, V>{});
}

/// Stores the first `count` pixels of a tile of V vectors per pixel, `channels` channels each from
/// output channel `channel`, through the epilogue; where(m) gives pixel m's address and index.
/// The accumulators pass through a buffer so that this is one loop with one copy of the epilogue:
/// written out per vector, the epilogue (inlined, masked and unmasked) was compiled MR x V times
/// per kernel, most of what a convolution compiles.
template <index_t V, class Acc, class Epi, class Where>
LOOM_INLINE void store_tile(const Acc& acc, index_t count, index_t channels, const Epi& epi, index_t channel, const Where& where) {
  using B = typename Acc::value_type;
  using T = typename B::value_type;
  constexpr index_t W = index_t(B::size), N = index_t(std::tuple_size_v<Acc>);
  alignas(64) std::array<T, std::size_t(N * W)> buf;
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    (acc[Q].store_aligned(buf.data() + Q * W), ...);
  }(std::make_integer_sequence<index_t, N>{});
  for (index_t m = 0; m < count; ++m) {
    const auto [dst, pixel] = where(m);
    for (index_t r = 0; r < V && r * W < channels; ++r)
      store_vector(B::load_aligned(buf.data() + (m * V + r) * W), dst + r * W, std::min<index_t>(W, channels - r * W), epi, pixel,
                   channel + r * W);
  }
}

/// One tile of the dense kernel: output pixels q0 .. q0 + count - 1 of image n, counted along
/// the rows (q = oy * OW + ox: a tile may span rows, so narrow layers fill it too), the nco output
/// channels from co (within group g) whose packed weights start at wblock.
template <class P, index_t V, class Epi>
void dense_tile(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const typename P::value_type* __restrict wblock,
                const typename P::value_type* zeros, const nhwc<typename P::value_type>& out, index_t n, index_t q0, index_t count,
                index_t g, index_t co, index_t nco, const Epi& epi) {
  using T = typename P::value_type;
  using B = simd::batch<T, std::size_t(P::lanes)>;
  constexpr index_t MR = tile_pixels<P, V>, W = P::lanes, NR = V * W;
  using pixels = std::make_integer_sequence<index_t, MR>;
  using vecs = std::make_integer_sequence<index_t, V>;
  // Each pixel's first input row and column (a tile's last pixels repeat its last one).
  std::array<index_t, std::size_t(MR)> y0, x0;
  for (index_t m = 0; m < MR; ++m) {
    const index_t q = q0 + std::min<index_t>(m, count - 1);
    y0[std::size_t(m)] = q / s.OW * s.sh - s.pt;
    x0[std::size_t(m)] = q % s.OW * s.sw - s.pl;
  }
  std::array<B, std::size_t(MR * V)> acc;
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    ((acc[Q] = B(T(0))), ...);  // not fill(): a loop over the array would keep it in memory
  }(std::make_integer_sequence<index_t, MR * V>{});
  const index_t cin = g * s.Cg, Cg = s.Cg;
  for (index_t ky = 0; ky < s.KH; ++ky) {
    for (index_t kx = 0; kx < s.KW; ++kx) {
      // Where each pixel reads this tap: its input pixel, or a row of zeros where it is padding.
      std::array<const T*, std::size_t(MR)> px;
      bool any = false;
      for (index_t m = 0; m < MR; ++m) {
        const index_t iy = y0[std::size_t(m)] + ky * s.dh, ix = x0[std::size_t(m)] + kx * s.dw;
        const bool inside = iy >= 0 && iy < s.H && ix >= 0 && ix < s.W;
        px[std::size_t(m)] = inside ? in.pixel(n, iy, ix) + cin : zeros;
        any = any || inside;
      }
      if (!any && s.pad_value == 0) continue;  // zero padding for the whole tile adds nothing
      const T* wk = wblock + (ky * s.KW + kx) * Cg * NR;
      // One channel per iteration, not unrolled: unrolled, g++ 12 hoists the next step's loads
      // above this step's FMAs and spills accumulators to the stack (as in the GEMM micro-kernel).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 1
#endif
      for (index_t c = 0; c < Cg; ++c) {
        std::array<B, std::size_t(V)> w;
        [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
          ((w[R] = B::load_aligned(wk + c * NR + R * W)), ...);
        }(vecs{});
        [&]<index_t... M>(std::integer_sequence<index_t, M...>) LOOM_LAMBDA_INLINE {
          (dense_pixel<M>(acc, w, px[M][c]), ...);
        }(pixels{});
      }
    }
  }
  const index_t first_channel = g * s.COg + co;
  store_tile<V>(acc, count, nco, epi, first_channel, [&](index_t m) {
    return std::pair{out.pixel(n, (q0 + m) / s.OW, (q0 + m) % s.OW) + first_channel, n * s.OH * s.OW + q0 + m};
  });
}

/// Runs `items` independent work items body(t) on loom's team (one thread: no parallel region).
template <class F>
void for_items(index_t items, const F& body) {
  const loom::detail::team_claim claim(items);
  const int team = claim.size();
  if (team > 1) {
    LOOM_PRAGMA(omp parallel for num_threads(team) schedule(static))
    for (index_t t = 0; t < items; ++t) body(t);
  } else {
    for (index_t t = 0; t < items; ++t) body(t);
  }
}

template <class P, index_t V, class Epi>
void run_dense_v(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const conv2d_packed_weights<P>& pw,
                 const nhwc<typename P::value_type>& out, const Epi& epi) {
  using T = typename P::value_type;
  constexpr index_t MR = tile_pixels<P, V>, NR = V * P::lanes;
  const index_t blocks = (s.COg + NR - 1) / NR;
  const std::vector<T> zeros(std::size_t(s.Cg), T(s.pad_value));  // the input a padded tap reads
  // An item is a run of about a row of pixels (whole tiles) for one block of weights; runs
  // innermost, so a thread's consecutive items share the block (in L2) and overlapping rows.
  const index_t pixels = s.OH * s.OW, run = MR * ((s.OW + MR - 1) / MR), runs = (pixels + run - 1) / run;
  for_items(s.N * s.groups * blocks * runs, [&](index_t t) {
    const index_t r = t % runs, b = t / runs % blocks, g = t / runs / blocks % s.groups, n = t / runs / blocks / s.groups;
    const T* wblock = pw.data() + (g * blocks + b) * s.KH * s.KW * s.Cg * NR;
    const index_t co = b * NR, nco = std::min<index_t>(NR, s.COg - co);
    const index_t end = std::min(pixels, (r + 1) * run);
    for (index_t q = r * run; q < end; q += MR)
      dense_tile<P, V>(s, in, wblock, zeros.data(), out, n, q, std::min<index_t>(MR, end - q), g, co, nco, epi);
  });
}

/// The dense (and grouped) path: the tile width the weights were packed for.
template <class P, class Epi>
void run_dense(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const conv2d_packed_weights<P>& pw,
               const nhwc<typename P::value_type>& out, const Epi& epi) {
  [&]<index_t... V>(std::integer_sequence<index_t, V...>) {
    ([&] {
      if constexpr (tile_width_compiled<P>(V + 1)) {
        if (pw.vectors() == V + 1) run_dense_v<P, V + 1>(s, in, pw, out, epi);
      }
    }(), ...);
  }(std::make_integer_sequence<index_t, P::vectors>{});
}

/// A vector of channels from p: whole, or its first `live` lanes at a tail.
template <class B, bool Tail>
LOOM_INLINE B channel_vector(const typename B::value_type* p, index_t live) {
  if constexpr (Tail) return simd::load_first<B>(p, live);
  else return B::load_unaligned(p);
}

/// Pixel M of a depthwise tile, one tap: its channels times the tap's weights (a padded tap, ix
/// outside the row, adds nothing).
template <index_t M, bool Tail, class Acc, class Wv, class Live, class T>
LOOM_INLINE void depthwise_pixel(Acc& acc, const Wv& w, const Live& live, const nhwc<const T>& in, index_t n, index_t iy, index_t ix,
                                 index_t width, index_t c0, T pad) {
  using B = typename Wv::value_type;
  constexpr index_t V = index_t(std::tuple_size_v<Wv>), W = index_t(B::size);
  if (ix < 0 || ix >= width) {  // a padded tap: the padding's value times the weights
    if (pad != T(0)) {
      [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
        ((acc[M * V + R] = simd::fma(B(pad), w[R], acc[M * V + R])), ...);
      }(std::make_integer_sequence<index_t, V>{});
    }
    return;
  }
  const T* p = in.pixel(n, iy, ix) + c0;
  [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
    ((acc[M * V + R] = simd::fma(channel_vector<B, Tail>(p + R * W, live[R]), w[R], acc[M * V + R])), ...);
  }(std::make_integer_sequence<index_t, V>{});
}

/// Pixel M of an interior depthwise tile, one tap, its channels at p.
template <index_t M, class Acc, class Wv, class Live, class T>
LOOM_INLINE void depthwise_at(Acc& acc, const Wv& w, const Live& live, const T* p, bool tail) {
  using B = typename Wv::value_type;
  constexpr index_t V = index_t(std::tuple_size_v<Wv>), W = index_t(B::size);
  [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
    ((acc[M * V + R] = simd::fma(tail ? simd::load_first<B>(p + R * W, live[R]) : B::load_unaligned(p + R * W), w[R], acc[M * V + R])),
     ...);
  }(std::make_integer_sequence<index_t, V>{});
}

/// Depthwise (groups == C, one output channel per input channel): vectors along the channels,
/// a tile of pixels x two vectors of channels, each tap's weights loaded once per tile.
template <class P, bool Tail, class Epi>
void depthwise_tile(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const typename P::value_type* __restrict wp,
                    const nhwc<typename P::value_type>& out, index_t n, index_t oy, index_t ox0, index_t count, index_t c0,
                    const Epi& epi) {
  using T = typename P::value_type;
  using B = simd::batch<T, std::size_t(P::lanes)>;
  constexpr index_t MR = 8, V = 2, W = P::lanes;
  using pixels = std::make_integer_sequence<index_t, MR>;
  using vecs = std::make_integer_sequence<index_t, V>;
  const index_t C = s.C;
  std::array<index_t, std::size_t(V)> live{};
  for (index_t r = 0; r < V; ++r) live[std::size_t(r)] = Tail ? std::clamp<index_t>(C - c0 - r * W, 0, W) : W;
  std::array<B, std::size_t(MR * V)> acc;
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    ((acc[Q] = B(T(0))), ...);  // not fill(): a loop over the array would keep it in memory
  }(std::make_integer_sequence<index_t, MR * V>{});
  const index_t first_x = ox0 * s.sw - s.pl, last_x = (ox0 + MR - 1) * s.sw + (s.KW - 1) * s.dw - s.pl;
  const bool interior = count == MR && first_x >= 0 && last_x < s.W;
  const index_t step = s.sw * in.sw;
  const T pad = T(s.pad_value);
  for (index_t ky = 0; ky < s.KH; ++ky) {
    const index_t iy = oy * s.sh + ky * s.dh - s.pt;
    const bool padded_row = iy < 0 || iy >= s.H;
    if (padded_row && pad == T(0)) continue;
    for (index_t kx = 0; kx < s.KW; ++kx) {
      std::array<B, std::size_t(V)> w;
      const T* wk = wp + (ky * s.KW + kx) * C + c0;
      [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
        ((w[R] = channel_vector<B, Tail>(wk + R * W, live[R])), ...);
      }(vecs{});
      if (padded_row) {  // a row of padding (nonzero): its value times the weights, every pixel
        [&]<index_t... M>(std::integer_sequence<index_t, M...>) LOOM_LAMBDA_INLINE {
          (depthwise_pixel<M, Tail>(acc, w, live, in, n, iy, -1, s.W, c0, pad), ...);
        }(pixels{});
      } else if (interior) {
        // Every pixel's tap is inside the row: one pointer stepping along it.
        const T* p = in.pixel(n, iy, ox0 * s.sw + kx * s.dw - s.pl) + c0;
        [&]<index_t... M>(std::integer_sequence<index_t, M...>) LOOM_LAMBDA_INLINE {
          ((depthwise_at<M>(acc, w, live, p, Tail), p += step), ...);
        }(pixels{});
      } else {
        [&]<index_t... M>(std::integer_sequence<index_t, M...>) LOOM_LAMBDA_INLINE {
          (depthwise_pixel<M, Tail>(acc, w, live, in, n, iy, (ox0 + std::min<index_t>(M, count - 1)) * s.sw + kx * s.dw - s.pl, s.W, c0,
                                    pad),
           ...);
        }(pixels{});
      }
    }
  }
  const index_t channels = Tail ? s.C - c0 : V * W;
  store_tile<V>(acc, count, channels, epi, c0, [&](index_t m) {
    return std::pair{out.pixel(n, oy, ox0 + m) + c0, (n * s.OH + oy) * s.OW + ox0 + m};
  });
}

template <class P, class Epi>
void run_depthwise(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const conv2d_packed_weights<P>& pw,
                   const nhwc<typename P::value_type>& out, const Epi& epi) {
  constexpr index_t MR = 8, CB = 2 * P::lanes;
  const index_t blocks = (s.C + CB - 1) / CB;
  for_items(s.N * blocks * s.OH, [&](index_t t) {
    const index_t oy = t % s.OH, b = t / s.OH % blocks, n = t / s.OH / blocks;
    const index_t c0 = b * CB;
    for (index_t ox0 = 0; ox0 < s.OW; ox0 += MR) {
      const index_t count = std::min<index_t>(MR, s.OW - ox0);
      if (c0 + CB <= s.C) depthwise_tile<P, false>(s, in, pw.data(), out, n, oy, ox0, count, c0, epi);
      else depthwise_tile<P, true>(s, in, pw.data(), out, n, oy, ox0, count, c0, epi);
    }
  });
}

}  // namespace loom::conv_detail
