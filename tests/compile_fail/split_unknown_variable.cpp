// expect: loom::split/tile/unroll/vectorize: the loop named is not a loop of this definition
// compile_fail: split<> of a variable that is not a loop of the definition (k is not used).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<k, 4>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::split<i, 4>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
