// bench/compile/loom_fused.cpp — compile-time probe (bench/compile_time.sh): the whole of loom and
// one fused elementwise definition, run once with the default schedule.
#include <loom/loom.hpp>

#include <cstdio>

int main() {
  using namespace loom::vars;
  const int n = 1 << 10;
  loom::Tensor<float, 1> x("x", n), c("c", n), out("out", n);
  const float a = 1.5f, b = -0.25f;
  loom::run(out(i) = max(a * x(i) + b, 0.f) * sigmoid(c(i)));
  std::printf("%f\n", double(out(0)));
  return 0;
}
