// SPDX-License-Identifier: MIT
// loom/kernels/conv/params.hpp — what a 2-D convolution is asked to do (stride, padding,
// dilation, groups), the shape it implies, and the checks that run before anything is written.
//
//   out(n, oy, ox, co) = sum over ky, kx, c of
//       in(n, oy * stride_h + ky * dilation_h - pad_top, ox * stride_w + kx * dilation_w - pad_left,
//          g * Cg + c) * w(ky, kx, c, co)                                   (0 outside in)
//
// with Cg = C / groups input channels per group and g = co / (CO / groups) the group of output
// channel co. Activations are NHWC (N, H, W, C), weights HWIO (KH, KW, C / groups, CO).
#pragma once
#include <array>

#include "../../core/config.hpp"
#include "../../core/error.hpp"
#include "../../core/message.hpp"
#include "../../simd/cache.hpp"

namespace loom {

/// Zero padding around the input, in pixels: `1` (all four sides), `{1, 2}` (top and bottom 1,
/// left and right 2) or `{top, left, bottom, right}`.
struct conv2d_padding {
  index_t top = 0, left = 0, bottom = 0, right = 0;
  constexpr conv2d_padding() = default;
  constexpr conv2d_padding(index_t all) : top(all), left(all), bottom(all), right(all) {}  // NOLINT: `.padding = 1`
  constexpr conv2d_padding(index_t h, index_t w) : top(h), left(w), bottom(h), right(w) {}
  constexpr conv2d_padding(index_t t, index_t l, index_t b, index_t r) : top(t), left(l), bottom(b), right(r) {}
};

/// How a convolution is computed. `winograd`: Winograd F(4 x 4, 3 x 3); `winograd_2x2`:
/// F(2 x 2, 3 x 3) (fewer savings, a fifth of the error, 16 rather than 36 transformed matrices).
/// `automatic`: F(4 x 4) where it applies and pays, else F(2 x 2) where that pays, else direct
/// (conv_detail::chosen_path).
enum class conv_algorithm { automatic, direct, winograd, winograd_2x2 };

/// A convolution's parameters, by name: `loom::conv2d_params{.stride = {2, 2}, .padding = 1}`.
struct conv2d_params {
  std::array<index_t, 2> stride{1, 1};    // (h, w)
  conv2d_padding padding{};
  std::array<index_t, 2> dilation{1, 1};  // (h, w): 2 reads every other input pixel
  index_t groups = 1;                     // C and CO split into groups; groups == C is depthwise
  conv_algorithm algorithm = conv_algorithm::automatic;
};

/// The sizes a convolution of given operands has, derived and checked once.
struct conv2d_shape {
  index_t N, H, W, C;     // input
  index_t KH, KW, Cg;     // weights: KH x KW x Cg x CO
  index_t CO, OH, OW;     // output
  index_t groups, COg;    // groups, output channels per group
  index_t sh, sw, dh, dw; // stride, dilation
  index_t pt, pl;         // padding top, left (bottom and right only shape OH, OW)
  double pad_value = 0;   // what the padding holds (constant_exterior's value in index notation)

