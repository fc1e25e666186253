// expect: loom::prefetch_stores<C>: C must write a tensor
// compile_fail: the consumer named is a Func, whose storage is loom's own buffer.
#include <loom/loom.hpp>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "a"> a;
[[maybe_unused]] constexpr Func<float, 2, "b"> b;

int main() {
  Tensor<float, 2> X("X", 8, 8), Y("Y", 8, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(a(i, j) = X(i, j) * 2.f, b(i, j) = a(i, j) + 1.f, Y(i, j) = b(i, j) - 3.f); run<stage<a, compute_at<b, i>, prefetch_stores<b>>, stage<b, compute_root>>(p);
#else
  auto p = pipeline(a(i, j) = X(i, j) * 2.f, b(i, j) = a(i, j) + 1.f, Y(i, j) = b(i, j) - 3.f); run<stage<a, compute_at<b, i>>, stage<b, compute_root>>(p);
#endif
  return 0;
}
