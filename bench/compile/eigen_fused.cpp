// bench/compile/eigen_fused.cpp — compile-time probe (bench/compile_time.sh): the Eigen 3.4
// equivalent of loom_fused.cpp, one coefficient-wise ArrayXf expression evaluated once.
#include <Eigen/Core>

#include <cstdio>

int main() {
  const int n = 1 << 10;
  Eigen::ArrayXf x = Eigen::ArrayXf::Zero(n), c = Eigen::ArrayXf::Zero(n), out(n);
  const float a = 1.5f, b = -0.25f;
  out = (a * x + b).max(0.f) * (1.f / (1.f + (-c).exp()));
  std::printf("%f\n", double(out(0)));
  return 0;
}
