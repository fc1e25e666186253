// expect: loom: a variable appears twice on the left side of a definition
// compile_fail: the same variable twice on the left side (a diagonal).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run(C(i, i) = A(i, i));
#else
  loom::run(C(i, j) = A(i, j));
#endif
  return 0;
}
