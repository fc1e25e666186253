// expect: loom::parallel<V>: V iterates a reduction variable
// compile_fail: parallel<outer<k>> is a deterministic parallel reduction only when outer<k> is the outermost loop.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<k, 4>, loom::parallel<loom::outer<k>>>>(C(i, j) = sum(k, A(i, k) * B(k, j)));
#else
  loom::run<loom::schedule<loom::split<k, 4>, loom::reorder<loom::outer<k>, i, j>, loom::parallel<loom::outer<k>>>>(C(i, j) = sum(k, A(i, k) * B(k, j)));
#endif
  return 0;
}
