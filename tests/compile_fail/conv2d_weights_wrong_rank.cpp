// expect: loom::conv2d: the weights must be rank 4
// compile_fail: conv2d with rank-3 weights (a depthwise layout: the direct call takes HWIO).
#include <loom/loom.hpp>

int main() {
  loom::Tensor<float, 4> in("in", 1, 8, 8, 4), out("out", 1, 6, 6, 4);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::Tensor<float, 3> w("w", 3, 3, 4);
  loom::conv2d(out, in, w);
#else
  loom::Tensor<float, 4> w("w", 3, 3, 4, 4);
  loom::conv2d(out, in, w);
#endif
  return 0;
}
