// SPDX-License-Identifier: MIT
// loom/kernels/conv/depthwise.hpp — depthwise convolution (groups == C, one output channel per
// input channel) on NHWC activations: vectors along the channels, a tile of output pixels along a
// row x (at most) two vectors of channels.
//
// Its arithmetic intensity is low (KH x KW FMAs per input vector), so the loads decide: for a
// 3 x 3 window at stride 1 or 2 the tile walks each input row once, column by column, and every
// column's vectors feed the (up to 3) pixels whose window covers it while they are in registers
// (Halide's "rows of the window in registers"); a tile loads S * (pixels - 1) + KW input vectors
// per row of taps instead of pixels x KW. Tiles whose window leaves the image (the row's first
// and last, and all of a row narrower than a tile) read the padding value for columns outside,
// one test per column; interior tiles test nothing. A row's last tile, when the row is not a
// multiple of the tile, moves left over pixels already computed and stores only its own. Other
// windows (KW != 3, dilation, stride > 2) take the per-tap tile.
// Contract: direct.hpp's (NHWC with unit channel stride, the epilogue on each stored vector).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "../../core/config.hpp"
#include "../../simd/arch.hpp"
#include "../../simd/fma.hpp"
#include "../../simd/memory.hpp"
#include "direct.hpp"
#include "layout.hpp"
#include "pack.hpp"
#include "params.hpp"
#include "policy.hpp"

namespace loom::conv_detail {

/// A vector of channels from p: whole, or its first `live` lanes at a tail.
template <class B, bool Tail>
LOOM_INLINE B channel_vector(const typename B::value_type* p, index_t live) {
  if constexpr (Tail) return simd::load_first<B>(p, live);
  else return B::load_unaligned(p);
}

/// Stores vector R of pixel M of a depthwise tile (channels counted from the vector's first).
template <index_t M, index_t V, class Acc, class T>
LOOM_INLINE void depthwise_store_pixel(const Acc& acc, T* dst, index_t channels) {
  using B = typename Acc::value_type;
  constexpr index_t W = index_t(B::size);
  [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
    ((R * W < channels ? (channels - R * W >= W ? acc[M * V + R].store_unaligned(dst + R * W)
                                                : simd::store_first<B>(dst + R * W, acc[M * V + R], channels - R * W))
                       : void()),
     ...);
  }(std::make_integer_sequence<index_t, V>{});
}

/// The stored pixels m in [first, count) of a depthwise tile of pixels x V vectors, each
/// `channels` channels from c0, at (n, oy, ox0 + m). Without an epilogue straight from the
/// registers; with one through store_tile (one copy of the epilogue per kernel).
template <index_t MR, index_t V, class Acc, class T, class Epi>
LOOM_INLINE void depthwise_store(const Acc& acc, index_t first, index_t count, index_t channels, const Epi& epi,
                                 const conv2d_shape& s, const nhwc<T>& out, index_t n, index_t oy, index_t ox0, index_t c0) {
  if constexpr (gemm_detail::is_identity_epilogue<Epi>) {
    [&]<index_t... M>(std::integer_sequence<index_t, M...>) LOOM_LAMBDA_INLINE {
      ((M >= first && M < count ? depthwise_store_pixel<M, V>(acc, out.pixel(n, oy, ox0 + M) + c0, channels) : void()), ...);
    }(std::make_integer_sequence<index_t, MR>{});
  } else {
    const index_t flat = (n * s.OH + oy) * s.OW + ox0;
    store_tile<V>(acc, first, count, channels, epi, c0, [&](index_t m) {
      return std::pair{out.pixel(n, oy, ox0 + m) + c0, out_point{n, oy, ox0 + m, flat + m}};
    });
  }
}

/// A row of the window that lies in the padding (value pad != 0): pad times every tap's weights,
/// for every pixel of the tile.
template <index_t MR, index_t V, index_t KW, class Acc, class Wv, class T>
LOOM_INLINE void depthwise_pad_row(Acc& acc, const Wv& w, T pad) {
  using B = typename Wv::value_type;
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    ((acc[Q] = simd::fma(B(pad), w[(Q % V)], acc[Q])), ...);
  }(std::make_integer_sequence<index_t, MR * V>{});
  if constexpr (KW > 1) {
    std::array<B, std::size_t((KW - 1) * V)> rest;
    [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
      ((rest[Q] = w[Q + V]), ...);
    }(std::make_integer_sequence<index_t, (KW - 1) * V>{});
    depthwise_pad_row<MR, V, KW - 1>(acc, rest, pad);
  }
}

