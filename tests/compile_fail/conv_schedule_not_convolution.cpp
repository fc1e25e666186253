// expect: loom::conv_schedule: this definition cannot run on the convolution engine
// compile_fail: a schedule that demands the convolution engine for a maximum over the window.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Var<"co"> co;
  loom::Var<"ci"> ci;
  loom::Tensor<float, 4> in("in", 1, 8, 8, 3), w("w", 3, 3, 3, 4), out("out", 1, 8, 8, 4);
  auto pin = loom::constant_exterior(in, 0.f);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::conv_schedule<>>(out(n, y, x, co) = maximum(ry, rx, ci, pin(n, y + ry - 1, x + rx - 1, ci) * w(ry, rx, ci, co)));
#else
  loom::run<loom::conv_schedule<>>(out(n, y, x, co) = sum(ry, rx, ci, pin(n, y + ry - 1, x + rx - 1, ci) * w(ry, rx, ci, co)));
#endif
  return 0;
}
