// expect: loom::unroll<V>: without a factor, V must have a constant trip count
// compile_fail: unroll<V> without a factor on a loop whose trip count is not a compile-time constant.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::unroll<j>>>(C(i, j) = A(i, j));
#else
  loom::run<loom::schedule<loom::split<j, 4>, loom::unroll<loom::inner<j>>>>(C(i, j) = A(i, j));
#endif
  return 0;
}