/// Tap K of a 3-wide (KW) window at stride S, for the input column J of the tile: the pixel whose
/// window has column J at tap K, if the tile has it, += column * w[K].
template <index_t J, index_t K, index_t S, index_t MR, index_t V, class Acc, class Wv, class Col>
LOOM_INLINE void depthwise_column_tap(Acc& acc, const Wv& w, const Col& col) {
  if constexpr (J >= K && (J - K) % S == 0 && (J - K) / S < MR) {
    constexpr index_t M = (J - K) / S;
    [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
      ((acc[M * V + R] = simd::fma(col[R], w[K * V + R], acc[M * V + R])), ...);
    }(std::make_integer_sequence<index_t, V>{});
  }
}

/// Input column J of the tile, one row of taps: its vectors loaded once (the padding's value where
/// the column is outside the image, tested only with Border), then every tap that reads it.
template <index_t J, index_t KW, index_t S, index_t MR, index_t V, bool Tail, bool Border, class Acc, class Wv, class Live, class T>
LOOM_INLINE void depthwise_column(Acc& acc, const Wv& w, const Live& live, const T* row, index_t step, index_t ix0, index_t width,
                                  T pad) {
  using B = typename Wv::value_type;
  constexpr index_t W = index_t(B::size);
  std::array<B, std::size_t(V)> col;
  bool inside = true;
  if constexpr (Border) inside = std::make_unsigned_t<index_t>(ix0 + J) < std::make_unsigned_t<index_t>(width);
  const T* q = inside ? row + (ix0 + J) * step : row;  // (no address outside the image is formed)
  [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
    ((col[R] = inside ? channel_vector<B, Tail>(q + R * W, live[R]) : B(pad)), ...);
  }(std::make_integer_sequence<index_t, V>{});
  [&]<index_t... K>(std::integer_sequence<index_t, K...>) LOOM_LAMBDA_INLINE {
    (depthwise_column_tap<J, K, S, MR, V>(acc, w, col), ...);
  }(std::make_integer_sequence<index_t, KW>{});
}

/// A tile of MR pixels from ox0 of output row oy, 3-wide window at stride S (dilation 1): each
/// input row of the window walked once, column by column.
template <class P, index_t V, index_t S, bool Tail, bool Border, class Epi>
void depthwise_rows_tile(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const typename P::value_type* __restrict wp,
                         const nhwc<typename P::value_type>& out, index_t n, index_t oy, index_t ox0, index_t first, index_t count,
                         index_t c0, const Epi& epi) {
  using T = typename P::value_type;
  using B = simd::batch<T, std::size_t(P::lanes)>;
  constexpr index_t KW = 3, MR = P::depthwise_pixels, W = P::lanes;
  constexpr index_t columns = S * (MR - 1) + KW;
  const index_t C = s.C;
  std::array<index_t, std::size_t(V)> live{};
  for (index_t r = 0; r < V; ++r) live[std::size_t(r)] = Tail ? std::clamp<index_t>(C - c0 - r * W, 0, W) : W;
  std::array<B, std::size_t(MR * V)> acc;
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    ((acc[Q] = B(T(0))), ...);  // not fill(): a loop over the array would keep it in memory
  }(std::make_integer_sequence<index_t, MR * V>{});
  const T pad = T(s.pad_value);
  const index_t ix0 = ox0 * S - s.pl;
  for (index_t ky = 0; ky < s.KH; ++ky) {
    const index_t iy = oy * s.sh + ky * s.dh - s.pt;
    std::array<B, std::size_t(KW * V)> w;
    const T* wk = wp + ky * KW * C + c0;
    [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
      ((w[Q] = channel_vector<B, Tail>(wk + (Q / V) * C + (Q % V) * W, live[Q % V])), ...);
    }(std::make_integer_sequence<index_t, KW * V>{});
    if (iy < 0 || iy >= s.H) {  // a row of padding
      if (pad != T(0)) depthwise_pad_row<MR, V, KW>(acc, w, pad);
      continue;
    }
    const T* row = in.p + n * in.sn + iy * in.sh + c0;
    [&]<index_t... J>(std::integer_sequence<index_t, J...>) LOOM_LAMBDA_INLINE {
      (depthwise_column<J, KW, S, MR, V, Tail, Border>(acc, w, live, row, in.sw, ix0, s.W, pad), ...);
    }(std::make_integer_sequence<index_t, columns>{});
  }
  depthwise_store<MR, V>(acc, first, count, Tail ? C - c0 : V * W, epi, s, out, n, oy, ox0, c0);
}

