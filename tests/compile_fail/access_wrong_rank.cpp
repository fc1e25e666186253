// expect: loom: an access needs one index per tensor dimension
// compile_fail: a 2-D tensor accessed with one index expression.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8);
  loom::Tensor<float, 1> b("b", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run(b(i) = A(i) * 2.f);
#else
  loom::run(b(i) = A(i, 0) * 2.f);
#endif
  return 0;
}
