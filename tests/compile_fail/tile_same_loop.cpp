// expect: loom::tile<V1, V2, ...>: V1 and V2 must be different loops
// compile_fail: tile<> of one loop with itself.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::tile<i, i, 4, 4>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::tile<i, j, 4, 4>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
