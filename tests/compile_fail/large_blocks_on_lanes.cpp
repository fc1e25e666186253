// expect: loom::large_blocks<V, F>: inner<V> is the vector lanes
// compile_fail: large_blocks on the split vectorize<i> makes (the lanes' count is fixed).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 1> a("a", 64), out("out", 64);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::vectorize<i>, loom::large_blocks<i, 4096>>>(out(i) = a(i) * 2.f);
#else
  loom::run<loom::schedule<loom::split<i, 64>, loom::vectorize<loom::inner<i>>, loom::large_blocks<i, 4096>>>(out(i) = a(i) * 2.f);
#endif
  return 0;
}
