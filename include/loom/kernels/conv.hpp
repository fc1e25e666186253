// SPDX-License-Identifier: MIT
// loom/kernels/conv.hpp — the convolution engine's direct entry point:
//
//   loom::conv2d(out, in, w, loom::conv2d_params{.stride = {2, 2}, .padding = 1});
//   auto pw = loom::pack_conv2d_weights(w, params);   // once
//   loom::conv2d(out, in, pw, params);                // every call
//   loom::conv2d(out, in, w, params, epilogue);       // bias, ReLU, ... on each register tile
//   loom::conv2d_reference(out, in, w, params);       // plain loops, for checking
//
// in (N, H, W, C) and out (N, OH, OW, CO) are rank-4 tensors or views of float or double; w is
// (KH, KW, C / groups, CO). Any strides are accepted: NHWC views run in place, others (an NCHW
// tensor seen through a permuting view, say) are copied to NHWC and back around the kernel.
// Shapes are checked before anything is read or written (loom::shape_error naming the tensors and
// the numbers); an output that overlaps an operand is computed into a temporary first. Paths:
// depthwise (groups == C, one output channel per channel: vectors along the channels) and dense
// or grouped (register tiles of output pixels x output channels over packed weights).
#pragma once
#include <string_view>
#include <type_traits>
#include <utility>

#include "../core/error.hpp"
#include "../core/tensor.hpp"
#include "../lower/run.hpp"  // detail::copy_view
#include "conv/depthwise.hpp"
#include "conv/direct.hpp"
#include "conv/layout.hpp"
#include "conv/pack.hpp"
#include "conv/params.hpp"
#include "conv/pointwise.hpp"
#include "conv/policy.hpp"
#include "conv/reference.hpp"
#include "conv/winograd.hpp"
#include "gemm/epilogue.hpp"

