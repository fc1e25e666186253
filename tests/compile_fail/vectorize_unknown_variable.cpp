// expect: loom::split/tile/unroll/vectorize: the loop named is not a loop of this definition
// compile_fail: run<schedule<vectorize<k>>> on a definition without k.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), C("C", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::vectorize<k>>>(C(i, j) = A(i, j) + 1.f);
#else
  loom::run<loom::schedule<loom::vectorize<j>>>(C(i, j) = A(i, j) + 1.f);
#endif
  return 0;
}
