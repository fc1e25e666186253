// expect: loom::prefetch<V, Distance>: V is not a variable of this definition
// compile_fail: prefetch<> along a variable the definition does not have (k), or along a loop.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8);
  loom::Tensor<float, 1> r("r", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::vectorize<j>, loom::prefetch<k, 64>>>(r(i) = loom::sum(j, A(i, j)));
#else
  loom::run<loom::schedule<loom::vectorize<j>, loom::prefetch<j, 64>>>(r(i) = loom::sum(j, A(i, j)));
#endif
  return 0;
}