/// Pixel M of a per-tap depthwise tile, one tap: its channels times the tap's weights (a padded
/// tap, ix outside the row, reads the padding's value).
template <index_t M, bool Tail, class Acc, class Wv, class Live, class T>
LOOM_INLINE void depthwise_pixel(Acc& acc, const Wv& w, const Live& live, const nhwc<const T>& in, index_t n, index_t iy, index_t ix,
                                 index_t width, index_t c0, T pad) {
  using B = typename Wv::value_type;
  constexpr index_t V = index_t(std::tuple_size_v<Wv>), W = index_t(B::size);
  const bool inside = ix >= 0 && ix < width;
  if (!inside && pad == T(0)) return;
  const T* p = in.p + n * in.sn + (inside ? iy * in.sh + ix * in.sw + c0 : 0);
  [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
    ((acc[M * V + R] = simd::fma(inside ? channel_vector<B, Tail>(p + R * W, live[R]) : B(pad), w[R], acc[M * V + R])), ...);
  }(std::make_integer_sequence<index_t, V>{});
}

/// Any window, stride and dilation: one tap at a time, each pixel's input tested.
template <class P, index_t V, bool Tail, class Epi>
void depthwise_taps_tile(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const typename P::value_type* __restrict wp,
                         const nhwc<typename P::value_type>& out, index_t n, index_t oy, index_t ox0, index_t first, index_t count,
                         index_t c0, const Epi& epi) {
  using T = typename P::value_type;
  using B = simd::batch<T, std::size_t(P::lanes)>;
  constexpr index_t MR = P::depthwise_pixels, W = P::lanes;
  const index_t C = s.C;
  std::array<index_t, std::size_t(V)> live{};
  for (index_t r = 0; r < V; ++r) live[std::size_t(r)] = Tail ? std::clamp<index_t>(C - c0 - r * W, 0, W) : W;
  std::array<B, std::size_t(MR * V)> acc;
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    ((acc[Q] = B(T(0))), ...);
  }(std::make_integer_sequence<index_t, MR * V>{});
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
      }(std::make_integer_sequence<index_t, V>{});
      [&]<index_t... M>(std::integer_sequence<index_t, M...>) LOOM_LAMBDA_INLINE {
        (depthwise_pixel<M, Tail>(acc, w, live, in, n, iy, padded_row ? index_t(-1) : (ox0 + M) * s.sw + kx * s.dw - s.pl, s.W, c0, pad),
         ...);
      }(std::make_integer_sequence<index_t, MR>{});
    }
  }
  depthwise_store<MR, V>(acc, first, count, Tail ? C - c0 : V * W, epi, s, out, n, oy, ox0, c0);
}

/// One tile of output row oy (pixels ox0 .. ox0 + MR, storing first .. count - 1), channels
/// c0 .. c0 + V * W (fewer with Tail).
template <class P, index_t V, index_t S, bool Tail, class Epi>
LOOM_INLINE void depthwise_tile(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const typename P::value_type* wp,
                                const nhwc<typename P::value_type>& out, index_t n, index_t oy, index_t ox0, index_t first, index_t count,
                                bool interior, index_t c0, const Epi& epi) {
  if constexpr (S == 0) depthwise_taps_tile<P, V, Tail>(s, in, wp, out, n, oy, ox0, first, count, c0, epi);
  else if (interior) depthwise_rows_tile<P, V, S, Tail, false>(s, in, wp, out, n, oy, ox0, first, count, c0, epi);
  else depthwise_rows_tile<P, V, S, Tail, true>(s, in, wp, out, n, oy, ox0, first, count, c0, epi);
}

