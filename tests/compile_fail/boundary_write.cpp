// expect: loom: a boundary condition wraps an input; write to the tensor itself
// compile_fail: a definition writes through a boundary condition.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 1> a("a", 8), b("b", 8);
  auto pa = loom::repeat_edge(a);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run(pa(i) = b(i) * 2.f);
#else
  loom::run(a(i) = b(i) * 2.f + pa(i - 1));
#endif
  return 0;
}
