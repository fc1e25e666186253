// examples/apps.cpp — the image apps of examples/apps.hpp (Halide's blur, unsharp and harris) on a
// small image, each under its schedules (best: Halide's own schedule transcribed; root: every
// stage computed at root; default: loom::run(p); tuned: loom's fastest found), each result checked
// against the plain-loop reference. Prints the best schedule's loop nests and the root schedule's
// arena. Exits non-zero on a mismatch (run by CTest as example.apps).
#include "apps.hpp"

#include <cstdio>

namespace {

using apps::index_t;
using apps::T2;

/// H x W output; sizes that are not multiples of the strips or the vector width, so the tails run.
constexpr index_t H = 101, W = 147;

template <class App, class Sched, class P>
int check(P& p, T2& out, const apps::reference& ref, const char* schedule) {
  std::fill(out.begin(), out.end(), -1e30f);
  Sched::run(p);
  const index_t bad = apps::first_mismatch(out, ref, 1e-5);
  if (bad < 0) {
    std::printf("%-8s %-8s matches the plain loop\n", App::name, schedule);
    return 0;
  }
  const index_t r = bad / W, c = bad % W;
  std::printf("%-8s %-8s MISMATCH at (%td, %td): %.9g, expected %.9g\n", App::name, schedule, r, c, double(out(r, c)),
              ref.value[std::size_t(bad)]);
  return 1;
}

template <class App>
int run_app(unsigned seed) {
  T2 in("in", H + App::pad, W + App::pad), out("out", H, W);
  apps::fill_image(in, seed);
  const apps::reference ref = App::ref(in, H, W);
  auto p = App::make(in, out);
  std::printf("==== %s, %td x %td\n", App::name, H, W);
  std::printf("-- best schedule:\n%s", App::best::print(p).c_str());
  std::printf("-- root schedule's arena:\n%s", App::root::memory(p).describe().c_str());
  int failures = 0;
  failures += check<App, typename App::best>(p, out, ref, "best");
  failures += check<App, typename App::root>(p, out, ref, "root");
  failures += check<App, apps::default_schedule>(p, out, ref, "default");
  failures += check<App, typename App::tuned>(p, out, ref, "tuned");
  std::printf("\n");
  return failures;
}

}  // namespace

int main() {
  int failures = 0;
  failures += run_app<apps::blur>(1);
  failures += run_app<apps::unsharp>(2);
  failures += run_app<apps::harris>(3);
  std::printf("apps: %s\n", failures == 0 ? "all results match" : "FAILED");
  return failures == 0 ? 0 : 1;
}
