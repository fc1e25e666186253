// expect: loom::select[(]cond, a, b[)]: cond must be a comparison
// compile_fail: select() whose condition is not a comparison.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run(v(x) = select(v(x), A(x, 0), A(x, 1)));
#else
  loom::run(v(x) = select(v(x) > 0.f, A(x, 0), A(x, 1)));
#endif
  return 0;
}
