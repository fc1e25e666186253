// expect: the schedule names a loop of a reduction that runs its own loops
// compile_fail: split<j> on a definition with two reductions over j, each computed in its own nest
// (hoisted out of the loop over i), not in the definition's, which has only i.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> X("X", 8, 8);
  loom::Tensor<float, 1> o("o", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<j, 4>>>(o(i) = max(sum(j, X(i, j)), 0.f) + minimum(j, X(i, j)));
#else
  loom::run<loom::schedule<loom::split<i, 4>>>(o(i) = max(sum(j, X(i, j)), 0.f) + minimum(j, X(i, j)));
#endif
  return 0;
}
