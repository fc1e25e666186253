// expect: loom: the two operands have different element types; convert one with loom::cast<T>[(]e[)]
// compile_fail: float and double operands without a cast.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
  loom::Tensor<double, 1> d("d", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run(v(x) = v(x) + d(x));
#else
  loom::run<loom::schedule<>>(v(x) = v(x) + loom::cast<float>(d(x)));  // (a vectorized float <-> double cast is illegal)
#endif
  return 0;
}
