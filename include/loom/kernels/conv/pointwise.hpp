// SPDX-License-Identifier: MIT
// loom/kernels/conv/pointwise.hpp — a 1 x 1 convolution at stride 1 is a GEMM:
// out(N H W x CO) = in(N H W x C) w(C x CO). When the pixels of the input and the output are evenly
// spaced (NHWC with packed rows and images, or one row, or one image) the GEMM engine runs it
// straight on the tensors, no copy, the epilogue on its micro-tiles (its i is the conv's pixel, its
// j the output channel: the same contract). On channel planes (NCHW) it is a GEMM per image the
// other way round, out(CO x H W) = w^T(CO x C) in(C x H W), also with no copy (identity epilogue
// only: the engine's i is then the channel).
#pragma once
#include "../../core/config.hpp"
#include "../gemm/driver.hpp"
#include "direct.hpp"
#include "layout.hpp"
#include "params.hpp"

namespace loom::conv_detail {

/// Whether a view's pixels (n, y, x) sit at one stride apart: pixel q = (n * H + y) * W + x at
/// p + q * v.sw. Each image stride is compared with H * W pixels, not with H rows: with H = 1 the
/// row stride is arbitrary, and a crop of the width leaves images further apart than W pixels.
template <class T>
bool pixels_evenly_spaced(const nhwc<T>& v, index_t N, index_t H, index_t W) {
  index_t row = 0, image = 0;  // W and H * W pixels; a product past 64 bits is no stride of these
  if (__builtin_mul_overflow(W, v.sw, &row) || __builtin_mul_overflow(H, row, &image)) return false;
  return (N <= 1 || v.sn == image) && (H <= 1 || v.sh == row);
}

/// Whether the convolution is a 1 x 1 at stride 1, no padding, one group, on evenly spaced pixels.
template <class T>
bool runs_as_gemm(const conv2d_shape& s, const nhwc<const T>& in, const nhwc<T>& out) {
  return s.KH == 1 && s.KW == 1 && s.sh == 1 && s.sw == 1 && s.pt == 0 && s.pl == 0 && s.OH == s.H && s.OW == s.W &&
         s.groups == 1 && pixels_evenly_spaced(in, s.N, s.H, s.W) && pixels_evenly_spaced(out, s.N, s.OH, s.OW);
}

/// The 1 x 1 convolution on the GEMM engine; w: the C x CO weights (any strides).
template <class T, class Epi>
void run_as_gemm(const conv2d_shape& s, const nhwc<const T>& in, const gemm_detail::matrix_ref<T>& w, const nhwc<T>& out,
                 const Epi& epi) {
  const gemm_detail::problem<T> pb{s.N * s.H * s.W, s.CO, s.C, {in.p, in.sw, 1}, w, {out.p, out.sw, 1}, T(1), T(0)};
  gemm_detail::run_engine<void>(pb, epi);
}

/// Whether a 1 x 1 at stride 1 (no padding, one group) runs on channel planes: in and out both
/// with pixels evenly spaced within an image (a plane of H x W at unit column stride, NCHW) and
/// channels apart (not NHWC, which runs_as_gemm takes).
template <class T>
bool planes_run_as_gemm(const conv2d_shape& s, const strided4<const T>& in, const strided4<T>& out) {
  auto plane = [](const auto& v, index_t H, index_t W) { return v.sc != 1 && v.sw == 1 && (H <= 1 || v.sh == W); };
  return s.KH == 1 && s.KW == 1 && s.sh == 1 && s.sw == 1 && s.pt == 0 && s.pl == 0 && s.OH == s.H && s.OW == s.W && s.groups == 1 &&
         plane(in, s.H, s.W) && plane(out, s.OH, s.OW);
}

/// The 1 x 1 convolution on channel planes: one GEMM per image, out_n = w^T in_n; w: the C x CO
/// weights (any strides).
template <class T>
void run_planes_as_gemm(const conv2d_shape& s, const strided4<const T>& in, const gemm_detail::matrix_ref<T>& w, const strided4<T>& out) {
  const gemm_detail::matrix_ref<T> wt{w.p, w.cs, w.rs};  // CO x C
  for (index_t n = 0; n < s.N; ++n) {
    const gemm_detail::problem<T> pb{s.CO, s.H * s.W, s.C, wt, {in.p + n * in.sn, in.sc, 1}, {out.p + n * out.sn, out.sc, 1}, T(1), T(0)};
    gemm_detail::run_engine<void>(pb, identity_epilogue{});
  }
}

}  // namespace loom::conv_detail
