// expect: loom::fuse<V1, V2>: V2 must be the loop immediately inside V1
// compile_fail: fuse<> of loops that are not adjacent (j is outside i after the reorder).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
  loom::Tensor<float, 1> v("v", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::reorder<j, i>, loom::fuse<i, j>>>(C(i, j) = A(i, j));
#else
  loom::run<loom::schedule<loom::reorder<j, i>, loom::fuse<j, i>>>(C(i, j) = A(i, j));
#endif
  return 0;
}
