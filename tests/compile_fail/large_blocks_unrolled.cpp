// expect: loom::large_blocks<V, F>: a loop inside inner<V> is unrolled
// compile_fail: unrolling inner<i> whose block length large_blocks chooses per run.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 1> a("a", 64), out("out", 64);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::split<i, 8>, loom::unroll<loom::inner<i>>, loom::large_blocks<i, 32>>>(out(i) = a(i) * 2.f);
#else
  loom::run<loom::schedule<loom::split<i, 8>, loom::large_blocks<i, 32>, loom::split<loom::inner<i>, 4>, loom::unroll<loom::inner<loom::inner<i>>>>>(
      out(i) = a(i) * 2.f);
#endif
  return 0;
}
