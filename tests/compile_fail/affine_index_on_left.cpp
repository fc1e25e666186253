// expect: loom: the left side of a definition must be indexed by plain variables
// compile_fail: an affine index on the left side.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run(v(x + 1) = v(x));
#else
  loom::run(v(x) = v(x + 1) * 0.f);
#endif
  return 0;
}
