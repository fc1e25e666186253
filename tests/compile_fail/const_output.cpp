// expect: loom: the output of a definition must be writable
// compile_fail: a const tensor as the output.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
  const loom::Tensor<float, 1>& cv = v;
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run(cv(x) = A(x, 0));
#else
  loom::run(v(x) = cv(x) + A(x, 0));
#endif
  return 0;
}
