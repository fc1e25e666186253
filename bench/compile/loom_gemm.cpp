// bench/compile/loom_gemm.cpp — compile-time probe (bench/compile_time.sh): one GEMM + bias + ReLU
// written in index notation, which loom runs as one call of its GEMM engine with the epilogue fused.
#include <loom/loom.hpp>

#include <cstdio>

int main() {
  using namespace loom::vars;
  const loom::index_t n = 256;
  loom::Tensor<float, 2> A("A", n, n), B("B", n, n), C("C", n, n);
  loom::Tensor<float, 1> bias("bias", n);
  loom::run(C(i, j) = max(sum(k, A(i, k) * B(k, j)) + bias(j), 0.f));
  std::printf("%f\n", double(C(0, 0)));
  return 0;
}
