// expect: loom::interleave<Parts>: Parts must be in \[1, 16\]
// compile_fail: interleave<0> (no parts to walk).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 1> a("a", 64), out("out", 64);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::vectorize<i>, loom::interleave<0>>>(out(i) = a(i) * 2.f);
#else
  loom::run<loom::schedule<loom::vectorize<i>, loom::interleave<4>>>(out(i) = a(i) * 2.f);
#endif
  return 0;
}
