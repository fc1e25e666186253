// expect: this loop is already vectorized, unrolled or parallel
// compile_fail: parallel<inner<j>> after vectorize<j>, which made inner<j> the vector lanes.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), C("C", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::vectorize<j>, loom::parallel<loom::inner<j>>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::vectorize<j>, loom::parallel<i>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
