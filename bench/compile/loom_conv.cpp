// bench/compile/loom_conv.cpp — compile-time probe (bench/compile_time.sh): one convolution with a
// bias + ReLU epilogue in index notation (3 x 3, stride 1, zero padding), which loom runs as one call
// of its convolution engine with the epilogue fused. Compared with eigen_gemm.cpp, as the
// convolution issue asks.
#include <loom/loom.hpp>

#include <cstdio>

int main() {
  using namespace loom::vars;
  loom::Var<"co"> co;
  loom::Var<"ci"> ci;
  loom::Var<"ry"> ry;
  loom::Var<"rx"> rx;
  loom::Tensor<float, 4> in("in", 1, 28, 28, 64), w("w", 3, 3, 64, 64), out("out", 1, 28, 28, 64);
  loom::Tensor<float, 1> bias("bias", 64);
  const auto pin = loom::constant_exterior(in, 0.f);
  loom::run(out(n, y, x, co) = max(sum(ry, rx, ci, pin(n, y + ry - 1, x + rx - 1, ci) * w(ry, rx, ci, co)) + bias(co), 0.f));
  std::printf("%f\n", double(out(0, 0, 0, 0)));
  return 0;
}
