// expect: loom::reorder: an outer<V> loop must stay outside every loop of its inner<V>
// compile_fail: reorder<> moving inner<i> outside outer<i>.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<i, 4>, loom::reorder<loom::inner<i>, loom::outer<i>>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::split<i, 4>, loom::reorder<loom::outer<i>, loom::inner<i>>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
