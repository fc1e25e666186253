// expect: loom: a reduction variable also indexes the output
// compile_fail: a reduction over a variable that also indexes the output.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run(v(i) = sum(i, A(i, i)));
#else
  loom::run(v(i) = sum(k, A(i, k)));
#endif
  return 0;
}
