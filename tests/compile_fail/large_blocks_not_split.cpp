// expect: loom::large_blocks<V, F>: V is not split at this point of the schedule
// compile_fail: large_blocks<i> before i is split (its small block length comes from the split).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 1> a("a", 64), out("out", 64);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::large_blocks<i, 4096>, loom::split<i, 256>, loom::vectorize<loom::inner<i>>>>(out(i) = a(i) * 2.f);
#else
  loom::run<loom::schedule<loom::split<i, 256>, loom::large_blocks<i, 4096>, loom::vectorize<loom::inner<i>>>>(out(i) = a(i) * 2.f);
#endif
  return 0;
}
