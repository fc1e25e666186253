// Lesson 2: schedules — the same algorithm, different loop nests, the same results.
//
// A schedule is a type: loom::schedule<directive...>. Each directive rewrites the loop nest at
// compile time; loom::print_loop_nest shows the result as pseudo-code.
#include <loom/loom.hpp>

#include <cstdio>

#include "check.hpp"

using namespace loom::vars;
using namespace loom;  // schedule, split, tile, vectorize, ...

int main() {
  const int m = 67, n = 131;  // deliberately not multiples of any tile or vector width
  Tensor<float, 2> A("A", m, n), out("out", m, n);
  Tensor<float, 1> bias("bias", n);
  for (int r = 0; r < m; ++r)
    for (int c2 = 0; c2 < n; ++c2) A(r, c2) = float((r * 31 + c2 * 17) % 23) - 11.f;
  for (int c2 = 0; c2 < n; ++c2) bias(c2) = 0.5f * float(c2 % 5);
  auto def = [&] { return out(i, j) = max(A(i, j) * 2.f + bias(j), 0.f); };
  auto check = [&](const char* what) {
    for (int r = 0; r < m; ++r)
      for (int c2 = 0; c2 < n; ++c2) lesson::expect_near(out(r, c2), std::fmax(A(r, c2) * 2.0 + bias(c2), 0.0), 0, what);
  };

  // 1. No directives: the plain nest, j innermost.
  using plain = schedule<>;
  std::printf("-- schedule<>\n%s\n", print_loop_nest<plain>(def()).c_str());
  run<plain>(def());
  check("plain");

  // 2. vectorize<j>: j is split by the native vector width; its inner loop becomes SIMD lanes.
  //    The last vector of a row is shifted inwards (it recomputes a few points) instead of
  //    running a scalar tail.
  using vec = schedule<vectorize<j>>;
  std::printf("-- schedule<vectorize<j>>\n%s\n", print_loop_nest<vec>(def()).c_str());
  run<vec>(def());
  check("vectorize");

  // 3. Tiles, vectors inside them, and threads over the rows of tiles.
  using tiled = schedule<tile<i, j, 32, 64>, vectorize<inner<j>>, parallel<outer<i>>>;
  std::printf("-- tile<i, j, 32, 64>, vectorize<inner<j>>, parallel<outer<i>>\n%s\n", print_loop_nest<tiled>(def()).c_str());
  run<tiled>(def());
  check("tile");

  // 4. Explicit tails: a masked last vector, and an unrolled loop with a scalar guard.
  using tails = schedule<vectorize<j, native, tail::masked>, unroll<i, 4, tail::guard>>;
  std::printf("-- vectorize<j, native, tail::masked>, unroll<i, 4, tail::guard>\n%s\n", print_loop_nest<tails>(def()).c_str());
  run<tails>(def());
  check("tails");

  // 5. Reorder and fuse: j outside i, then both fused into one parallel loop.
  using fused_nest = schedule<reorder<j, i>, fuse<j, i>, parallel<fused<j, i>>>;
  std::printf("-- reorder<j, i>, fuse<j, i>, parallel<fused<j, i>>\n%s\n", print_loop_nest<fused_nest>(def()).c_str());
  run<fused_nest>(def());
  check("fuse");

  // 6. Streaming stores: an output written once and not read again soon need not pass through
  //    the cache. stream_stores<> writes whole aligned vectors with non-temporal stores when the
  //    run touches more bytes than the cache holds (stream_stores<0>: always, as here, so the
  //    lesson exercises it). The default schedule of a large elementwise definition adds it.
  using streamed = schedule<vectorize<j>, parallel<i>, stream_stores<0>>;
  std::printf("-- vectorize<j>, parallel<i>, stream_stores<0>\n%s\n", print_loop_nest<streamed>(def()).c_str());
  run<streamed>(def());
  check("stream_stores");

  // 7. Choices per run: a run that outgrows the cache wants long blocks read as a few far-apart
  //    streams; a small one wants small blocks that threads can share. large_blocks<j, F> makes
  //    outer<j>'s blocks F long, and interleave<K> walks K parts of each block at once, each when
  //    the run touches at least MinBytes (0: always, as here). One nest decides per run, as the
  //    default for a large 1-D definition does, instead of compiling two.
  using per_run = schedule<split<j, 64>, vectorize<inner<j>>, parallel<i>, large_blocks<j, 256, 0>, interleave<2, 0>>;
  std::printf("-- split<j, 64>, vectorize<inner<j>>, parallel<i>, large_blocks<j, 256, 0>, interleave<2, 0>\n%s\n",
              print_loop_nest<per_run>(def()).c_str());
  run<per_run>(def());
  check("large_blocks");

  return lesson::finish("lesson 2");
}
