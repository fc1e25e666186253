// expect: loom::parallel<V>: the parallel loop must be outside the reduction
// compile_fail: a parallel pure loop inside the reduction loop.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::reorder<k, i, j>, loom::parallel<j>>>(C(i, j) = sum(k, A(i, k) * B(k, j)));
#else
  loom::run<loom::schedule<loom::reorder<i, k, j>, loom::parallel<i>>>(C(i, j) = sum(k, A(i, k) * B(k, j)));
#endif
  return 0;
}
