// expect: loom::split/tile/unroll/vectorize: the loop named is not a loop of this definition
// within: 14 (a stage's schedule is checked inside the pipeline's run, one instantiation deeper than loom::run's check of a definition: line 11 under CTest's precompiled header)
// compile_fail: a stage's own schedule names a loop it does not have.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;
[[maybe_unused]] constexpr Func<float, 2, "by"> by;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, out(y, x) = bx(y, x)); run<stage<bx, compute_root, vectorize<k>>>(p);
#else
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, out(y, x) = bx(y, x)); run<stage<bx, compute_root, vectorize<x>>>(p);
#endif
  return 0;
}
