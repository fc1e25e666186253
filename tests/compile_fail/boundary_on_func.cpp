// expect: a boundary condition wraps a tensor or a view
// compile_fail: repeat_edge of a stage, which has no extents of its own.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto pb = repeat_edge(bx);
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, out(y, x) = pb(y, x - 1));
#else
  auto pin = repeat_edge(in);
  auto p = pipeline(bx(y, x) = pin(y, x - 1) + 1.f, out(y, x) = bx(y, x));
#endif
  run(p);
  return 0;
}
