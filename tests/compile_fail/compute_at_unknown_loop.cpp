// expect: loom::compute_at<Consumer, Loop>: Loop is not a loop of Consumer
// compile_fail: compute_at names outer<y>, but the output's schedule does not split y.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;
[[maybe_unused]] constexpr Func<float, 2, "by"> by;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(bx(y, x) = in(y, x) + in(y + 1, x), out(y, x) = bx(y, x) + bx(y + 1, x)); run<stage<bx, compute_at<output, outer<y>>>>(p);
#else
  auto p = pipeline(bx(y, x) = in(y, x) + in(y + 1, x), out(y, x) = bx(y, x) + bx(y + 1, x)); run<stage<bx, compute_at<output, outer<y>>>, stage<output, split<y, 4>>>(p);
#endif
  return 0;
}
