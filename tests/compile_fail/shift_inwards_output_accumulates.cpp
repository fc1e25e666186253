// expect: loom: tail::shift_inwards is illegal here
// compile_fail: tail::shift_inwards on a pure loop inside the reduction loop (the output is the accumulator).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::reorder<k, i, j>, loom::vectorize<j, 4, loom::tail::shift_inwards>>>(C(i, j) = sum(k, A(i, k) * B(k, j)));
#else
  loom::run<loom::schedule<loom::reorder<k, i, j>, loom::vectorize<j, 4, loom::tail::masked>>>(C(i, j) = sum(k, A(i, k) * B(k, j)));
#endif
  return 0;
}
