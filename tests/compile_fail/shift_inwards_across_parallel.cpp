// expect: loom: tail::shift_inwards is illegal here
// compile_fail: tail::shift_inwards across a parallel loop: two threads would write the same points.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<i, 3, loom::tail::shift_inwards>, loom::parallel<loom::outer<i>>>>(C(i, j) = A(i, j));
#else
  loom::run<loom::schedule<loom::split<i, 3, loom::tail::guard>, loom::parallel<loom::outer<i>>>>(C(i, j) = A(i, j));
#endif
  return 0;
}
