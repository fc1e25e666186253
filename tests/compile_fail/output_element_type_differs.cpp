// expect: loom: the right side's element type differs from the output's; convert with loom::cast<T>[(]e[)]
// compile_fail: a double right side into a float output.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
  loom::Tensor<double, 1> d("d", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run(v(x) = d(x) * 2.0);
#else
  loom::run<loom::schedule<>>(v(x) = loom::cast<float>(d(x) * 2.0));  // (a vectorized float <-> double cast is illegal)
#endif
  return 0;
}
