// tests/conv_case.hpp — a convolution's shape and parameters, as the convolution tests draw them
// (test_conv.cpp, test_conv_shrunk.cpp).
#pragma once

#include "support.hpp"

#include <string>

#include <loom/kernels/conv.hpp>

namespace lt {

/// A convolution's shape and parameters (in N x H x W x C, weights KH x KW x C/groups x CO).
struct conv_case {
  using index_t = loom::index_t;
  index_t N = 1, H = 1, W = 1, C = 1, KH = 1, KW = 1, CO = 1, groups = 1;
  index_t sh = 1, sw = 1, dh = 1, dw = 1;
  index_t pt = 0, pl = 0, pb = 0, pr = 0;
  loom::conv_algorithm algorithm = loom::conv_algorithm::automatic;

  index_t Cg() const { return C / groups; }
  index_t COg() const { return CO / groups; }
  static index_t extent(index_t in, index_t lo, index_t hi, index_t k, index_t stride, index_t dil) {
    const index_t room = in + lo + hi - dil * (k - 1) - 1;
    return room < 0 ? 0 : room / stride + 1;
  }
  index_t OH() const { return extent(H, pt, pb, KH, sh, dh); }
  index_t OW() const { return extent(W, pl, pr, KW, sw, dw); }
  /// Multiply-adds of the reference (its run time).
  double macs() const { return double(N) * double(OH()) * double(OW()) * double(CO) * double(KH * KW * Cg()); }
  loom::conv2d_params params() const {
    return {.stride = {sh, sw}, .padding = {pt, pl, pb, pr}, .dilation = {dh, dw}, .groups = groups, .algorithm = algorithm};
  }
  idx_t<4> in_ext() const { return {N, H, W, C}; }
  idx_t<4> w_ext() const { return {KH, KW, Cg(), CO}; }
  idx_t<4> out_ext() const { return {N, OH(), OW(), CO}; }
  /// A 3 x 3, stride-1, dilation-1, one-group layer: one Winograd applies to.
  bool winograd_shape() const { return KH == 3 && KW == 3 && sh == 1 && sw == 1 && dh == 1 && dw == 1 && groups == 1; }
  std::string describe() const {
    using A = loom::conv_algorithm;
    return str("N = ", N, ", H = ", H, ", W = ", W, ", C = ", C, ", CO = ", CO, ", kernel ", KH, " x ", KW, ", groups ", groups,
               ", stride (", sh, ", ", sw, "), dilation (", dh, ", ", dw, "), padding (top ", pt, ", left ", pl, ", bottom ", pb,
               ", right ", pr, ") -> OH = ", OH(), ", OW = ", OW(),
               algorithm == A::direct         ? ", algorithm direct"
               : algorithm == A::winograd     ? ", algorithm winograd"
               : algorithm == A::winograd_2x2 ? ", algorithm winograd_2x2"
                                              : ", algorithm automatic");
  }
};

}  // namespace lt
