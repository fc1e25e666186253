// expect: loom::gemm_schedule: this definition cannot run on the GEMM engine
// compile_fail: a schedule that demands the GEMM engine for an elementwise definition.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::gemm_schedule<>>(C(i, j) = A(i, j) * B(i, j));
#else
  loom::run<loom::gemm_schedule<>>(C(i, j) = sum(k, A(i, k) * B(k, j)));
#endif
  return 0;
}