  /// Whether Winograd F(4 x 4, 3 x 3) pays for this shape: enough 4 x 4 output tiles in the
  /// batch (16) to reuse the transformed weights (36 x C x CO values, streamed once per run of
  /// tiles), or transformed weights that stay in the last-level cache (half of it) from call to
  /// call. Measurements: docs/tuning.md#winograd-choice.
  template <class T>
  bool winograd_pays() const {
    return tiles(4) >= 16 || winograd_weights_fit<T>(C, CO);
  }
  /// Output tiles of M x M in the batch.
  constexpr index_t tiles(index_t M) const { return N * ((OH + M - 1) / M) * ((OW + M - 1) / M); }
  /// Whether F(4 x 4)'s transformed weights (36 C CO values) fit in half the last-level cache.
  template <class T>
  static bool winograd_weights_fit(index_t C, index_t CO) {
    return 36.0 * double(C) * double(CO) * double(sizeof(T)) <= double(simd::last_level_cache_bytes()) / 2;
  }
};

namespace conv_detail {

/// The output extent along one axis, or a value < 1 when the kernel does not fit; -1 when the
/// padded extent or the window's span does not fit in index_t (check() reports it).
constexpr index_t out_extent(index_t in, index_t pad_lo, index_t pad_hi, index_t k, index_t stride, index_t dil) {
  index_t span = 0, padded = 0;
  if (__builtin_mul_overflow(dil, k - 1, &span) || __builtin_add_overflow(span, index_t{1}, &span) ||
      __builtin_add_overflow(in, pad_lo, &padded) || __builtin_add_overflow(padded, pad_hi, &padded))
    return -1;
  const index_t room = padded - span;
  return room < 0 ? 0 : room / stride + 1;
}

/// Whether a window of KH x KW, stride, dilation and groups can run as Winograd F(4 x 4, 3 x 3).
constexpr bool winograd_applies(index_t KH, index_t KW, const conv2d_params& p) {
  return KH == 3 && KW == 3 && p.stride[0] == 1 && p.stride[1] == 1 && p.dilation[0] == 1 && p.dilation[1] == 1 && p.groups == 1;
}
/// The same for a convolution's derived shape.
constexpr bool winograd_applies(const conv2d_shape& s) {
  return s.KH == 3 && s.KW == 3 && s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1 && s.groups == 1;
}
/// The layouts a packing holds; a call runs one of them (chosen_path).
struct conv_layouts {
  bool direct = true, winograd4 = false, winograd2 = false;
};

/// Which algorithm a call runs.
enum class conv_path { direct, winograd4, winograd2 };

/// Whether Winograd may be chosen automatically: it applies and both channel counts fill a vector.
constexpr bool winograd_candidate(index_t C, index_t CO) { return C >= 16 && CO >= 16; }

/// The layouts pack_conv2d_weights holds for parameters p (the image's size is not known yet, so
/// every layout the call may choose): direct, F(4 x 4) when it may be chosen, F(2 x 2) when it is
/// asked for or may be chosen (F(4 x 4)'s weights beyond the cache limit).
template <class T>
conv_layouts packed_layouts(index_t KH, index_t KW, index_t C, index_t CO, const conv2d_params& p) {
  conv_layouts l;
  if (p.algorithm == conv_algorithm::direct || !winograd_applies(KH, KW, p)) return l;
  const bool automatic = p.algorithm == conv_algorithm::automatic && winograd_candidate(C, CO);
  l.winograd4 = p.algorithm == conv_algorithm::winograd || automatic;
  l.winograd2 = p.algorithm == conv_algorithm::winograd_2x2 || (automatic && !conv2d_shape::winograd_weights_fit<T>(C, CO));
  return l;
}

/// The algorithm a call runs: the one asked for, or under automatic F(4 x 4) where it applies and
/// pays (conv2d_shape::winograd_pays), else F(2 x 2) where the batch has >= 16 of its 2 x 2 tiles
/// to stream its 16 matrices for, else direct (measured: docs/tuning.md#winograd-choice).
template <class T>
conv_path chosen_path(const conv2d_shape& s, conv_algorithm algorithm) {
  if (algorithm == conv_algorithm::direct || !winograd_applies(s)) return conv_path::direct;
  if (algorithm == conv_algorithm::winograd) return conv_path::winograd4;
  if (algorithm == conv_algorithm::winograd_2x2) return conv_path::winograd2;
  if (!winograd_candidate(s.C, s.CO)) return conv_path::direct;
  if (s.template winograd_pays<T>()) return conv_path::winograd4;
  return s.tiles(2) >= 16 ? conv_path::winograd2 : conv_path::direct;
}

/// The one layout a call that packs for itself needs.
constexpr conv_layouts layout_for(conv_path path) {
  return {path == conv_path::direct, path == conv_path::winograd4, path == conv_path::winograd2};
}

[[noreturn]] LOOM_COLD inline void fail(const std::string& what) { throw shape_error("loom::conv2d: " + what); }

/// Every check of the parameters and the operands' extents, before anything is read or written.
/// in, w, out: rank-4 views (NHWC, HWIO, NHWC).
template <class IV, class WV, class OV>
conv2d_shape check(const OV& out, const IV& in, const WV& w, const conv2d_params& p) {
  const auto name = [](const auto& v) { return detail::cat("'", v.name(), "'"); };
  if (p.stride[0] < 1 || p.stride[1] < 1)
    fail(detail::cat("stride (", p.stride[0], ", ", p.stride[1], ") must be >= 1"));
  if (p.dilation[0] < 1 || p.dilation[1] < 1)
    fail(detail::cat("dilation (", p.dilation[0], ", ", p.dilation[1], ") must be >= 1"));
  const auto& pd = p.padding;
  if (pd.top < 0 || pd.left < 0 || pd.bottom < 0 || pd.right < 0)
    fail(detail::cat("padding (top ", pd.top, ", left ", pd.left, ", bottom ", pd.bottom, ", right ", pd.right, ") must be >= 0"));
  conv2d_shape s{};
  s.N = in.extent(0), s.H = in.extent(1), s.W = in.extent(2), s.C = in.extent(3);
  s.KH = w.extent(0), s.KW = w.extent(1), s.Cg = w.extent(2), s.CO = w.extent(3);
  s.groups = p.groups;
  s.sh = p.stride[0], s.sw = p.stride[1], s.dh = p.dilation[0], s.dw = p.dilation[1];
  s.pt = pd.top, s.pl = pd.left;
  if (s.groups < 1) fail(detail::cat("groups is ", s.groups, "; it must be >= 1"));
  if (s.C % s.groups != 0)
    fail(detail::cat("groups ", s.groups, " does not divide the ", s.C, " channels of input ", name(in), " (dimension 3)"));
  if (s.CO % s.groups != 0)
    fail(detail::cat("groups ", s.groups, " does not divide the ", s.CO, " output channels of weights ", name(w), " (dimension 3)"));
  s.COg = s.CO / s.groups;
  if (s.Cg != s.C / s.groups)
    fail(detail::cat("weights ", name(w), " dimension 2 has extent ", s.Cg, " but input ", name(in), " has ", s.C,
                     " channels in ", s.groups, " group(s): ", s.C / s.groups, " per group (weights are KH x KW x C/groups x CO)"));
  if ((p.algorithm == conv_algorithm::winograd || p.algorithm == conv_algorithm::winograd_2x2) && !winograd_applies(s.KH, s.KW, p))
    fail(detail::cat(p.algorithm == conv_algorithm::winograd ? "conv_algorithm::winograd" : "conv_algorithm::winograd_2x2",
                     " needs a 3 x 3 window, stride 1, dilation 1 and one group; weights ", name(w),
                     " are ", s.KH, " x ", s.KW, ", stride (", p.stride[0], ", ", p.stride[1], "), dilation (", p.dilation[0], ", ",
                     p.dilation[1], "), groups ", p.groups));
  if (s.KH < 1 || s.KW < 1) fail(detail::cat("weights ", name(w), " have an empty window (", s.KH, " x ", s.KW, ")"));
  s.OH = out_extent(s.H, pd.top, pd.bottom, s.KH, s.sh, s.dh);
  s.OW = out_extent(s.W, pd.left, pd.right, s.KW, s.sw, s.dw);
  if (s.OH < 0 || s.OW < 0)
    fail(detail::cat("padding (top ", pd.top, ", left ", pd.left, ", bottom ", pd.bottom, ", right ", pd.right, ") or dilation (",
                     p.dilation[0], ", ", p.dilation[1], ") with the ", s.KH, " x ", s.KW, " window of weights ", name(w),
                     " and the ", s.H, " x ", s.W, " input ", name(in), " overflow 64-bit indices"));
  if (out.extent(0) != s.N)
    fail(detail::cat("output ", name(out), " dimension 0 (N) has extent ", out.extent(0), " but input ", name(in), " has ", s.N));
  if (out.extent(3) != s.CO)
    fail(detail::cat("output ", name(out), " dimension 3 (channels) has extent ", out.extent(3), " but weights ", name(w),
                     " have ", s.CO, " output channels"));
  if (out.extent(1) != s.OH)
    fail(detail::cat("output ", name(out), " dimension 1 (height) has extent ", out.extent(1), " but should be ", s.OH,
                     " = (H ", s.H, " + padding ", pd.top, " + ", pd.bottom, " - dilation ", s.dh, " x (KH ", s.KH,
                     " - 1) - 1) / stride ", s.sh, " + 1"));
  if (out.extent(2) != s.OW)
    fail(detail::cat("output ", name(out), " dimension 2 (width) has extent ", out.extent(2), " but should be ", s.OW,
                     " = (W ", s.W, " + padding ", pd.left, " + ", pd.right, " - dilation ", s.dw, " x (KW ", s.KW,
                     " - 1) - 1) / stride ", s.sw, " + 1"));
  detail::check_distinct_elements(out, "loom::conv2d");
  return s;
}

}  // namespace conv_detail

}  // namespace loom
