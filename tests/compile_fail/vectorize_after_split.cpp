// expect: loom::split/tile/unroll/vectorize: this loop was already split
// compile_fail: vectorize<j> after split<j>: j is no longer a loop (vectorize<inner<j>> is meant).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<j, 16>, loom::vectorize<j>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::split<j, 16>, loom::vectorize<loom::inner<j>>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
