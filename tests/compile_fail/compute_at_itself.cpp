// expect: Consumer is the stage itself
// compile_fail: bx computed at a loop of its own nest.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, out(y, x) = bx(y, x) * 2.f);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  run<stage<bx, compute_at<bx, y>>>(p);
#else
  run<stage<bx, compute_at<output, y>>>(p);
#endif
  return 0;
}
