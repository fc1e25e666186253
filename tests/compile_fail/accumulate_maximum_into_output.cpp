// expect: loom: `out [+]= maximum/minimum/product[(][.][.][.][)]` cannot use the output as accumulator
// compile_fail: `out += maximum(...)` with the output as the accumulator.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::reorder<k, i>>>(v(i) += maximum(k, A(i, k)));
#else
  loom::run<loom::schedule<loom::reorder<i, k>>>(v(i) += maximum(k, A(i, k)));
#endif
  return 0;
}
