// expect: loom::prefetch_stores: the stage names prefetch_stores twice
// compile_fail: a stage asks for two consumers' lines; it has one consumer to ask for.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "tw"> tw;

int main() {
  Tensor<float, 2> X("X", 8, 8), Y("Y", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(tw(i, j) = X(i, j) * 2.f, Y(i, j) = tw(i, j) + 1.f); run<stage<tw, compute_at<output, i>, prefetch_stores<output>, prefetch_stores<output>>>(p);
#else
  auto p = pipeline(tw(i, j) = X(i, j) * 2.f, Y(i, j) = tw(i, j) + 1.f); run<stage<tw, compute_at<output, i>, prefetch_stores<output>>>(p);
#endif
  return 0;
}
