// expect: loom::cast<T>: vectorized casts need element types of the same size
// compile_fail: a vectorized cast between element types of different sizes.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
  loom::Tensor<double, 1> d("d", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::vectorize<x>>>(d(x) = loom::cast<double>(v(x)));
#else
  loom::run<loom::schedule<loom::split<x, 4>>>(d(x) = loom::cast<double>(v(x)));
#endif
  return 0;
}
