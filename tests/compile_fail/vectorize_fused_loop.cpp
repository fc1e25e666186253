// expect: loom::vectorize<V>: V must be a variable or an inner<> loop
// compile_fail: vectorize<> of a fused loop.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::fuse<i, j>, loom::vectorize<loom::fused<i, j>>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::fuse<i, j>, loom::parallel<loom::fused<i, j>>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
