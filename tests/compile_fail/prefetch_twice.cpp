// expect: loom::prefetch: the schedule names prefetch twice
// compile_fail: two prefetch<> directives in one schedule.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), C("C", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::vectorize<j>, loom::prefetch<j, 64>, loom::prefetch<i, 2>>>(C(i, j) = A(i, j) * 2.f);
#else
  loom::run<loom::schedule<loom::vectorize<j>, loom::prefetch<j, 64>>>(C(i, j) = A(i, j) * 2.f);
#endif
  return 0;
}
