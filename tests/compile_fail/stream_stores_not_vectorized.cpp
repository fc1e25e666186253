// expect: loom::stream_stores: streaming stores write whole vectors; vectorize
// compile_fail: streaming stores on a scalar nest.
#include <loom/loom.hpp>

using namespace loom::vars;

int main() {
  loom::Tensor<float, 1> a("a", 64), out("out", 64);
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::run<loom::schedule<loom::parallel<i>, loom::stream_stores<>>>(out(i) = a(i) + 1.f);
#else
  loom::run<loom::schedule<loom::vectorize<i>, loom::stream_stores<>>>(out(i) = a(i) + 1.f);
#endif
  return 0;
}