/// Output row oy of image n, channels c0 .. c0 + V W (fewer with Tail): its tiles along the row.
template <class P, index_t V, index_t S, bool Tail, class Epi>
void depthwise_row_block(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const typename P::value_type* wp,
                         const nhwc<typename P::value_type>& out, index_t n, index_t oy, index_t c0, const Epi& epi) {
  constexpr index_t MR = P::depthwise_pixels;
  for (index_t x = 0; x < s.OW; x += MR) {
    // A short last tile moves left (when the row has room) and stores only its own pixels.
    const index_t ox0 = std::max<index_t>(0, std::min(x, s.OW - MR)), first = x - ox0, count = std::min(MR, s.OW - ox0);
    const index_t ix0 = ox0 * S - s.pl;
    const bool interior = ix0 >= 0 && ix0 + S * (MR - 1) + 2 < s.W;
    depthwise_tile<P, V, S, Tail>(s, in, wp, out, n, oy, ox0, first, count, interior, c0, epi);
  }
}

/// Output row oy of image n, a block of channels at a time: a block's window rows (its channels of
/// KH input rows) stay in L1 across the row's tiles (docs/tuning.md#depthwise).
template <class P, index_t S, class Epi>
void depthwise_row(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const typename P::value_type* wp,
                   const nhwc<typename P::value_type>& out, index_t n, index_t oy, const Epi& epi) {
  constexpr index_t V = P::depthwise_vectors, W = P::lanes, CB = V * W;
  index_t c0 = 0;
  for (; c0 + CB <= s.C; c0 += CB) depthwise_row_block<P, V, S, false>(s, in, wp, out, n, oy, c0, epi);
  // The last channels: whole vectors where they are (one fewer vector), masked only at a tail.
  const index_t rest = s.C - c0;
  if (rest == 0) return;
  if (V > 1 && rest > W) depthwise_row_block<P, V, S, true>(s, in, wp, out, n, oy, c0, epi);
  else if (rest == W) depthwise_row_block<P, 1, S, false>(s, in, wp, out, n, oy, c0, epi);
  else depthwise_row_block<P, 1, S, true>(s, in, wp, out, n, oy, c0, epi);
}

template <class P, index_t S, class Epi>
void run_depthwise_s(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const conv2d_packed_weights<P>& pw,
                     const nhwc<typename P::value_type>& out, const Epi& epi) {
  // An item is one output row, all its channels: a thread reads whole input rows, and its next
  // item's window overlaps this one's (in L2).
  for_items(s.N * s.OH, [&](index_t t) { depthwise_row<P, S>(s, in, pw.data(), out, t / s.OH, t % s.OH, epi); });
}

/// The depthwise path: rows of the window in registers for 3-wide windows at stride 1 or 2
/// (MobileNet's), one tap at a time otherwise (S = 0).
template <class P, class Epi>
void run_depthwise(const conv2d_shape& s, const nhwc<const typename P::value_type>& in, const conv2d_packed_weights<P>& pw,
                   const nhwc<typename P::value_type>& out, const Epi& epi) {
  const bool rows = s.KW == 3 && s.dw == 1;
  if (rows && s.sw == 1) run_depthwise_s<P, 1>(s, in, pw, out, epi);
  else if (rows && s.sw == 2) run_depthwise_s<P, 2>(s, in, pw, out, epi);
  else run_depthwise_s<P, 0>(s, in, pw, out, epi);
}

struct depthwise_plane_scratch {};

/// Tap K of a row of taps for U output vectors: acc[q] += w * p[q W + K ...].
template <index_t K, index_t U, index_t W, class Acc, class B, class T>
LOOM_INLINE void depthwise_plane_tap(Acc& acc, const B& w, const T* p) {
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    ((acc[Q] = simd::fma(w, B::load_unaligned(p + Q * W), acc[Q])), ...);
  }(std::make_integer_sequence<index_t, U>{});
}

/// Whether the padded plane's rows are read as aligned vectors, the taps at +1 and +2 built from
/// two of them by a lane shift (AVX-512's valign): an unaligned load that crosses a cache line
/// costs two, and the taps at +1 and +2 of a row cross one at every vector.
template <class T>
inline constexpr bool plane_taps_by_shift = XSIMD_WITH_AVX512F && simd::native_width<T> * sizeof(T) == 64;

/// Whether a layer takes the shifted kernels: plane_taps_by_shift, a 3 x 3 window, no dilation.
template <class T>
bool shifted_3x3(const conv2d_shape& s) {
  return plane_taps_by_shift<T> && s.KH == 3 && s.KW == 3 && s.dh == 1 && s.dw == 1;
}