namespace loom {

namespace conv_detail {

template <class V>
using view_of = std::remove_cvref_t<decltype(std::declval<V&>().as_view())>;

/// A tensor or a view (its rank is checked by check_ranks, so a wrong one is one loom message
/// rather than a list of overload candidates).
template <class V>
concept tensor_like = requires(V& v) { v.as_view(); };

template <class O, class I, class W = void>
constexpr bool check_ranks() {
  static_assert(view_of<O>::rank == 4, "loom::conv2d: the output must be rank 4: (N, OH, OW, CO)");
  static_assert(view_of<const I>::rank == 4,
                "loom::conv2d: the input must be rank 4: (N, H, W, C), NHWC (or a view that sees another layout as NHWC)");
  if constexpr (!std::is_void_v<W>)
    static_assert(view_of<const W>::rank == 4, "loom::conv2d: the weights must be rank 4: (KH, KW, C / groups, CO), HWIO");
  if constexpr (std::is_void_v<W>) return view_of<O>::rank == 4 && view_of<const I>::rank == 4;
  else return view_of<O>::rank == 4 && view_of<const I>::rank == 4 && view_of<const W>::rank == 4;
}

/// The extents and name a packed set of weights stands for, as check() reads them from a view.
template <class P>
struct packed_shape {
  const conv2d_packed_weights<P>& pw;
  index_t extent(std::size_t d) const {
    const index_t e[4] = {pw.kh(), pw.kw(), pw.channels_per_group(), pw.out_channels()};
    return e[d];
  }
  std::string_view name() const { return "packed weights"; }
};

/// A dense NHWC copy of v (any strides) in the calling thread's scratch for the input
/// (conv/layout.hpp: a blocked transpose where v is NCHW).
template <class T, class V>
nhwc<const T> nhwc_copy(const V& v) {
  return dense_nhwc<const T>(gather_nhwc<relayout_in_scratch>(strided_of<const T>(v)), v.extent(1), v.extent(2), v.extent(3));
}

template <class T, class V>
nhwc<T> as_nhwc(const V& v) {
  return {v.data(), v.stride(0), v.stride(1), v.stride(2)};
}

/// The epilogue of images n0 ... of a batch run a band of images at a time: the kernels count the
/// band's pixels from 0, the epilogue sees the batch's.
template <class Epi>
struct band_epilogue {
  const Epi& epi;
  index_t n0, pixels;  // the band's first image, pixels per image
  static constexpr bool takes_points = point_epilogue<Epi>;
  template <class B>
  LOOM_INLINE B apply(const B& v, index_t i, index_t j, index_t lanes) const {
    return epi.template apply<B>(v, i + n0 * pixels, j, lanes);
  }
  template <class B>
  LOOM_INLINE B apply_at(const B& v, const out_point& at, index_t j, index_t lanes) const {
    return epi.template apply_at<B>(v, out_point{at.n + n0, at.y, at.x, at.flat + n0 * pixels}, j, lanes);
  }
  LOOM_INLINE auto pixel(const out_point& at) const
    requires pixel_epilogue<Epi>
  {
    return epi.pixel(out_point{at.n + n0, at.y, at.x, at.flat + n0 * pixels});
  }
  LOOM_INLINE void prefetch_at(const out_point& at, index_t j, index_t count) const
    requires prefetching_epilogue<Epi>
  {
    epi.prefetch_at(out_point{at.n + n0, at.y, at.x, at.flat + n0 * pixels}, j, count);
  }
};

/// The kernel of `path` on NHWC views with unit channel stride.
template <class P, class Epi>
void run_nhwc(const conv2d_shape& s, const nhwc<const typename P::value_type>& src, const conv2d_packed_weights<P>& pw,
              const nhwc<typename P::value_type>& dst, const Epi& epi, conv_path path) {
  if (path == conv_path::winograd4 && pw.winograd()) run_winograd<4, P>(s, src, pw.vectors(), pw.winograd_data(), dst, epi);
  else if (path == conv_path::winograd2 && pw.winograd2()) run_winograd<2, P>(s, src, pw.vectors(), pw.winograd2_data(), dst, epi);
  else if (pw.depthwise()) run_depthwise<P>(s, src, pw, dst, epi);
  else run_dense<P>(s, src, pw, dst, epi);
}

/// conv2d's plain loops (reference.hpp), into a temporary when the output overlaps an operand:
/// what a call with a non-finite weight runs (conv2d_packed_weights::finite()).
template <class OV, class IV, class WR, class Epi>
void run_plain_loops(const conv2d_shape& s, const OV& out, const IV& in, const WR& w, const Epi& epi, bool overlap) {
  using T = typename OV::value_type;
  if (overlap) {
    Tensor<T, 4> tmp(s.N, s.OH, s.OW, s.CO);
    reference(s, tmp.as_view(), in, w, epi);
    detail::copy_view(out, tmp.as_view());
  } else {
    reference(s, out, in, w, epi);
  }
}
/// Packed weights read back one at a time (their direct layout), for the plain loops.
template <class P>
struct packed_weight_reader {
  const conv2d_packed_weights<P>* pw;
  typename P::value_type operator()(index_t ky, index_t kx, index_t c, index_t co) const { return pw->weight(ky, kx, c, co); }
};

/// The run-time side of loom::conv2d: in and out as NHWC with unit channel stride (copies where
/// they are not, or where out overlaps in), then the path for the shape (chosen for the whole
/// batch; the weights must hold its layout, else direct).
template <class P, class OV, class IV, class Epi>
void run_packed(const conv2d_shape& s, const OV& out, const IV& in, const conv2d_packed_weights<P>& pw, const Epi& epi,
                conv_algorithm algorithm) {
  using T = typename P::value_type;
  if (s.N * s.OH * s.OW * s.CO == 0) return;
  const bool overlap = views_overlap(out, in);
  // A NaN or infinite weight: the kernels would multiply padded taps, conv2d skips them. (Weights
  // packed for Winograd alone run as packed: its transforms spread any non-finite value.)
  if (!pw.finite() && pw.direct()) return run_plain_loops(s, out, in, packed_weight_reader<P>{&pw}, epi, overlap);
  const conv_path path = chosen_path<T>(s, algorithm);
  const bool in_place_in = in.stride(3) == 1 && !overlap;
  const bool in_place_out = out.stride(3) == 1;
  if (in_place_in && in_place_out) return run_nhwc<P>(s, as_nhwc<const T>(in), pw, as_nhwc<T>(out), epi, path);
  if constexpr (gemm_detail::is_identity_epilogue<Epi>) {
    // A 1 x 1 on NCHW planes: a GEMM per image on the planes themselves, no copies.
    if (pw.plain_data() && !overlap && planes_run_as_gemm(s, strided_of<const T>(in), strided_of<T>(out)))
      return run_planes_as_gemm<T>(s, strided_of<const T>(in), gemm_detail::matrix_ref<T>{pw.plain_data(), s.CO, 1}, strided_of<T>(out));
    // Depthwise on NCHW planes at row stride 1: a stencil per plane, no copies to NHWC (they
    // would cost more than it).
    if (pw.depthwise() && !overlap && in.stride(3) != 1 && depthwise_narrow_planes_apply(s, strided_of<const T>(in), strided_of<T>(out)))
      return run_depthwise_narrow_planes<T>(s, strided_of<const T>(in), pw.data(), strided_of<T>(out));
    if (pw.depthwise() && !overlap && in.stride(3) != 1 && depthwise_planes_apply(s, strided_of<const T>(in), strided_of<T>(out)))
      return run_depthwise_planes<T>(s, strided_of<const T>(in), pw.data(), strided_of<T>(out));
  }
  if (overlap) {  // the whole input copied before any output is written
    const nhwc<const T> src = nhwc_copy<T>(in);
    const nhwc<T> dst = in_place_out ? as_nhwc<T>(out)
                                     : dense_nhwc(loom::detail::scratch<T, relayout_out_scratch>(std::size_t(s.N * s.OH * s.OW * s.CO)),
                                                  s.OH, s.OW, s.CO);
    run_nhwc<P>(s, src, pw, dst, epi, path);
    if (!in_place_out) scatter_nhwc<T>(dst.p, strided_of<T>(out));
    return;
  }
  // Copies a band of images at a time (as many as fit in half of the team's L2, at least one per
  // thread), so that each copy is still in cache when the kernel reads it or the scatter writes it
  // out (whole-batch copies run at memory speed: docs/tuning.md#convolution-layouts).
  const index_t image_bytes = (s.H * s.W * s.C + s.OH * s.OW * s.CO) * index_t(sizeof(T));
  const index_t team = loom::get_num_threads();
  // (Not std::clamp: a team larger than the batch is lo > hi, its precondition.)
  const index_t band = std::min(std::max<index_t>(team * simd::l2_cache_bytes() / 2 / std::max<index_t>(image_bytes, 1), team), s.N);
  const strided4<const T> iv = strided_of<const T>(in);
  const strided4<T> ov = strided_of<T>(out);
  for (index_t n0 = 0; n0 < s.N; n0 += band) {
    conv2d_shape sb = s;
    sb.N = std::min(band, s.N - n0);
    strided4<const T> ib = iv;
    ib.p += n0 * iv.sn, ib.N = sb.N;
    strided4<T> ob = ov;
    ob.p += n0 * ov.sn, ob.N = sb.N;
    const nhwc<const T> src =
        in_place_in ? nhwc<const T>{ib.p, ib.sn, ib.sh, ib.sw} : dense_nhwc<const T>(gather_nhwc<relayout_in_scratch>(ib), s.H, s.W, s.C);
    const nhwc<T> dst = in_place_out ? nhwc<T>{ob.p, ob.sn, ob.sh, ob.sw}
                                     : dense_nhwc(loom::detail::scratch<T, relayout_out_scratch>(std::size_t(sb.N * s.OH * s.OW * s.CO)),
                                                  s.OH, s.OW, s.CO);
    if constexpr (gemm_detail::is_identity_epilogue<Epi>) run_nhwc<P>(sb, src, pw, dst, epi, path);
    else run_nhwc<P>(sb, src, pw, dst, band_epilogue<Epi>{epi, n0, s.OH * s.OW}, path);
    if (!in_place_out) scatter_nhwc<T>(dst.p, ob);
  }
}

template <class P, class O, class I>
constexpr void check_types() {
  using T = typename view_of<O>::value_type;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "loom::conv2d: the output must hold float or double");
  static_assert(std::is_same_v<typename view_of<const I>::value_type, T>, "loom::conv2d: in and out must have the same element type");
  static_assert(!std::is_const_v<typename view_of<O>::element_type>, "loom::conv2d: the output must be writable (not a view of const)");
  static_assert(ConvPolicy<P>, "loom::conv2d<Policy>: Policy must be a loom::conv_policy<...>");
  static_assert(std::is_same_v<typename P::value_type, T>, "loom::conv2d: the policy is for another element type");
}

template <class Policy, class T>
using policy_or_default = std::conditional_t<std::is_void_v<Policy>, default_conv_policy<T>, Policy>;

// The entry points' bodies, for operands of the right ranks (defined below them).
template <class Policy, class OM, class IM, class WM, class Epi>
void conv2d_checked(OM&& out, const IM& in, const WM& w, const conv2d_params& p, const Epi& epilogue);
template <class OM, class IM, class P, class Epi>
void conv2d_packed_checked(OM&& out, const IM& in, const conv2d_packed_weights<P>& w, const conv2d_params& p, const Epi& epilogue);

}  // namespace conv_detail

