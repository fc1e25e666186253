// Lesson 5: the GEMM engine.
//
// A contraction C(i, j) = f(sum(k, A(i, k) * B(k, j))) is not run as a loop nest: loom recognizes
// it and calls its packed, cache-blocked GEMM engine (docs/gemm.md), with f applied to each
// register tile of C before it is stored. The blocking maps onto the memory hierarchy:
//
//   B panel   KC x NC   packed once, shared by all threads     L3
//   A block   MC x KC   packed by each thread                  L2
//   B sliver  KC x NR   reused by every MR-row sliver of A     L1
//   C tile    MR x NR   accumulated over KC steps              registers
//
// All of it is a compile-time policy, loom::gemm_policy<T, MR, NRV, KC, MC, NC>, with defaults
// per element type and SIMD target (loom::default_gemm_policy<T>).
#include <loom/loom.hpp>

#include <cstdio>
#include <string>

#include "check.hpp"

using namespace loom::vars;
using loom::index_t;

/// C(r, c) = sum_k A(r, k) B(k, c), in double.
template <class TA, class TB>
double dot(const TA& A, const TB& B, index_t r, index_t c, index_t K) {
  double s = 0;
  for (index_t q = 0; q < K; ++q) s += double(A(r, q)) * double(B(q, c));
  return s;
}

int main() {
  const index_t M = 100, N = 70, K = 300;  // no multiples of anything
  loom::Tensor<float, 2> A("A", M, K), B("B", K, N), C("C", M, N);
  loom::Tensor<float, 1> bias("bias", N);
  for (index_t r = 0; r < M; ++r)
    for (index_t q = 0; q < K; ++q) A(r, q) = float((r * 7 + q * 3) % 11) / 11.f - 0.5f;
  for (index_t q = 0; q < K; ++q)
    for (index_t c = 0; c < N; ++c) B(q, c) = float((q * 5 + c) % 13) / 13.f - 0.5f;
  for (index_t c = 0; c < N; ++c) bias(c) = float(c % 5) - 2.f;
  const double tol = 1e-5 * double(K);

  // 1. Direct: C = A B, and C = 2 A B - C (alpha, beta), for apps without index notation.
  loom::gemm(C, A, B);
  for (index_t r = 0; r < M; ++r)
    for (index_t c = 0; c < N; ++c) lesson::expect_near(C(r, c), dot(A, B, r, c, K), tol, "gemm");
  loom::gemm(C, A, B, 2.f, -1.f);  // 2 A B - (A B) = A B
  for (index_t r = 0; r < M; ++r)
    for (index_t c = 0; c < N; ++c) lesson::expect_near(C(r, c), dot(A, B, r, c, K), tol, "alpha, beta");

  // 2. Index notation with an epilogue: one engine call, bias and ReLU applied in registers.
  const auto layer = (C(i, j) = max(sum(k, A(i, k) * B(k, j)) + bias(j), 0.f));
  std::printf("%s\n", loom::print_loop_nest(layer).c_str());
  loom::run(layer);
  for (index_t r = 0; r < M; ++r)
    for (index_t c = 0; c < N; ++c)
      lesson::expect_near(C(r, c), std::max(dot(A, B, r, c, K) + bias(c), 0.0), tol, "bias + relu");

  // 3. Views: a transposed operand is just strides; the engine packs it like any other.
  loom::Tensor<float, 2> Bt("Bt", N, K);
  for (index_t q = 0; q < K; ++q)
    for (index_t c = 0; c < N; ++c) Bt(c, q) = B(q, c);
  loom::run(C(i, j) = sum(k, A(i, k) * Bt(j, k)));
  for (index_t r = 0; r < M; ++r)
    for (index_t c = 0; c < N; ++c) lesson::expect_near(C(r, c), dot(A, B, r, c, K), tol, "B transposed");

  // 4. A policy of your own: here blocks far smaller than the caches (slow, but legal). A tile that
  //    does not fit the registers, e.g. gemm_policy<float, 16, 4, ...>, does not compile.
  using tiny = loom::gemm_policy<float, 4, 1, 16, 8, 2 * index_t(loom::simd::native_width<float>)>;
  loom::run<loom::gemm_schedule<tiny>>(C(i, j) = sum(k, A(i, k) * B(k, j)) * 0.5f);
  for (index_t r = 0; r < M; ++r)
    for (index_t c = 0; c < N; ++c) lesson::expect_near(C(r, c), 0.5 * dot(A, B, r, c, K), tol, "tiny policy");

  // 5. Static extents <= 64: every trip count is known, and a path without packing runs.
  using E = loom::extents<16, 16>;
  loom::Tensor<float, 2, E> a, b, c;
  for (index_t r = 0; r < 16; ++r)
    for (index_t q = 0; q < 16; ++q) a(r, q) = float(r - q), b(r, q) = float(r + q) / 16.f;
  loom::gemm(c, a, b);
  for (index_t r = 0; r < 16; ++r)
    for (index_t q = 0; q < 16; ++q) lesson::expect_near(c(r, q), dot(a, b, r, q, 16), 1e-5, "static 16 x 16");
  //    Small run-time extents (N <= 4 vectors, M N K <= 64^3) skip the packing too, with register
  //    blocks chosen at run time. With AVX-512, 24 columns are 2 vectors and 21 rows 3 blocks of 8,
  //    the last one shifted up to end at row 21 (its first 3 rows computed again, not stored).
  loom::Tensor<float, 2> ds("ds", 21, 13), es("es", 13, 24), fs("fs", 21, 24);
  for (index_t r = 0; r < 21; ++r)
    for (index_t q = 0; q < 13; ++q) ds(r, q) = float(r * q % 7) - 3.f;
  for (index_t r = 0; r < 13; ++r)
    for (index_t q = 0; q < 24; ++q) es(r, q) = float(r + 2 * q) / 8.f;
  loom::gemm(fs, ds, es);
  for (index_t r = 0; r < 21; ++r)
    for (index_t q = 0; q < 24; ++q) lesson::expect_near(fs(r, q), dot(ds, es, r, q, 13), 1e-4, "dynamic 21 x 24");

  // 6. Bad shapes: a shape_error before anything is written.
  loom::Tensor<float, 2> Bbad("Bbad", K + 1, N);
  try {
    loom::gemm(C, A, Bbad);
    lesson::expect_near(0, 1, 0, "shape_error expected");
  } catch (const loom::shape_error& e) {
    std::printf("caught: %s\n", e.what());
  }
  return lesson::finish("lesson 5 (GEMM)");
}
