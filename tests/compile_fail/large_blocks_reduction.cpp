// expect: loom::large_blocks<V, F>: V iterates a reduction variable
// compile_fail: large_blocks on a reduction variable (its blocks fix the order of the sums).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> a("a", 8, 64);
  loom::Tensor<float, 1> out("out", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<j, 16>, loom::large_blocks<j, 64>>>(out(i) = sum(j, a(i, j)));
#else
  loom::run<loom::schedule<loom::split<i, 2>, loom::large_blocks<i, 4>>>(out(i) = sum(j, a(i, j)));
#endif
  return 0;
}