/// Packs w (KH x KW x C/groups x CO, float or double, any strides) once for conv2d calls with
/// p.groups groups.
template <class Policy = void, conv_detail::tensor_like WM>
auto pack_conv2d_weights(const WM& w, const conv2d_params& p = {}) {
  static_assert(conv_detail::view_of<const WM>::rank == 4, "loom::pack_conv2d_weights: the weights must be rank 4: (KH, KW, C / groups, CO), HWIO");
  using T = std::remove_const_t<typename conv_detail::view_of<const WM>::value_type>;
  using P = conv_detail::policy_or_default<Policy, T>;
  static_assert(ConvPolicy<P> && std::is_same_v<typename P::value_type, T>,
                "loom::pack_conv2d_weights<Policy>: Policy must be a loom::conv_policy<...> for the weights' element type");
  const auto& wv = w.as_view();
  if (p.groups < 1) conv_detail::fail(detail::cat("groups is ", p.groups, "; it must be >= 1"));
  if (wv.extent(3) % p.groups != 0)
    conv_detail::fail(detail::cat("groups ", p.groups, " does not divide the ", wv.extent(3), " output channels of weights '",
                                  wv.name(), "' (dimension 3)"));
  const bool asks_winograd = p.algorithm == conv_algorithm::winograd || p.algorithm == conv_algorithm::winograd_2x2;
  if (asks_winograd && !conv_detail::winograd_applies(wv.extent(0), wv.extent(1), p))
    conv_detail::fail(detail::cat(p.algorithm == conv_algorithm::winograd ? "conv_algorithm::winograd" : "conv_algorithm::winograd_2x2",
                                  " needs a 3 x 3 window, stride 1, dilation 1 and one group; weights '", wv.name(), "' are ",
                                  wv.extent(0), " x ", wv.extent(1)));
  return conv2d_packed_weights<P>::pack(
      wv, p.groups, conv_detail::packed_layouts<T>(wv.extent(0), wv.extent(1), wv.extent(2) * p.groups, wv.extent(3), p));
}

