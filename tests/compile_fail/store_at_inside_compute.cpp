// expect: loom::store_at<Consumer, Loop>: the storage must live at a loop outside the compute_at loop
// compile_fail: store_at at the same loop as compute_at's... inside it.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;
[[maybe_unused]] constexpr Func<float, 2, "by"> by;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(bx(y, x) = in(y, x) + in(y + 1, x), out(y, x) = bx(y, x) + bx(y + 1, x)); run<stage<bx, store_at<output, inner<y>>, compute_at<output, outer<y>>>, stage<output, split<y, 4>>>(p);
#else
  auto p = pipeline(bx(y, x) = in(y, x) + in(y + 1, x), out(y, x) = bx(y, x) + bx(y + 1, x)); run<stage<bx, store_at<output, outer<y>>, compute_at<output, inner<y>>>, stage<output, split<y, 4>>>(p);
#endif
  return 0;
}
