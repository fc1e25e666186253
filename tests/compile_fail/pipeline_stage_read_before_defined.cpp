// expect: loom::pipeline: a definition reads a Func that no earlier definition
// compile_fail: the consumer is listed before the stage it reads.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;
[[maybe_unused]] constexpr Func<float, 2, "by"> by;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(out(y, x) = bx(y, x) * 2.f, bx(y, x) = in(y, x) + 1.f); run(p);
#else
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, out(y, x) = bx(y, x) * 2.f); run(p);
#endif
  return 0;
}
