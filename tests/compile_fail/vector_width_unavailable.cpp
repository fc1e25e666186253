// expect: loom::vectorize<V, W>: no enabled SIMD target has W lanes of this element type
// compile_fail: a vector width no target has (3 lanes).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::vectorize<j, 3>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::vectorize<j, 4>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
