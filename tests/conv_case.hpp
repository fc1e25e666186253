// tests/conv_case.hpp — a convolution's shape and parameters, as the convolution tests draw them,
// and the epilogue they check the engine's epilogue contract with (test_conv.cpp,
// test_conv_shrunk.cpp).
#pragma once

#include "support.hpp"

#include <algorithm>
#include <atomic>
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

/// The test's epilogue: max(v + bias(channel), 0) + pixel_step * (pixel % 5). A pixel_step of 0
/// is plain bias + ReLU; otherwise a wrong pixel index shows in the result. It counts calls that
/// break the epilogue contract (lanes outside [1, B::size], channels or pixels out of range) and
/// then loads nothing.
template <class T>
struct bias_relu {
  const T* bias;
  double pixel_step;
  loom::index_t pixels, channels;
  std::atomic<int>* violations;

  template <class B>
  B apply(B v, loom::index_t pixel, loom::index_t channel, index_t lanes) const {
    if (lanes < 1 || lanes > loom::index_t(B::size) || channel < 0 || channel + lanes > channels || pixel < 0 || pixel >= pixels) {
      violations->fetch_add(1, std::memory_order_relaxed);
      return v;
    }
    const B b = loom::simd::load_first<B>(bias + channel, lanes);
    return xsimd::max(v + b, B(T(0))) + B(T(pixel_step * double(pixel % 5)));
  }
  double scalar(double v, loom::index_t pixel, loom::index_t channel) const {
    return std::max(v + double(bias[channel]), 0.0) + pixel_step * double(pixel % 5);
  }
};

}  // namespace lt
