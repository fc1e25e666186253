// bench/compile/eigen_gemm.cpp — compile-time probe (bench/compile_time.sh): the Eigen 3.4
// equivalent of loom_gemm.cpp, a matrix product followed by a broadcast bias and a ReLU.
#include <Eigen/Core>

#include <cstdio>

int main() {
  const int n = 256;
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Mat A = Mat::Zero(n, n), B = Mat::Zero(n, n), C(n, n);
  Eigen::RowVectorXf bias = Eigen::RowVectorXf::Zero(n);
  C.noalias() = A * B;
  C = (C.rowwise() + bias).cwiseMax(0.f);
  std::printf("%f\n", double(C(0, 0)));
  return 0;
}
