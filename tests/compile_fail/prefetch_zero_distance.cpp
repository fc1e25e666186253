// expect: loom::prefetch<V, Distance>: Distance \(in steps of V\) must not be 0
// compile_fail: a prefetch of the element being read (distance 0) does nothing useful.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), C("C", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::vectorize<j>, loom::prefetch<j, 0>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::vectorize<j>, loom::prefetch<j, -16>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
