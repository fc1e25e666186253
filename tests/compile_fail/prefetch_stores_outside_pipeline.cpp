// expect: loom::prefetch_stores<C> is a directive of a pipeline's stage computed at C
// compile_fail: prefetch_stores in a single definition's schedule, which has no consumer to ask for.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

int main() {
  Tensor<float, 2> X("X", 8, 8), Y("Y", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  run<schedule<vectorize<j>, prefetch_stores<output>>>(Y(i, j) = X(i, j) * 2.f);
#else
  run<schedule<vectorize<j>>>(Y(i, j) = X(i, j) * 2.f);
#endif
  return 0;
}
