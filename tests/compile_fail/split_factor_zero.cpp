// expect: loom::split/tile/unroll: the factor must be at least 1
// compile_fail: a split factor of 0.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<i, 0>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::split<i, 1>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
