// expect: loom: a tensor is indexed with one integer per dimension
// compile_fail: element access by integers with fewer integers than the rank.
#include <loom/loom.hpp>

int main() {
  loom::Tensor<float, 2> A("A", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  A(3) = 1.f;
#else
  A(3, 0) = 1.f;
#endif
  return A(3, 0) == 1.f ? 0 : 1;
}