/// Output vector ox of a row of OW: whole, or its first OW - ox lanes.
template <class B>
LOOM_INLINE void store_row_vector(typename B::value_type* orow, index_t ox, index_t OW, const B& acc) {
  simd::store_lanes(orow + ox, acc, std::min(index_t(B::size), OW - ox));
}

/// Whether run_depthwise_planes takes a layer: unit stride along the rows of the input and the
/// output, the convolution's stride along them 1 (or 2 for the shifted 3 x 3 kernel), output rows
/// of two vectors or more.
template <class T>
bool depthwise_planes_apply(const conv2d_shape& s, const strided4<const T>& in, const strided4<T>& out) {
  // (rows of at least two vectors: on shorter ones each plane's copy and set-up cost more than the
  // relayout, also with the shifted 3 x 3 kernel; docs/tuning.md#depthwise)
  const bool shifted = shifted_3x3<T>(s);
  return (s.sw == 1 || (s.sw == 2 && shifted)) && in.sw == 1 && out.sw == 1 && s.OW >= 2 * index_t(simd::native_width<T>);
}

/// Lanes K .. K + W - 1 of the 2W lanes a, b (a first).
template <int K, class B>
LOOM_INLINE B lanes_from(const B& a, [[maybe_unused]] const B& b) {  // (b unused without AVX-512)
#if defined(__AVX512F__)
  if constexpr (sizeof(typename B::value_type) == 4)
    return B(_mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(b), _mm512_castps_si512(a), K)));
  else
    return B(_mm512_castsi512_pd(_mm512_alignr_epi64(_mm512_castpd_si512(b), _mm512_castpd_si512(a), K)));
#else
  static_assert(K < 0, "lanes_from needs AVX-512");
  return a;
#endif
}

/// A padded plane's 3 x 3 stencil (MobileNet's) on AVX-512, rows of PW (a multiple of the vector,
/// at least one vector past the last output vector) at aligned addresses: per output vector and
/// row of taps one aligned load (the next vector's, carried to the next step) and two lane shifts,
/// no unaligned loads. The sums run in the same order as everywhere (rows of taps, then columns).
template <class T>
void depthwise_plane_3x3_shifted(const conv2d_shape& s, const T* pb, index_t PW, const T* w, T* oplane, index_t osh) {
  using B = simd::batch<T, simd::native_width<T>>;
  constexpr index_t W = index_t(B::size);
  std::array<B, 9> wv;
  for (std::size_t k = 0; k < 9; ++k) wv[k] = B(w[k]);
  for (index_t oy = 0; oy < s.OH; ++oy) {
    T* orow = oplane + oy * osh;
    const T* r0 = pb + oy * s.sh * PW;
    std::array<B, 3> cur{B::load_aligned(r0), B::load_aligned(r0 + PW), B::load_aligned(r0 + 2 * PW)};
    for (index_t ox = 0; ox < s.OW; ox += W) {
      B acc(T(0));
      [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
        (([&] {
           const B next = B::load_aligned(r0 + R * PW + ox + W);
           acc = simd::fma(wv[std::size_t(R * 3)], cur[R], acc);
           acc = simd::fma(wv[std::size_t(R * 3 + 1)], lanes_from<1>(cur[R], next), acc);
           acc = simd::fma(wv[std::size_t(R * 3 + 2)], lanes_from<2>(cur[R], next), acc);
           cur[R] = next;
         }()),
         ...);
      }(std::make_integer_sequence<index_t, 3>{});
      store_row_vector(orow, ox, s.OW, acc);
    }
  }
}

