// SPDX-License-Identifier: MIT
// loom/kernels/conv/pointwise.hpp — a 1 x 1 convolution at stride 1 is a GEMM:
// out(N H W x CO) = in(N H W x C) w(C x CO). When the pixels of the input and the output are evenly
// spaced (NHWC with packed rows and images, or one row, or one image) the GEMM engine runs it
// straight on the tensors, no copy, the epilogue on its micro-tiles (its i is the conv's pixel, its
// j the output channel: the same contract).
#pragma once
#include "../../core/config.hpp"
#include "../gemm/driver.hpp"
#include "direct.hpp"
#include "params.hpp"

namespace loom::conv_detail {

/// Whether a view's pixels (n, y, x) sit at one stride apart: pixel q = (n * H + y) * W + x at
/// p + q * v.sw.
template <class T>
bool pixels_evenly_spaced(const nhwc<T>& v, index_t N, index_t H, index_t W) {
  return (N <= 1 || v.sn == H * v.sh) && (H <= 1 || v.sh == W * v.sw);
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

}  // namespace loom::conv_detail
