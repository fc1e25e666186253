// expect: loom: the reduction's accumulator block .* exceeds 64
// compile_fail: a register block of more than 64 accumulators (16 rows x 8 unrolled reduction steps).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<i, 16>, loom::reorder<k, loom::inner<i>>, loom::unroll<k, 8>>>(v(i) = sum(k, A(i, k)));
#else
  loom::run<loom::schedule<loom::split<i, 16>, loom::reorder<k, loom::inner<i>>, loom::unroll<k, 4>>>(v(i) = sum(k, A(i, k)));
#endif
  return 0;
}
