// expect: loom: a variable on the right side neither indexes the output nor is bound by a reduction
// compile_fail: a variable on the right side that is neither an output variable nor reduced.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run(v(i) = A(i, k));
#else
  loom::run(v(i) = sum(k, A(i, k)));
#endif
  return 0;
}
