// expect: loom::compute_at: a stage computed inside a consumer's loop is read by a stage that runs outside that loop
// compile_fail: bx is computed inside by's loop but the output reads it too.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;
[[maybe_unused]] constexpr Func<float, 2, "by"> by;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, by(y, x) = bx(y, x) * 2.f, out(y, x) = by(y, x) + bx(y, x)); run<stage<bx, compute_at<by, y>>, stage<by, compute_root>>(p);
#else
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, by(y, x) = bx(y, x) * 2.f, out(y, x) = by(y, x) + bx(y, x)); run<stage<bx, compute_root>, stage<by, compute_root>>(p);
#endif
  return 0;
}
