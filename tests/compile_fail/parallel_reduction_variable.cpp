// expect: loom::parallel<V>: V iterates a reduction variable
// compile_fail: parallel<> on a reduction loop (k, unsplit): threads would race on the accumulator.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::reorder<k, i, j>, loom::parallel<k>>>(C(i, j) = sum(k, A(i, k) * B(k, j)));
#else
  loom::run<loom::schedule<loom::reorder<i, k, j>, loom::parallel<i>>>(C(i, j) = sum(k, A(i, k) * B(k, j)));
#endif
  return 0;
}
