// expect: loom::split/tile/unroll/vectorize: this loop was already split
// compile_fail: splitting the same loop twice (split its outer<> or inner<> loop instead).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<j, 8>, loom::split<j, 4>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::split<j, 8>, loom::split<loom::inner<j>, 4>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
