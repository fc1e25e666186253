// expect: loom::prefetch_stores<C>: C must read the stage only at its own point
// compile_fail: the consumer reads the stage one row further on, so the stage's points are not the ones it stores.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(bx(y, x) = in(y, x) + in(y, x + 1), out(y, x) = bx(y, x) + bx(y + 1, x)); run<stage<bx, compute_at<output, y>, prefetch_stores<output>>>(p);
#else
  auto p = pipeline(bx(y, x) = in(y, x) + in(y, x + 1), out(y, x) = bx(y, x) + bx(y + 1, x)); run<stage<bx, compute_at<output, y>>>(p);
#endif
  return 0;
}
