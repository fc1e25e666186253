// expect: this schedule vectorizes no loop
// compile_fail: interleave<2> walks the parts of a vector loop's block, and nothing is vectorized.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), C("C", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<j, 4>, loom::interleave<2, 0>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::split<j, 4>, loom::vectorize<loom::inner<j>>, loom::interleave<2, 0>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
