// expect: loom::stream_stores: only for `out\(\.\.\.\) = e` without reductions
// compile_fail: streaming stores asked for a definition whose output is a reduction's result.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8);
  loom::Tensor<float, 1> r("r", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::vectorize<j>, loom::stream_stores<>>>(r(i) = loom::sum(j, A(i, j)));
#else
  loom::run<loom::schedule<loom::vectorize<i>, loom::stream_stores<>>>(r(i) = A(i, 0) * 2.f);
#endif
  return 0;
}
