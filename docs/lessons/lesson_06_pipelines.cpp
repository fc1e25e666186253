// Lesson 6: pipelines — where each stage is computed decides the speed.
//
// A 3x3 box blur is two passes: a horizontal one (bx) and a vertical one over it (out). The
// algorithm is written once; five schedules put bx in five places (docs/pipelines.md):
//
//   1. inline      bx substituted into out: no buffer, each bx value computed three times
//   2. root        all of bx into a buffer first, then out: a second pass over memory
//   3. strips      bx computed per strip of 32 output rows (34 rows, halo included), used while
//                  it is still in cache: the locality Halide is about
//   4. rows        bx computed per output row (3 rows each time): more recomputation, less storage
//   5. sliding     bx stored per strip, computed per row: each new row of bx computed once
//
// Each schedule prints its loop nest (the stages where they run) and its time on this machine.
#include <loom/loom.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "check.hpp"

using namespace loom::vars;
using loom::compute_at;
using loom::compute_inline;
using loom::compute_root;
using loom::index_t;
using loom::inner;
using loom::outer;
using loom::output;
using loom::parallel;
using loom::split;
using loom::stage;
using loom::store_at;
using loom::vectorize;

constexpr loom::Func<float, 2, "bx"> bx;

/// The median of a few runs, in milliseconds.
template <class F>
double median_ms(F&& f) {
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  const index_t H = 768, W = 1024;
  loom::Tensor<float, 2> in("in", H + 2, W + 2), out("out", H, W);
  for (index_t r = 0; r < H + 2; ++r)
    for (index_t c = 0; c < W + 2; ++c) in(r, c) = float((r * 7 + c * 13) % 256);

  // The algorithm, once.
  auto blur = loom::pipeline(bx(y, x) = (in(y, x) + in(y, x + 1) + in(y, x + 2)) / 3.f,
                             out(y, x) = (bx(y, x) + bx(y + 1, x) + bx(y + 2, x)) / 3.f);

  auto check = [&](const char* what) {
    for (index_t r = 0; r < H; r += 37)
      for (index_t c = 0; c < W; c += 29) {
        double s = 0;
        for (int d = 0; d < 3; ++d) s += (double(in(r + d, c)) + in(r + d, c + 1) + in(r + d, c + 2)) / 3.0;
        lesson::expect_near(out(r, c), s / 3.0, 1e-5, what);
      }
  };
  // Runs one schedule: its nest, its time, its results.
  auto show = [&]<class... S>(const char* name) {
    std::printf("== %s\n%s", name, loom::print_loop_nest<S...>(blur).c_str());
    std::fill(out.begin(), out.end(), 0.f);
    const double ms = median_ms([&] { loom::run<S...>(blur); });
    check(name);
    std::printf("-> %.3f ms\n\n", ms);
  };

  using out_strips = stage<output, split<y, 32>, parallel<outer<y>>, vectorize<x>>;
  show.operator()<stage<bx, compute_inline>, out_strips>("1. inline");
  show.operator()<stage<bx, compute_root, parallel<y>, vectorize<x>>, stage<output, parallel<y>, vectorize<x>>>("2. root");
  show.operator()<stage<bx, compute_at<output, outer<y>>, vectorize<x>>, out_strips>("3. strips of 32 rows");
  show.operator()<stage<bx, compute_at<output, y>, vectorize<x>>, stage<output, parallel<y>, vectorize<x>>>("4. per row");
  show.operator()<stage<bx, store_at<output, outer<y>>, compute_at<output, inner<y>>, vectorize<x>>,
                  stage<output, split<y, 32>, parallel<outer<y>>, vectorize<x>>>("5. sliding window");

  // The arena of the root schedule: one buffer of bx's region, (H + 2) x W floats.
  const auto memory = loom::plan_memory<stage<bx, compute_root>>(blur);
  std::printf("root schedule's arena: %zu bytes\n", memory.arena_bytes());
  lesson::expect_near(double(memory.arena_bytes()), double((H + 2) * W * index_t(sizeof(float))), 0, "arena");
  return lesson::finish("lesson 6");
}
