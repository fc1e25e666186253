// expect: loom::unroll: an unrolled loop runs more than 64 iterations
// compile_fail: unrolling 100000 iterations (each a copy of the body for the compiler to build).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> a("a", 5, 7), out("out", 5, 7);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::unroll<j, 100000>>>(out(i, j) = a(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::unroll<j, 64>>>(out(i, j) = a(i, j) * 2.f);
#endif
  return 0;
}