/// out = epilogue(convolution of in with weights w under p).
template <class Policy = void, conv_detail::tensor_like OM, conv_detail::tensor_like IM, conv_detail::tensor_like WM,
          class Epi = identity_epilogue>
void conv2d(OM&& out, const IM& in, const WM& w, const conv2d_params& p = {}, const Epi& epilogue = {}) {
  if constexpr (conv_detail::check_ranks<OM, IM, WM>()) conv_detail::conv2d_checked<Policy>(std::forward<OM>(out), in, w, p, epilogue);
}
namespace conv_detail {
/// conv2d on operands of the right ranks.
template <class Policy, class OM, class IM, class WM, class Epi>
void conv2d_checked(OM&& out, const IM& in, const WM& w, const conv2d_params& p, const Epi& epilogue) {
  using T = typename conv_detail::view_of<OM>::value_type;
  using P = conv_detail::policy_or_default<Policy, T>;
  conv_detail::check_types<P, OM, IM>();
  static_assert(std::is_same_v<typename conv_detail::view_of<const WM>::value_type, T>,
                "loom::conv2d: the weights must have the output's element type");
  const auto& o = out.as_view();
  const auto& i = in.as_view();
  const auto& wv = w.as_view();
  const conv2d_shape s = conv_detail::check(o, i, wv, p);
  if (s.N * s.OH * s.OW * s.CO == 0) return;
  if (i.stride(3) == 1 && o.stride(3) == 1 && !views_overlap(o, i) && !views_overlap(o, wv)) {
    const auto src = conv_detail::as_nhwc<const T>(i);
    const auto dst = conv_detail::as_nhwc<T>(o);
    if (conv_detail::runs_as_gemm(s, src, dst)) {  // 1 x 1, stride 1: a GEMM on the tensors themselves
      conv_detail::run_as_gemm(s, src, gemm_detail::matrix_ref<T>{wv.data(), wv.stride(2), wv.stride(3)}, dst, epilogue);
      return;
    }
  }
  if constexpr (gemm_detail::is_identity_epilogue<Epi>) {  // the same on NCHW planes, out = w^T in per image
    const auto src = conv_detail::strided_of<const T>(i);
    const auto dst = conv_detail::strided_of<T>(o);
    if (!views_overlap(o, i) && !views_overlap(o, wv) && conv_detail::planes_run_as_gemm(s, src, dst)) {
      conv_detail::run_planes_as_gemm(s, src, gemm_detail::matrix_ref<T>{wv.data(), wv.stride(2), wv.stride(3)}, dst);
      return;
    }
  }
  // Packed before anything is written, so weights that overlap the output are read intact.
  const conv_path path = conv_detail::chosen_path<T>(s, p.algorithm);
  const auto packed = conv2d_packed_weights<P>::pack(wv, p.groups, conv_detail::layout_for(path), true);
  if (!packed.finite())  // (see run_packed)
    return conv_detail::run_plain_loops(s, o, i, wv, epilogue, views_overlap(o, i) || views_overlap(o, wv));
  conv_detail::run_packed<P>(s, o, i, packed, epilogue, p.algorithm);
}
}  // namespace conv_detail

