// Lesson 7: convolutions.
//
// loom::conv2d is the convolution engine's direct entry point (docs/conv.md): NHWC activations,
// HWIO weights, stride, padding, dilation and groups by name. The same engine runs a convolution
// written in index notation, with the rest of the expression (bias, ReLU, a residual) applied to
// each register tile before it is stored: one pass over the output, as with the GEMM engine.
//
//   register tile   6 output pixels x 4 vectors of 16 output channels (AVX-512 float)
//   per tap and input channel: 4 weight vectors (packed), 6 broadcasts of input values, 24 FMAs
//   the input is read where it is (no im2col); padded taps read a row of the padding's value
#include <loom/loom.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

#include "check.hpp"

using namespace loom::vars;
using loom::index_t;

/// The convolution at one output point, in double: zero padding p, stride s.
template <class In, class W>
double conv_at(const In& in, const W& w, index_t n, index_t oy, index_t ox, index_t co, index_t s, index_t p) {
  double acc = 0;
  for (index_t ky = 0; ky < w.extent(0); ++ky)
    for (index_t kx = 0; kx < w.extent(1); ++kx) {
      const index_t iy = oy * s + ky - p, ix = ox * s + kx - p;
      if (iy < 0 || iy >= in.extent(1) || ix < 0 || ix >= in.extent(2)) continue;
      for (index_t c = 0; c < w.extent(2); ++c) acc += double(in(n, iy, ix, c)) * double(w(ky, kx, c, co));
    }
  return acc;
}

int main() {
  const index_t N = 2, H = 13, W = 11, C = 7, CO = 20;  // no multiples of anything
  loom::Tensor<float, 4> in("in", N, H, W, C), w("w", 3, 3, C, CO);
  loom::Tensor<float, 1> bias("bias", CO);
  for (index_t i = 0; i < in.size(); ++i) in.data()[i] = float((i * 7) % 11) / 11.f - 0.5f;
  for (index_t i = 0; i < w.size(); ++i) w.data()[i] = float((i * 5) % 13) / 13.f - 0.5f;
  for (index_t c = 0; c < CO; ++c) bias(c) = float(c % 5) / 5.f - 0.4f;
  const double tol = 1e-5 * 9 * C;

  // 1. Direct: a 3 x 3 "same" convolution (stride 1, padding 1), then stride 2.
  loom::Tensor<float, 4> out("out", N, H, W, CO);
  loom::conv2d(out, in, w, loom::conv2d_params{.padding = 1});
  for (index_t n = 0; n < N; ++n)
    for (index_t y = 0; y < H; ++y)
      for (index_t x = 0; x < W; ++x)
        for (index_t co = 0; co < CO; ++co) lesson::expect_near(out(n, y, x, co), conv_at(in, w, n, y, x, co, 1, 1), tol, "same");
  const index_t OH = (H + 2 - 3) / 2 + 1, OW = (W + 2 - 3) / 2 + 1;
  loom::Tensor<float, 4> out2("out2", N, OH, OW, CO);

  // 2. Weights packed once, reused by every call (what an inference runtime does).
  const loom::conv2d_params s2{.stride = {2, 2}, .padding = 1};
  const auto packed = loom::pack_conv2d_weights(w, s2);
  loom::conv2d(out2, in, packed, s2);
  for (index_t n = 0; n < N; ++n)
    for (index_t y = 0; y < OH; ++y)
      for (index_t x = 0; x < OW; ++x)
        for (index_t co = 0; co < CO; ++co) lesson::expect_near(out2(n, y, x, co), conv_at(in, w, n, y, x, co, 2, 1), tol, "stride 2");

  // 3. Index notation: the padding is a boundary condition, the stride a coefficient, and bias +
  //    ReLU run on the register tile. print_loop_nest shows the engine took it.
  loom::Var<"n"> n;
  loom::Var<"co"> co;
  loom::Var<"ci"> ci;
  loom::Var<"ry"> ry;
  loom::Var<"rx"> rx;
  const auto pin = loom::constant_exterior(in, 0.f);
  const auto layer = (out2(n, y, x, co) = max(sum(ry, rx, ci, pin(n, y * 2 + ry - 1, x * 2 + rx - 1, ci) * w(ry, rx, ci, co)) + bias(co), 0.f));
  std::printf("%s\n", loom::print_loop_nest(layer).c_str());
  loom::run(layer);
  for (index_t a = 0; a < N; ++a)
    for (index_t b = 0; b < OH; ++b)
      for (index_t c = 0; c < OW; ++c)
        for (index_t o = 0; o < CO; ++o)
          lesson::expect_near(out2(a, b, c, o), std::max(conv_at(in, w, a, b, c, o, 2, 1) + bias(o), 0.0), tol, "bias + relu");

  // 4. Errors before anything is written: an output of the wrong size names the numbers.
  loom::Tensor<float, 4> wrong("wrong", N, H, W - 1, CO);
  try {
    loom::conv2d(wrong, in, w, loom::conv2d_params{.padding = 1});
    lesson::expect_near(0, 1, 0, "a wrong output extent must throw");
  } catch (const loom::shape_error& e) {
    std::printf("%s\n", e.what());
  }
  return lesson::finish("lesson_07_conv");
}
