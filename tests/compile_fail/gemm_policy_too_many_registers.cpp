// expect: loom::gemm_policy: the MR x NRV accumulators, NRV loads of B and one broadcast of A must fit
// compile_fail: a register tile of 16 x 4 vectors needs 69 vector registers.
#include <loom/loom.hpp>

int main() {
  loom::Tensor<float, 2> A("A", 8, 8), B("B", 8, 8), C("C", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::gemm<loom::gemm_policy<float, 16, 4, 64, 64, 1024>>(C, A, B);
#else
  loom::gemm<loom::gemm_policy<float, 4, 2, 64, 64, 1024>>(C, A, B);
#endif
  return 0;
}
