// expect: loom: this schedule puts a reduction loop outside a pure loop of non-constant trip count
// compile_fail: a reduction loop outside the output loops (the output accumulates) with an epilogue on the reduction.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::reorder<k, i, j>>>(C(i, j) = sum(k, A(i, k) * B(k, j)) * 2.f);
#else
  loom::run<loom::schedule<loom::reorder<k, i, j>>>(C(i, j) = sum(k, A(i, k) * B(k, j)));
#endif
  return 0;
}
