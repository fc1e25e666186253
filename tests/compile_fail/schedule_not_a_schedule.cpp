// expect: loom::run<S>: S must be a loom::schedule<...> or a loom::specialize<...>
// compile_fail: a directive passed to run without loom::schedule<...> around it.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 1> a("a", 8), b("b", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::vectorize<i>>(b(i) = a(i) * 2.f);
#else
  loom::run<loom::schedule<loom::vectorize<i>>>(b(i) = a(i) * 2.f);
#endif
  return 0;
}
