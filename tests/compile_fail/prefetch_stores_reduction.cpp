// expect: loom::prefetch_stores<C>: this stage has a reduction
// compile_fail: a stage with a reduction writes each point once, after its loop: nothing to ask for along it.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "e"> e;

int main() {
  Tensor<float, 3> A("A", 8, 8, 8);
  Tensor<float, 2> Y("Y", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(e(i, j) = sum(k, A(i, j, k)), Y(i, j) = e(i, j) * 2.f); run<stage<e, compute_at<output, i>, prefetch_stores<output>>>(p);
#else
  auto p = pipeline(e(i, j) = sum(k, A(i, j, k)), Y(i, j) = e(i, j) * 2.f); run<stage<e, compute_at<output, i>>>(p);
#endif
  return 0;
}
