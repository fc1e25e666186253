// expect: a stage is named by two stage<Name, ...> entries
// compile_fail: the output named twice (its second entry's vectorize<x> was dropped silently).
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "bx"> bx;

int main() {
  Tensor<float, 2> in("in", 10, 10), out("out", 8, 8);
  auto p = pipeline(bx(y, x) = in(y, x) + 1.f, out(y, x) = bx(y, x + 1) * 2.f + bx(y + 1, x));
#ifndef LOOM_COMPILE_FAIL_CONTROL
  run<stage<output, parallel<y>>, stage<output, vectorize<x>>>(p);
#else
  run<stage<output, parallel<y>, vectorize<x>>>(p);
#endif
  return 0;
}
