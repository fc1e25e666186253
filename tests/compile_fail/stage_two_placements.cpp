// expect: loom::stage: give a stage at most one of compute_inline, compute_root, compute_at
// compile_fail: a stage both at root and inlined.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;
[[maybe_unused]] constexpr Func<float, 2, "by"> by;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, out(y, x) = bx(y, x)); run<stage<bx, compute_root, compute_inline>>(p);
#else
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, out(y, x) = bx(y, x)); run<stage<bx, compute_root>>(p);
#endif
  return 0;
}