/// A padded plane's 3 x 3 stencil (MobileNet's) elsewhere: the 9 weights in registers, four
/// output vectors at a time (each tap's loads feed four accumulators).
template <class T>
void depthwise_plane_3x3_unaligned(const conv2d_shape& s, const T* pb, index_t PW, const T* w, T* oplane, index_t osh) {
  using B = simd::batch<T, simd::native_width<T>>;
  constexpr index_t W = index_t(B::size), U = 4;
  std::array<B, 9> wv;
  for (std::size_t k = 0; k < 9; ++k) wv[k] = B(w[k]);
  const index_t OWv = (s.OW + W - 1) / W * W;
  for (index_t oy = 0; oy < s.OH; ++oy) {
    T* orow = oplane + oy * osh;
    const T* r0 = pb + oy * s.sh * PW;
    index_t ox = 0;
    for (; ox + U * W <= s.OW; ox += U * W) {
      std::array<B, U> acc;
      [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
        ((acc[Q] = B(T(0))), ...);
      }(std::make_integer_sequence<index_t, U>{});
      for (index_t ky = 0; ky < 3; ++ky) {
        const T* p = r0 + ky * PW + ox;
        [&]<index_t... K>(std::integer_sequence<index_t, K...>) LOOM_LAMBDA_INLINE {
          (depthwise_plane_tap<K, U, W>(acc, wv[std::size_t(ky * 3 + K)], p + K), ...);
        }(std::make_integer_sequence<index_t, 3>{});
      }
      [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
        (acc[Q].store_unaligned(orow + ox + Q * W), ...);
      }(std::make_integer_sequence<index_t, U>{});
    }
    for (; ox < OWv; ox += W) {  // the rest, a vector at a time (the row's buffer holds whole vectors)
      B acc(T(0));
      for (index_t ky = 0; ky < 3; ++ky) {
        const T* p = r0 + ky * PW + ox;
        for (index_t kx = 0; kx < 3; ++kx) acc = simd::fma(wv[std::size_t(ky * 3 + kx)], B::load_unaligned(p + kx), acc);
      }
      store_row_vector(orow, ox, s.OW, acc);
    }
  }
}

/// Lanes 0, 2, 4, ... (Odd: 1, 3, 5, ...) of the 2W lanes a, b (a first).
template <bool Odd, class B>
LOOM_INLINE B every_other_lane(const B& a, const B& b) {
#if defined(__AVX512F__)
  if constexpr (sizeof(typename B::value_type) == 4) {
    const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return B(_mm512_permutex2var_ps(a, Odd ? _mm512_add_epi32(idx, _mm512_set1_epi32(1)) : idx, b));
  } else {
    const __m512i idx = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    return B(_mm512_permutex2var_pd(a, Odd ? _mm512_add_epi64(idx, _mm512_set1_epi64(1)) : idx, b));
  }
#else
  static_assert(sizeof(B) == 0, "every_other_lane needs AVX-512");
  (void)b;
  return a;
#endif
}

/// The same at stride 2 along the rows, rows of PW >= 2 (output vectors + 1) vectors: per output
/// vector and row of taps two aligned loads, split into the even and odd columns (the taps at +0
/// and +1); the tap at +2 is the even columns moved by one lane, the next vector's first carried in.
template <class T>
void depthwise_plane_3x3_shifted_s2(const conv2d_shape& s, const T* pb, index_t PW, const T* w, T* oplane, index_t osh) {
  using B = simd::batch<T, simd::native_width<T>>;
  constexpr index_t W = index_t(B::size);
  std::array<B, 9> wv;
  for (std::size_t k = 0; k < 9; ++k) wv[k] = B(w[k]);
  for (index_t oy = 0; oy < s.OH; ++oy) {
    T* orow = oplane + oy * osh;
    const T* r0 = pb + oy * s.sh * PW;
    std::array<B, 3> even, odd;
    for (std::size_t r = 0; r < 3; ++r) {
      const B a = B::load_aligned(r0 + index_t(r) * PW), b = B::load_aligned(r0 + index_t(r) * PW + W);
      even[r] = every_other_lane<false>(a, b), odd[r] = every_other_lane<true>(a, b);
    }
    for (index_t ox = 0; ox < s.OW; ox += W) {
      B acc(T(0));
      [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
        (([&] {
           const T* p = r0 + R * PW + 2 * (ox + W);
           const B a = B::load_aligned(p), b = B::load_aligned(p + W);
           const B even_next = every_other_lane<false>(a, b);
           acc = simd::fma(wv[std::size_t(R * 3)], even[R], acc);
           acc = simd::fma(wv[std::size_t(R * 3 + 1)], odd[R], acc);
           acc = simd::fma(wv[std::size_t(R * 3 + 2)], lanes_from<1>(even[R], even_next), acc);
           even[R] = even_next;
           odd[R] = every_other_lane<true>(a, b);
         }()),
         ...);
      }(std::make_integer_sequence<index_t, 3>{});
      store_row_vector(orow, ox, s.OW, acc);
    }
  }
}

