// expect: loom::prefetch_stores<C>: the stage must be computed at a loop of C
// compile_fail: prefetch_stores on a stage computed at root, which runs before its consumer's loops.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "tw"> tw;

int main() {
  Tensor<float, 2> X("X", 8, 8), Y("Y", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(tw(i, j) = X(i, j) * 2.f, Y(i, j) = tw(i, j) + 1.f); run<stage<tw, compute_root, prefetch_stores<output>>>(p);
#else
  auto p = pipeline(tw(i, j) = X(i, j) * 2.f, Y(i, j) = tw(i, j) + 1.f); run<stage<tw, compute_at<output, i>, prefetch_stores<output>>>(p);
#endif
  return 0;
}
