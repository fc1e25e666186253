// expect: loom::stage<Name, ...>: Name is not a stage of this pipeline
// compile_fail: a schedule sets a stage the pipeline does not have.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;
[[maybe_unused]] constexpr Func<float, 2, "by"> by;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, out(y, x) = bx(y, x));
#ifndef LOOM_COMPILE_FAIL_CONTROL
  run<stage<by, compute_root>>(p);
#else
  run<stage<bx, compute_root>>(p);
#endif
  return 0;
}
