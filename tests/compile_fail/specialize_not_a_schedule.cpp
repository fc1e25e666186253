// expect: loom::specialize<Condition, Then, Else>: Then and Else must each be a loom::schedule<...>
// compile_fail: a directive where a whole schedule belongs.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8);
  loom::Tensor<float, 1> r("r", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::specialize<loom::touches_at_least<>, loom::vectorize<j>, loom::schedule<>>>(r(i) = loom::sum(j, A(i, j)));
#else
  loom::run<loom::specialize<loom::touches_at_least<>, loom::schedule<loom::vectorize<j>>, loom::schedule<>>>(r(i) = loom::sum(j, A(i, j)));
#endif
  return 0;
}
