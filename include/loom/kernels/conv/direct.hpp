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
//        seen as an (N * OH * OW) x CO matrix); an epilogue with apply_at (point_epilogue) gets
//        the pixel's (n, oy, ox) as well, which the kernels know without dividing, and one with
//        pixel(at) (pixel_epilogue: index notation's) a copy of itself per pixel for its vectors
// Padded taps read a row of zeros (or of the padding value); nothing outside `in` is
// read. A row's last tile, when the row is not a multiple of the tile, recomputes pixels of the
// row (clamped) and stores only its own.
#pragma once
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "../../core/config.hpp"
#include "../../simd/arch.hpp"
#include "../../simd/fma.hpp"
#include "../../simd/memory.hpp"
#include "../gemm/epilogue.hpp"
#include "items.hpp"
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

/// An output pixel as the kernels know it: image, row, column and its flat index
/// ((n * OH + y) * OW + x).
struct out_point {
  index_t n, y, x, flat;
};

/// An epilogue that takes the pixel's coordinates (index notation's: it reads skip(n, y, x, co)),
/// so that nothing divides the flat index per vector.
template <class Epi>
concept point_epilogue = Epi::takes_points;

/// An epilogue that can ask ahead for what it will read at a pixel (index notation's
/// skip(n, y, x, co)): out of cache, the reads would wait in the output loop a line at a time.
template <class Epi>
concept prefetching_epilogue = requires(const Epi& e, const out_point& p, index_t j) { e.prefetch_at(p, j, j); };

/// An epilogue that gives a copy of itself for one pixel (`pixel(at).apply(v, channel, lanes)`),
/// its per-pixel work done once for all the pixel's vectors.
template <class Epi>
concept pixel_epilogue = requires(const Epi& e, const out_point& p) { e.pixel(p); };

/// Epi at pixel `at`: `apply(v, channel, lanes)` per vector of the pixel's channels.
template <class Epi>
struct epilogue_at_point {
  const Epi& epi;
  out_point at;
  template <class B>
  LOOM_INLINE B apply(const B& v, index_t channel, index_t lanes) const {
    if constexpr (point_epilogue<Epi>) return epi.template apply_at<B>(v, at, channel, lanes);
    else if constexpr (!gemm_detail::is_identity_epilogue<Epi>) return epi.template apply<B>(v, at.flat, channel, lanes);
    else return v;
  }
};
template <class Epi>
LOOM_INLINE auto epilogue_at(const Epi& epi, const out_point& at) {
  if constexpr (pixel_epilogue<Epi>) return epi.pixel(at);
  else return epilogue_at_point<Epi>{epi, at};
}

/// Stores a vector through a pixel's epilogue (epilogue_at).
template <class B, class T, class PixelEpi>
LOOM_INLINE void store_through(B v, T* dst, index_t lanes, PixelEpi& pe, index_t channel) {
  simd::store_lanes(dst, pe.template apply<B>(v, channel, lanes), lanes);
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

/// Stores pixels first .. count - 1 of a tile of V vectors per pixel, `channels` channels each from
/// output channel `channel`, through the epilogue; where(m), called for each m in order, gives
/// pixel m's address and out_point.
/// The accumulators pass through a buffer so that this is one loop with one copy of the epilogue:
/// written out per vector, the epilogue (inlined, masked and unmasked) was compiled MR x V times
/// per kernel, most of what a convolution compiles.
template <index_t V, class Acc, class Epi, class Where>
LOOM_INLINE void store_tile(const Acc& acc, index_t first, index_t count, index_t channels, const Epi& epi, index_t channel,
                            const Where& where) {
  using B = typename Acc::value_type;
  using T = typename B::value_type;
  constexpr index_t W = index_t(B::size), N = index_t(std::tuple_size_v<Acc>);
  alignas(64) std::array<T, std::size_t(N * W)> buf;
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    (acc[Q].store_aligned(buf.data() + Q * W), ...);
  }(std::make_integer_sequence<index_t, N>{});
  for (index_t m = first; m < count; ++m) {
    const auto [dst, at] = where(m);
    auto pe = epilogue_at(epi, at);
    for (index_t r = 0; r < V && r * W < channels; ++r)
      store_through(B::load_aligned(buf.data() + (m * V + r) * W), dst + r * W, std::min<index_t>(W, channels - r * W), pe,
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
  // A window row as one run: with unit dilation and pixels holding exactly the layer's channels
  // (NHWC, one group), a row's KW taps are KW * C consecutive values, read as one run of channels
  // where every pixel's window row lies inside the image's width (a 3-channel stem: 21 values per
  // row instead of 7 taps of 3, each with its own tests and pointers).
  bool rows_as_runs = s.dw == 1 && s.groups == 1 && in.sw == Cg;
  for (index_t m = 0; m < MR && rows_as_runs; ++m)
    rows_as_runs = x0[std::size_t(m)] >= 0 && x0[std::size_t(m)] + s.KW - 1 < s.W;
  const index_t taps_per_step = rows_as_runs ? s.KW : 1;
  const index_t first_channel = g * s.COg + co;
  // The pixels' rows and columns by stepping along the rows from q0: one division per tile.
  const out_point first_point{n, q0 / s.OW, q0 % s.OW, n * s.OH * s.OW + q0};
  auto next = [&](out_point& at) LOOM_LAMBDA_INLINE {
    ++at.flat;
    if (++at.x == s.OW) at.x = 0, ++at.y;
  };
  if constexpr (prefetching_epilogue<Epi>) {  // what the epilogue reads comes into L2 while the tile accumulates
    out_point at = first_point;
    for (index_t m = 0; m < count; ++m, next(at)) epi.prefetch_at(at, first_channel, nco);
  }
  for (index_t ky = 0; ky < s.KH; ++ky) {
    for (index_t kx = 0; kx < s.KW; kx += taps_per_step) {
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
      const index_t run = taps_per_step * Cg;
      // One channel per iteration, not unrolled: unrolled, g++ 12 hoists the next step's loads
      // above this step's FMAs and spills accumulators to the stack (as in the GEMM micro-kernel).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 1
#endif
      for (index_t c = 0; c < run; ++c) {
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
  out_point at = first_point;
  store_tile<V>(acc, 0, count, nco, epi, first_channel, [&](index_t) {
    const out_point here = at;
    next(at);
    return std::pair{out.pixel(n, here.y, here.x) + first_channel, here};
  });
}

template <class P, index_t V, class Epi>
void run_dense_v(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const conv2d_packed_weights<P>& pw,
                 const nhwc<typename P::value_type>& out, const Epi& epi) {
  using T = typename P::value_type;
  constexpr index_t MR = tile_pixels<P, V>, NR = V * P::lanes;
  const index_t blocks = (s.COg + NR - 1) / NR;
  // The input a padded tap (or a window row run, dense_tile) reads.
  const std::vector<T> zeros(std::size_t(s.KW * s.Cg), T(s.pad_value));
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

}  // namespace loom::conv_detail
