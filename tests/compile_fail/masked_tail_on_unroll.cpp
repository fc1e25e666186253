// expect: loom::unroll: tail::masked applies to vectorized loops only
// compile_fail: tail::masked on an unrolled loop.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::unroll<j, 4, loom::tail::masked>>>(C(i, j) = A(i, j));
#else
  loom::run<loom::schedule<loom::unroll<j, 4, loom::tail::guard>>>(C(i, j) = A(i, j));
#endif
  return 0;
}
