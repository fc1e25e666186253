// Lesson 3: reductions and broadcasting.
//
// sum / product / maximum / minimum bind reduction variables; their extents come from the
// tensors they index. A variable missing from an access broadcasts it: bias(j) in out(i, j).
#include <loom/loom.hpp>

#include <cstdio>

#include "check.hpp"

using namespace loom::vars;
using namespace loom;

int main() {
  const int m = 45, n = 70, kk = 33;
  Tensor<float, 2> A("A", m, kk), B("B", kk, n), C("C", m, n), X("X", m, n);
  Tensor<float, 1> bias("bias", n), rowmax("rowmax", m), colsum("colsum", n);
  for (int r = 0; r < m; ++r)
    for (int p = 0; p < kk; ++p) A(r, p) = float((r + 2 * p) % 9) * 0.25f - 1.f;
  for (int p = 0; p < kk; ++p)
    for (int c2 = 0; c2 < n; ++c2) B(p, c2) = float((3 * p + c2) % 7) * 0.5f - 1.5f;
  for (int c2 = 0; c2 < n; ++c2) bias(c2) = float(c2 % 4) - 2.f;
  for (int r = 0; r < m; ++r)
    for (int c2 = 0; c2 < n; ++c2) X(r, c2) = float((r * 7 + c2 * 13) % 29);

  // A contraction with an epilogue: the epilogue runs on the accumulators before they are stored.
  auto mm = [&] { return C(i, j) = max(sum(k, A(i, k) * B(k, j)) + bias(j), 0.f); };
  auto check_mm = [&](const char* what) {
    for (int r = 0; r < m; ++r)
      for (int c2 = 0; c2 < n; ++c2) {
        double s = 0;
        for (int p = 0; p < kk; ++p) s += double(A(r, p)) * B(p, c2);
        lesson::expect_near(C(r, c2), std::fmax(s + bias(c2), 0.0), 1e-5, what);
      }
  };
  run(mm());
  check_mm("default");
  // A register tile: 4 rows x 16 lanes of accumulators stay in registers across the k loop.
  using reg = schedule<split<i, 4>, vectorize<j>, reorder<outer<i>, outer<j>, k, inner<i>, inner<j>>>;
  std::printf("-- register tile\n%s\n", print_loop_nest<reg>(mm()).c_str());
  run<reg>(mm());
  check_mm("register tile");

  // Along the lanes: the reduction variable is vectorized, partial sums combine at the end.
  run(rowmax(i) = maximum(j, X(i, j)));
  for (int r = 0; r < m; ++r) {
    double want = -1e30;
    for (int c2 = 0; c2 < n; ++c2) want = std::fmax(want, X(r, c2));
    lesson::expect_near(rowmax(r), want, 0, "row maximum");
  }
  std::printf("-- row maximum (default)\n%s\n", print_loop_nest(rowmax(i) = maximum(j, X(i, j))).c_str());

  // Reduction outside the pure loop: the output is the accumulator, rows are streamed.
  using stream = schedule<reorder<i, j>, vectorize<j>>;
  run<stream>(colsum(j) = sum(i, X(i, j)));
  for (int c2 = 0; c2 < n; ++c2) {
    double want = 0;
    for (int r = 0; r < m; ++r) want += X(r, c2);
    lesson::expect_near(colsum(c2), want, 1e-6, "column sum");
  }
  std::printf("-- column sum, output as accumulator\n%s\n", print_loop_nest<stream>(colsum(j) = sum(i, X(i, j))).c_str());

  // Large matrices come from memory, and one core's reads alone keep too few misses in flight.
  // prefetch<j, 512> makes every read of X along j also ask for the element 512 columns ahead
  // (into L2); the third argument is the bytes a run must touch first (0: always, so the lesson
  // runs it; by default, more than the last-level cache). specialize<> compiles two schedules and
  // picks one per run: here 8 rows at once, read ahead, out of cache, and the default in cache.
  Tensor<float, 1> rowsum("rowsum", m);
  using rows_ahead = schedule<split<i, 8>, vectorize<j>, reorder<outer<i>, outer<j>, inner<i>, inner<j>>, prefetch<j, 512, 0>>;
  using by_size = specialize<touches_at_least<1 << 20>, rows_ahead, schedule<vectorize<j>>>;
  std::printf("-- row sum, specialized by size\n%s\n", print_loop_nest<by_size>(rowsum(i) = sum(j, X(i, j))).c_str());
  auto check_rowsum = [&](const char* what) {
    for (int r = 0; r < m; ++r) {
      double want = 0;
      for (int c2 = 0; c2 < n; ++c2) want += X(r, c2);
      lesson::expect_near(rowsum(r), want, 1e-6, what);
    }
  };
  run<by_size>(rowsum(i) = sum(j, X(i, j)));  // 45 x 70 floats: the second schedule
  check_rowsum("row sum, in cache");
  run<rows_ahead>(rowsum(i) = sum(j, X(i, j)));
  check_rowsum("row sum, 8 rows read ahead");
  // A condition can also name a variable's extent: 8 rows at once pay only for rows long enough to
  // stream (the default schedule chooses both ways; print_loop_nest(rowsum(i) = ...) shows it).
  using by_row_length = specialize<extent_at_least<j, 64>, rows_ahead, schedule<vectorize<j>>>;
  run<by_row_length>(rowsum(i) = sum(j, X(i, j)));  // 70 columns: the first schedule
  check_rowsum("row sum, by row length");
  std::printf("-- row sum, specialized by row length\n%s\n", print_loop_nest<by_row_length>(rowsum(i) = sum(j, X(i, j))).c_str());

  // `+=` accumulates into what is there.
  run(colsum(j) += bias(j));
  for (int c2 = 0; c2 < n; ++c2) {
    double want = bias(c2);
    for (int r = 0; r < m; ++r) want += X(r, c2);
    lesson::expect_near(colsum(c2), want, 1e-6, "+=");
  }
  return lesson::finish("lesson 3");
}
