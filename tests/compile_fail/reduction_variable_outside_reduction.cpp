// expect: loom: a reduction's variable is used outside its reduction
// compile_fail: a reduction variable read outside the reduction that binds it (t(k) after the sum).
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 2> A("A", 8, 8);
  loom::Tensor<float, 1> v("v", 8), t("t", 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run(v(i) = sum(k, A(i, k)) + t(k));
#else
  loom::run(v(i) = sum(k, A(i, k) + t(k)));
#endif
  return 0;
}
