// expect: loom::reorder: names a loop that is not a loop of this definition
// compile_fail: reorder<> naming a loop that does not exist (j was split: j.o and j.i exist, not j).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<j, 4>, loom::reorder<j, i>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::split<j, 4>, loom::reorder<loom::outer<j>, i>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
