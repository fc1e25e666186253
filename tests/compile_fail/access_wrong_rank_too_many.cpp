// expect: loom: an access needs one index per tensor dimension
// compile_fail: a 2-D view accessed with three index expressions.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  float data[64] = {};
  auto A = loom::view(data, loom::shape(8, 8), "A");
  loom::Tensor<float, 2> C("C", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run(C(i, j) = A(i, j, k));
#else
  loom::run(C(i, j) = A(i, j));
#endif
  return 0;
}