template <class T>
void depthwise_plane_3x3(const conv2d_shape& s, const T* pb, index_t PW, const T* w, T* oplane, index_t osh) {
  if constexpr (plane_taps_by_shift<T>) {
    if (s.sw == 2) depthwise_plane_3x3_shifted_s2<T>(s, pb, PW, w, oplane, osh);
    else depthwise_plane_3x3_shifted<T>(s, pb, PW, w, oplane, osh);
  } else {
    depthwise_plane_3x3_unaligned<T>(s, pb, PW, w, oplane, osh);
  }
}

/// Lanes [lo, hi) of a vector whose lane 0 is row[first] (lanes outside [lo, hi) are never read,
/// so row[first] may lie before the row), the others those of fill.
template <class B>
LOOM_INLINE B lanes_over(const B& fill, const typename B::value_type* row, index_t first, index_t lo, index_t hi) {
#if defined(__AVX512F__)
  using T = typename B::value_type;
  const unsigned mask = ((1u << hi) - 1u) & ~((1u << lo) - 1u);
  const T* at = reinterpret_cast<const T*>(reinterpret_cast<std::uintptr_t>(row) + std::uintptr_t(first * index_t(sizeof(T))));
  if constexpr (sizeof(T) == 4) return B(_mm512_mask_loadu_ps(fill, static_cast<__mmask16>(mask), at));
  else return B(_mm512_mask_loadu_pd(fill, static_cast<__mmask8>(mask), at));
#else
  static_assert(sizeof(B) == 0, "lanes_over needs AVX-512");
  (void)row, (void)first, (void)lo, (void)hi;
  return fill;
#endif
}

/// Whether a 3 x 3 stride-1 layer's padded rows fit one vector (rows of 14 floats with AVX-512):
/// run_depthwise_narrow_planes then reads each row straight from the plane, no copy.
template <class T>
bool depthwise_narrow_planes_apply(const conv2d_shape& s, const strided4<const T>& in, const strided4<T>& out) {
  return shifted_3x3<T>(s) && s.sw == 1 && in.sw == 1 && out.sw == 1 &&
         s.OW + 2 <= index_t(simd::native_width<T>);
}

template <class T>
void run_depthwise_narrow_planes_avx512(const conv2d_shape& s, const strided4<const T>& in, const T* wp, const strided4<T>& out);

/// Depthwise 3 x 3 on channel planes whose padded rows fit one vector: each input row is one masked
/// load (the padding's value in the other lanes), kept in registers for the three output rows that
/// read it; the taps at +1 and +2 are lane shifts. No scratch, no copy: for planes this small a
/// padded copy costs several times the stencil. Sums in the NHWC kernels' order (the same bits).
template <class T>
void run_depthwise_narrow_planes(const conv2d_shape& s, const strided4<const T>& in, const T* wp, const strided4<T>& out) {
  if constexpr (plane_taps_by_shift<T>) run_depthwise_narrow_planes_avx512(s, in, wp, out);
}
template <class T>
void run_depthwise_narrow_planes_avx512(const conv2d_shape& s, const strided4<const T>& in, const T* wp, const strided4<T>& out) {
  using B = simd::batch<T, simd::native_width<T>>;
  constexpr index_t W = index_t(B::size);
  const B padv(T(s.pad_value));
  const index_t lo = std::min(s.pl, W), hi = std::min(W, s.pl + s.W);  // the lanes that hold input columns
  for_items(s.N * s.C, [&](index_t t) {
    const index_t n = t / s.C, c = t % s.C;
    const T* plane = in.p + n * in.sn + c * in.sc;
    T* oplane = out.p + n * out.sn + c * out.sc;
    std::array<B, 9> wv;
    for (std::size_t k = 0; k < 9; ++k) wv[k] = B(wp[index_t(k) * s.C + c]);
    auto row = [&](index_t r) {  // padded row r (input row r - pt)
      const index_t iy = r - s.pt;
      return iy < 0 || iy >= s.H || lo >= hi ? padv : lanes_over(padv, plane + iy * in.sh, -s.pl, lo, hi);
    };
    std::array<B, 3> rows{row(0), row(1), row(2)};
    for (index_t oy = 0; oy < s.OH; ++oy) {
      if (oy > 0) rows = {rows[1], rows[2], row(oy + 2)};
      B acc(T(0));
      for (std::size_t ky = 0; ky < 3; ++ky) {
        acc = simd::fma(wv[ky * 3], rows[ky], acc);
        acc = simd::fma(wv[ky * 3 + 1], lanes_from<1>(rows[ky], padv), acc);
        acc = simd::fma(wv[ky * 3 + 2], lanes_from<2>(rows[ky], padv), acc);
      }
      simd::store_first<B>(oplane + oy * out.sh, acc, s.OW);
    }
  }, worth_a_team(s.N * s.C * s.OH * s.OW * 9));
}