/// The same with weights packed once by pack_conv2d_weights (for the same groups).
template <conv_detail::tensor_like OM, conv_detail::tensor_like IM, class P, class Epi = identity_epilogue>
void conv2d(OM&& out, const IM& in, const conv2d_packed_weights<P>& w, const conv2d_params& p = {}, const Epi& epilogue = {}) {
  if constexpr (conv_detail::check_ranks<OM, IM>()) conv_detail::conv2d_packed_checked(std::forward<OM>(out), in, w, p, epilogue);
}
namespace conv_detail {
template <class OM, class IM, class P, class Epi>
void conv2d_packed_checked(OM&& out, const IM& in, const conv2d_packed_weights<P>& w, const conv2d_params& p, const Epi& epilogue) {
  conv_detail::check_types<P, OM, IM>();
  const auto& o = out.as_view();
  const auto& i = in.as_view();
  if (w.groups() != p.groups)
    conv_detail::fail(detail::cat("the packed weights were packed for ", w.groups(), " group(s), the parameters ask for ", p.groups));
  const conv2d_shape s = conv_detail::check(o, i, conv_detail::packed_shape<P>{w}, p);
  if (p.algorithm == conv_algorithm::winograd && !w.winograd())
    conv_detail::fail("conv_algorithm::winograd: the weights were not packed for Winograd (pack them with the same parameters)");
  if (p.algorithm == conv_algorithm::winograd_2x2 && !w.winograd2())
    conv_detail::fail("conv_algorithm::winograd_2x2: the weights were not packed for Winograd F(2 x 2, 3 x 3) (pack them with the same "
                      "parameters)");
  conv_detail::run_packed<P>(s, o, i, w, epilogue, p.algorithm);
}
}  // namespace conv_detail

/// The convolution as plain loops (any layout; sums in the element type): a check for the others.
template <conv_detail::tensor_like OM, conv_detail::tensor_like IM, conv_detail::tensor_like WM, class Epi = identity_epilogue>
void conv2d_reference(OM&& out, const IM& in, const WM& w, const conv2d_params& p = {}, const Epi& epilogue = {}) {
  static_assert(conv_detail::check_ranks<OM, IM, WM>());
  using T = typename conv_detail::view_of<OM>::value_type;
  conv_detail::check_types<default_conv_policy<T>, OM, IM>();
  const auto& o = out.as_view();
  const auto& i = in.as_view();
  const auto& wv = w.as_view();
  const conv2d_shape s = conv_detail::check(o, i, wv, p);
  if (views_overlap(o, i) || views_overlap(o, wv)) {
    Tensor<T, 4> tmp(s.N, s.OH, s.OW, s.CO);
    conv_detail::reference(s, tmp.as_view(), i, wv, epilogue);
    detail::copy_view(o, tmp.as_view());
    return;
  }
  conv_detail::reference(s, o, i, wv, epilogue);
}

}  // namespace loom
