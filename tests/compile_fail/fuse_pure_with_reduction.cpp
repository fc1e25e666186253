// expect: loom::fuse: cannot fuse a pure loop with a reduction loop
// compile_fail: fuse<> of a pure loop with a reduction loop.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::fuse<j, k>>>(C(i, j) = sum(k, A(i, k) * B(k, j)));
#else
  loom::run<loom::schedule<loom::fuse<i, j>>>(C(i, j) = sum(k, A(i, k) * B(k, j)));
#endif
  return 0;
}
