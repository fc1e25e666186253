// expect: loom::specialize: its condition .*names a variable that is not a variable of this definition
// compile_fail: specialize on the extent of a variable the definition does not have (k).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8);
  loom::Tensor<float, 1> r("r", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::specialize<loom::extent_at_least<k, 4>, loom::schedule<loom::vectorize<j>>, loom::schedule<>>>(r(i) = loom::sum(j, A(i, j)));
#else
  loom::run<loom::specialize<loom::extent_at_least<j, 4>, loom::schedule<loom::vectorize<j>>, loom::schedule<>>>(r(i) = loom::sum(j, A(i, j)));
#endif
  return 0;
}
