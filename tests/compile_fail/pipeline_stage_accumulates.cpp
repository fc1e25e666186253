// expect: loom::pipeline: a Func is defined with
// compile_fail: a stage defined with +=.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;
[[maybe_unused]] constexpr Func<float, 2, "by"> by;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(bx(y, x) += in(y, x), out(y, x) = bx(y, x) * 2.f); (void)p;
#else
  auto p = pipeline(bx(y, x) = in(y, x), out(y, x) = bx(y, x) * 2.f); run(p);
#endif
  return 0;
}
