// expect: loom::pipeline: the last definition must write a tensor
// compile_fail: a pipeline that ends in a stage has no output.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;
[[maybe_unused]] constexpr Func<float, 2, "by"> by;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, by(y, x) = bx(y, x) * 2.f); (void)p;
#else
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, out(y, x) = bx(y, x) * 2.f); run(p);
#endif
  return 0;
}
