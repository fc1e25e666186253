// expect: loom::parallel<V>: a parallel loop cannot be inside the vectorized loop
// compile_fail: a parallel loop inside the vectorized loop.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::vectorize<i>, loom::parallel<j>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::vectorize<j>, loom::parallel<i>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
