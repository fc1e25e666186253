// expect: loom::stage: a tensor output is computed where it is defined
// compile_fail: compute_root on the output.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;
[[maybe_unused]] constexpr Func<float, 2, "by"> by;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, out(y, x) = bx(y, x)); run<stage<output, compute_root>>(p);
#else
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, out(y, x) = bx(y, x)); run<stage<output, vectorize<x>>>(p);
#endif
  return 0;
}
