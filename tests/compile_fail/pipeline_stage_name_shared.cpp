// expect: loom::pipeline: two Funcs share a name but not their element type or rank
// compile_fail: a stage read through another Func of the same name and another element type.
#include <loom/loom.hpp>

#include <cstdint>

using namespace loom::vars;
using namespace loom;

[[maybe_unused]] constexpr Func<float, 2, "a"> af;
[[maybe_unused]] constexpr Func<std::int32_t, 2, "a"> ai;
[[maybe_unused]] constexpr Func<std::int32_t, 2, "b"> bi;

int main() {
  Tensor<float, 2> in("in", 4, 8);
  Tensor<std::int32_t, 2> out("out", 4, 8);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  auto p = pipeline(af(y, x) = in(y, x) * 2.f, out(y, x) = ai(y, x) + 1); run(p);
#else
  auto p = pipeline(af(y, x) = in(y, x) * 2.f, bi(y, x) = cast<std::int32_t>(af(y, x)), out(y, x) = bi(y, x) + 1); run(p);
#endif
  return 0;
}
