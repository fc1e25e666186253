// expect: loom::compute_at<Consumer, Loop>: Consumer is not a stage of this pipeline that runs
// compile_fail: compute_at a stage that is inlined (by is not a stage that runs).
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;
[[maybe_unused]] constexpr Func<float, 2, "by"> by;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, by(y, x) = bx(y, x) * 2.f, out(y, x) = by(y, x)); run<stage<bx, compute_at<by, y>>>(p);
#else
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, by(y, x) = bx(y, x) * 2.f, out(y, x) = by(y, x)); run<stage<bx, compute_at<by, y>>, stage<by, compute_root>>(p);
#endif
  return 0;
}
