// expect: loom::stream_stores: the schedule names stream_stores twice
// compile_fail: two stream_stores directives in one schedule.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 1> a("a", 64), b("b", 64);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::vectorize<i>, loom::stream_stores<>, loom::stream_stores<0>>>(b(i) = a(i) + 1.f);
#else
  loom::run<loom::schedule<loom::vectorize<i>, loom::stream_stores<>>>(b(i) = a(i) + 1.f);
#endif
  return 0;
}
