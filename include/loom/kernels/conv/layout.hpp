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
#include "../../simd/transpose.hpp"
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
      if constexpr (Gather) simd::transpose<B>(vp, v.sc, dp, C, np, nc);
      else simd::transpose<B>(dp, C, vp, v.sc, nc, np);
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
