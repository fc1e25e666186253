// expect: loom::large_blocks<V, F>: the block length F must be at least 1
// compile_fail: large_blocks with a block length of 0.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), C("C", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<i, 4>, loom::large_blocks<i, 0>>>(C(i, j) = A(i, j) + 1.f);
#else
  loom::run<loom::schedule<loom::split<i, 4>, loom::large_blocks<i, 64>>>(C(i, j) = A(i, j) + 1.f);
#endif
  return 0;
}