/// Depthwise on channel planes (NCHW), stride 1 along the rows (2 for the shifted 3 x 3 kernel), with no epilogue: each (image,
/// channel) plane is a 2-D stencil. The plane is first copied into per-thread scratch with its
/// padding around it (rows of the padding's value above and below, columns at both ends, the
/// rows widened to whole vectors), so that every output vector reads its taps with plain loads and
/// nothing is tested per pixel. Copying a depthwise layer to NHWC and back costs more than the
/// layer (docs/tuning.md#depthwise). Sums run in the NHWC kernels' order (rows of taps, then
/// columns, by FMA, padded taps included): the same bits.
template <class T>
void run_depthwise_planes(const conv2d_shape& s, const strided4<const T>& in, const T* wp, const strided4<T>& out) {
  using B = simd::batch<T, simd::native_width<T>>;
  constexpr index_t W = index_t(B::size);
  const index_t KH = s.KH, KW = s.KW, taps = KH * KW;
  const T pad = T(s.pad_value);
  const index_t OWv = (s.OW + W - 1) / W * W;             // output columns in whole vectors
  // Padded row: column ix + pl. For the shifted 3 x 3 kernel, whole aligned vectors and one
  // past the last output vector (two at stride 2).
  const bool shifted = shifted_3x3<T>(s);
  const index_t PW = !shifted ? OWv + (KW - 1) * s.dw : s.sw == 2 ? 2 * (OWv + W) : OWv + W;
  const index_t PH = (s.OH - 1) * s.sh + (KH - 1) * s.dh + 1;  // padded rows: row iy + pt
  for_items(s.N * s.C, [&](index_t t) {
    const index_t n = t / s.C, c = t % s.C;
    const T* plane = in.p + n * in.sn + c * in.sc;
    T* oplane = out.p + n * out.sn + c * out.sc;
    T* pb = detail::scratch<T, depthwise_plane_scratch>(std::size_t(PH * PW));
    for (index_t r = 0; r < PH; ++r) {
      T* dst = pb + r * PW;
      const index_t iy = r - s.pt;
      const index_t left = std::min(s.pl, PW), inside = iy < 0 || iy >= s.H ? 0 : std::clamp<index_t>(PW - left, 0, s.W);
      if (shifted) {  // whole aligned rows: the padding's value by vectors (g++ -O2 leaves fill_n scalar)
        const B padv(pad);
        for (index_t q = 0; q < PW; q += W) padv.store_aligned(dst + q);
      } else {
        std::fill_n(dst, left, pad);
        std::fill_n(dst + left + inside, PW - left - inside, pad);
      }
      std::copy_n(plane + iy * in.sh, inside, dst + left);
    }
    std::array<T, 64> wsmall{};
    std::vector<T> wlarge;
    T* w = wsmall.data();
    if (taps > 64) wlarge.resize(std::size_t(taps)), w = wlarge.data();
    for (index_t k = 0; k < taps; ++k) w[k] = wp[k * s.C + c];
    if (KH == 3 && KW == 3 && s.dh == 1 && s.dw == 1) {
      depthwise_plane_3x3<T>(s, pb, PW, w, oplane, out.sh);
      return;
    }
    for (index_t oy = 0; oy < s.OH; ++oy) {
      T* orow = oplane + oy * out.sh;
      for (index_t ox = 0; ox < OWv; ox += W) {
        B acc(T(0));
        for (index_t ky = 0; ky < KH; ++ky) {
          const T* p = pb + (oy * s.sh + ky * s.dh) * PW + ox;
          for (index_t kx = 0; kx < KW; ++kx) acc = simd::fma(B(w[ky * KW + kx]), B::load_unaligned(p + kx * s.dw), acc);
        }
        store_row_vector(orow, ox, s.OW, acc);
      }
    }
  });
}

}  // namespace loom::conv_detail
