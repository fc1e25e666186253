// examples/apps.cpp — the image apps of examples/apps.hpp (Halide's blur, in float and as the app
// has it in uint16, unsharp and harris) on a small image, each under its schedules (best: Halide's
// own schedule transcribed; root: every stage computed at root; default: loom::run(p); tuned:
// loom's fastest found), each result checked against the plain-loop reference (blur_u16 exactly,
// also on images narrower and shorter than a vector and a strip). Prints the best schedule's loop
// nests and the root schedule's arena. Exits non-zero on a mismatch (run by CTest as
// example.apps).
#include "apps.hpp"

#include <cstdio>
#include <limits>
#include <type_traits>
#include <utility>

namespace {

using apps::index_t;

/// H x W output; sizes that are not multiples of the strips or the vector width, so the tails run.
constexpr index_t H = 101, W = 147;

template <class App, class Sched, class P, class Ref>
int check(P& p, apps::image_t<App>& out, const Ref& ref, const char* schedule) {
  using V = typename App::value_type;
  // Poison: a value no result can have (NaN-like for floats; 0xffff is above the 12-bit blur).
  std::fill(out.begin(), out.end(), std::is_floating_point_v<V> ? V(-1e30f) : std::numeric_limits<V>::max());
  Sched::run(p);
  const index_t bad = apps::mismatch(out, ref);
  if (bad < 0) {
    std::printf("%-8s %-8s %td x %td matches the plain loop\n", App::name, schedule, ref.H, ref.W);
    return 0;
  }
  const index_t r = bad / ref.W, c = bad % ref.W;
  std::printf("%-8s %-8s %td x %td MISMATCH at (%td, %td): %.9g, expected %.9g\n", App::name, schedule, ref.H, ref.W, r, c,
              double(out(r, c)), double(ref.value[std::size_t(bad)]));
  return 1;
}

/// App on an h x w output under every schedule; verbose: print the best nest and the root arena.
template <class App>
int run_app(unsigned seed, index_t h = H, index_t w = W, bool verbose = true) {
  apps::image_t<App> in("in", h + App::pad, w + App::pad), out("out", h, w);
  apps::fill_image(in, seed);
  const auto ref = App::ref(in, h, w);
  auto p = App::make(in, out);
  if (verbose) {
    std::printf("==== %s, %td x %td\n", App::name, h, w);
    std::printf("-- best schedule:\n%s", App::best::print(p).c_str());
    std::printf("-- root schedule's arena:\n%s", App::root::memory(p).describe().c_str());
  }
  int failures = 0;
  failures += check<App, typename App::best>(p, out, ref, "best");
  failures += check<App, typename App::root>(p, out, ref, "root");
  failures += check<App, apps::default_schedule>(p, out, ref, "default");
  failures += check<App, typename App::tuned>(p, out, ref, "tuned");
  if (verbose) std::printf("\n");
  return failures;
}

}  // namespace

int main() {
  int failures = 0;
  failures += run_app<apps::blur>(1);
  failures += run_app<apps::blur_u16>(4);
  // Extents below the vector width (8 to 32 uint16 lanes) and the strip heights (8, 32).
  for (const auto& [h, w] : {std::pair<index_t, index_t>{1, 1}, {1, 17}, {7, 1}, {2, 33}})
    failures += run_app<apps::blur_u16>(5, h, w, false);
  std::printf("\n");
  failures += run_app<apps::unsharp>(2);
  failures += run_app<apps::harris>(3);
  std::printf("apps: %s\n", failures == 0 ? "all results match" : "FAILED");
  return failures == 0 ? 0 : 1;
}
