// expect: loom internal error: the default schedule for this definition is illegal: it streams the stores
// compile_fail: the default schedule's self-check, fed a problem no default may have, names it as loom's fault.
#include <loom/loom.hpp>

int main() {
#ifndef LOOM_COMPILE_FAIL_CONTROL
  loom::detail::check_default_schedule<loom::schedule_problem::stream_stores_output_read>();
#else
  loom::detail::check_default_schedule<loom::schedule_problem::none>();
#endif
  return 0;
}
