// expect: loom::pipeline: a Func is defined twice
// compile_fail: one stage with two definitions.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;
[[maybe_unused]] constexpr Func<float, 2, "by"> by;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, bx(y, x) = in(y, x) * 2.f, out(y, x) = bx(y, x)); run(p);
#else
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, by(y, x) = in(y, x) * 2.f, out(y, x) = bx(y, x) + by(y, x)); run(p);
#endif
  return 0;
}
