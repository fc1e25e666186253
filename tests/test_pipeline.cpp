// tests/test_pipeline.cpp — multi-stage pipelines against plain loops: every placement of a 2- and
// 3-stage pipeline (inline, root, compute_at at each loop level, tiles, vectorized and parallel
// consumers), stages with two readers, reductions inside stages, reductions hoisted out of a
// definition (softmax, layer norm, a normalisation by the total), bounds errors before anything
// is written, and buffers kept from run to run.
#include "support.hpp"

#include <loom/pipeline/run.hpp>

namespace {

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
using loom::tile;
using loom::vectorize;

constexpr loom::Func<float, 2, "bx"> bx;
constexpr loom::Func<float, 2, "by"> by;
constexpr loom::Func<double, 2, "dx"> dx;

using T2 = loom::Tensor<float, 2>;

/// in(y, x) for a blur source of (H + 2) x (W + 2), seeded.
T2 source(index_t H, index_t W, lt::rng_t& g) {
  T2 in(H + 2, W + 2);
  lt::fill_random(in.view(), g);
  return in;
}

/// The separable 3x3 box blur, in doubles.
std::vector<double> blur_ref(const T2& in, index_t H, index_t W) {
  std::vector<double> r(std::size_t(H * W));
  for (index_t a = 0; a < H; ++a)
    for (index_t b = 0; b < W; ++b) {
      double s = 0;
      for (int dy = 0; dy < 3; ++dy) s += (double(in(a + dy, b)) + in(a + dy, b + 1) + in(a + dy, b + 2)) / 3.0;
      r[std::size_t(a * W + b)] = s / 3.0;
    }
  return r;
}

template <class... S, class P>
void check_blur(P& p, const T2& out, const std::vector<double>& ref, const char* what) {
  auto& o = const_cast<T2&>(out);
  std::fill(o.begin(), o.end(), -7.f);
  loom::run<S...>(p);
  INFO(what);
  const auto r = lt::compare(out.view(), ref, 1e-5);
  CHECK(r.ok);
  if (!r.ok) UNSCOPED_INFO(r.message);
}

}  // namespace

TEST_CASE("pipeline: a two-stage blur under every placement and schedule", "[pipeline]") {
  auto g = lt::make_rng("pipeline blur");
  for (int round = 0; round < 12; ++round) {
    const index_t H = round == 0 ? 1 : round == 1 ? 2 : lt::pick_size(g, 70);
    const index_t W = round == 2 ? 1 : lt::pick_size(g, 90);
    INFO("H = " << H << ", W = " << W);
    const T2 in = source(H, W, g);
    T2 out(H, W);
    const auto ref = blur_ref(in, H, W);
    auto p = loom::pipeline(bx(y, x) = (in(y, x) + in(y, x + 1) + in(y, x + 2)) / 3.f,
                            out(y, x) = (bx(y, x) + bx(y + 1, x) + bx(y + 2, x)) / 3.f);
    check_blur(p, out, ref, "default (bx per strip of the output)");
    check_blur<stage<bx, compute_inline>, stage<output, vectorize<x>>>(p, out, ref, "inline, vectorized");
    check_blur<stage<bx, compute_root>>(p, out, ref, "root");
    check_blur<stage<bx, compute_root, vectorize<x>, parallel<y>>, stage<output, split<y, 8>, parallel<outer<y>>, vectorize<x>>>(
        p, out, ref, "root, both scheduled");
    check_blur<stage<bx, compute_at<output, y>>>(p, out, ref, "at y, default loops");
    check_blur<stage<bx, compute_at<output, y>, vectorize<x>>, stage<output, parallel<y>, vectorize<x>>>(p, out, ref, "at y, parallel");
    check_blur<stage<bx, compute_at<output, outer<y>>, vectorize<x>>, stage<output, split<y, 8>, parallel<outer<y>>, vectorize<x>>>(
        p, out, ref, "at y.o (strips of 8)");
    check_blur<stage<bx, compute_at<output, inner<y>>>, stage<output, split<y, 4>, parallel<outer<y>>, vectorize<x>>>(
        p, out, ref, "at y.i (rows inside strips)");
    check_blur<stage<bx, compute_at<output, outer<x>>, vectorize<x>>,
               stage<output, tile<y, x, 8, 16>, parallel<outer<y>>, vectorize<inner<x>>>>(p, out, ref, "at x.o of 8 x 16 tiles");
    check_blur<stage<bx, compute_at<output, outer<y>>>, stage<output, tile<y, x, 5, 7>>>(p, out, ref, "at y.o of 5 x 7 tiles, scalar");
    check_blur<stage<bx, compute_at<output, x>>, stage<output, loom::reorder<x, y>>>(p, out, ref, "at x, columns first");
    check_blur<stage<bx, loom::store_at<output, outer<y>>, compute_at<output, inner<y>>, vectorize<x>>,
               stage<output, split<y, 8>, parallel<outer<y>>, vectorize<x>>>(p, out, ref, "sliding window: stored at y.o, computed at y.i");
    check_blur<stage<bx, loom::store_at<output, outer<y>>, compute_at<output, inner<y>>>, stage<output, split<y, 5>>>(
        p, out, ref, "sliding window, serial strips of 5");
    check_blur<stage<bx, loom::store_at<output, outer<x>>, compute_at<output, inner<y>>>,
               stage<output, tile<y, x, 4, 16>, loom::reorder<outer<x>, outer<y>, inner<y>, inner<x>>>>(p, out, ref, "sliding down a column of tiles");
    // Strips longer than the fold (4 windows of 3 rows): the storage keeps 12 rows, the live ones
    // moved to its front as the window walks down.
    check_blur<stage<bx, loom::store_at<output, outer<y>>, compute_at<output, inner<y>>, vectorize<x>>,
               stage<output, split<y, 32>, parallel<outer<y>>, vectorize<x>>>(p, out, ref, "sliding window folded, strips of 32 in parallel");
    check_blur<stage<bx, loom::store_at<output, outer<y>>, compute_at<output, inner<y>>>, stage<output, split<y, 29>, vectorize<x>>>(
        p, out, ref, "sliding window folded, serial strips of 29");
  }
}

TEST_CASE("pipeline: three stages, nested compute_at and a stage with two readers", "[pipeline]") {
  auto g = lt::make_rng("pipeline three");
  for (int round = 0; round < 8; ++round) {
    const index_t H = round == 0 ? 1 : lt::pick_size(g, 50), W = round == 1 ? 1 : lt::pick_size(g, 60);
    INFO("H = " << H << ", W = " << W);
    T2 in(H + 4, W + 6), out(H, W);
    lt::fill_random(in.view(), g);
    // bx(y, x) = in(y, x) * 2 + in(y, x + 4); by(y, x) = bx(y, x) - bx(y + 4, x) * 0.5;
    // out = by(y, x) + by(y, x + 1) * bx(y + 1, x + 2)  (bx read by by and by out)
    std::vector<double> ref(static_cast<std::size_t>(H * W));
    auto bxr = [&](index_t a, index_t b) { return double(in(a, b)) * 2 + in(a, b + 4); };
    auto byr = [&](index_t a, index_t b) { return bxr(a, b) - bxr(a + 4, b) * 0.5; };
    for (index_t a = 0; a < H; ++a)
      for (index_t b = 0; b < W; ++b) ref[std::size_t(a * W + b)] = byr(a, b) + byr(a, b + 1) * bxr(a + 1, b + 2);
    auto p = loom::pipeline(bx(y, x) = in(y, x) * 2.f + in(y, x + 4), by(y, x) = bx(y, x) - bx(y + 4, x) * 0.5f,
                            out(y, x) = by(y, x) + by(y, x + 1) * bx(y + 1, x + 2));
    check_blur(p, out, ref, "all inlined");
    check_blur<stage<bx, compute_root>, stage<by, compute_root>>(p, out, ref, "all root");
    check_blur<stage<bx, compute_root>, stage<by, compute_at<output, y>>>(p, out, ref, "bx root, by at y");
    check_blur<stage<bx, compute_at<output, y>>, stage<by, compute_at<output, y>>, stage<output, parallel<y>, vectorize<x>>>(
        p, out, ref, "both at y (bx read by by and output)");
    check_blur<stage<bx, compute_at<output, outer<y>>>, stage<by, compute_at<output, outer<y>>, vectorize<x>>,
               stage<output, split<y, 3>, parallel<outer<y>>>>(p, out, ref, "both at y.o");
    check_blur<stage<by, compute_root>, stage<bx, compute_inline>>(p, out, ref, "bx inlined into root by and output");
    check_blur<stage<bx, compute_at<output, outer<y>>>, stage<by, compute_at<output, inner<y>>>,
               stage<output, split<y, 4>, parallel<outer<y>>, vectorize<x>>>(p, out, ref, "bx at y.o, by at y.i: bx read by by inside");
  }
}

TEST_CASE("pipeline: a stage computed inside a stage computed at a loop", "[pipeline]") {
  auto g = lt::make_rng("pipeline nested");
  const index_t H = 23, W = 41;
  T2 in(H + 2, W + 2), out(H, W);
  lt::fill_random(in.view(), g);
  std::vector<double> ref(static_cast<std::size_t>(H * W));
  auto bxr = [&](index_t a, index_t b) { return double(in(a, b)) + in(a, b + 1) + in(a, b + 2); };
  auto byr = [&](index_t a, index_t b) { return bxr(a, b) + bxr(a + 1, b) + bxr(a + 2, b); };
  for (index_t a = 0; a < H; ++a)
    for (index_t b = 0; b < W; ++b) ref[std::size_t(a * W + b)] = byr(a, b) * 2;
  auto p = loom::pipeline(bx(y, x) = in(y, x) + in(y, x + 1) + in(y, x + 2), by(y, x) = bx(y, x) + bx(y + 1, x) + bx(y + 2, x),
                          out(y, x) = by(y, x) * 2.f);
  check_blur<stage<bx, compute_at<by, y>>, stage<by, compute_at<output, outer<y>>>, stage<output, split<y, 4>, parallel<outer<y>>>>(
      p, out, ref, "bx at by's y, by at out's y.o");
  check_blur<stage<bx, compute_at<by, outer<y>>>, stage<by, compute_root, split<y, 6>, vectorize<x>>>(p, out, ref, "bx at root by's y.o");
}

TEST_CASE("pipeline: a stage with a reduction, and reductions over stages", "[pipeline]") {
  auto g = lt::make_rng("pipeline reductions");
  for (int round = 0; round < 6; ++round) {
    const index_t M = lt::pick_size(g, 40), N = lt::pick_size(g, 70);
    INFO("M = " << M << ", N = " << N);
    T2 X(M, N), out(M, N);
    lt::fill_random(X.view(), g);
    constexpr loom::Func<float, 1, "rs"> rs;
    constexpr loom::Func<float, 2, "sq"> sq;
    // sq = X^2 (a stage); rs(i) = sum over the stage's row (k takes sq's extent from X); out = X / rs
    auto p = loom::pipeline(sq(i, j) = X(i, j) * X(i, j), rs(i) = sum(k, sq(i, k)) + 1.f, out(i, j) = X(i, j) / rs(i));
    std::vector<double> ref(static_cast<std::size_t>(M * N));
    for (index_t a = 0; a < M; ++a) {
      double s = 1;
      for (index_t b = 0; b < N; ++b) s += double(X(a, b)) * X(a, b);
      for (index_t b = 0; b < N; ++b) ref[std::size_t(a * N + b)] = X(a, b) / s;
    }
    check_blur(p, out, ref, "defaults (sq inlined into rs, rs at root)");
    check_blur<stage<sq, compute_root>>(p, out, ref, "sq and rs at root");
    check_blur<stage<sq, compute_at<output, i>>, stage<rs, compute_at<output, i>>, stage<output, parallel<i>, vectorize<j>>>(
        p, out, ref, "sq and rs per row");
    check_blur<stage<sq, compute_at<rs, i>>, stage<rs, compute_root, vectorize<k>>>(p, out, ref, "sq at rs's rows");
  }
}

TEST_CASE("pipeline: reductions that depend on fewer variables are computed once (hoisted)", "[pipeline]") {
  auto g = lt::make_rng("pipeline hoist");
  for (int round = 0; round < 6; ++round) {
    const index_t M = round == 0 ? 1 : lt::pick_size(g, 40), N = round == 1 ? 1 : lt::pick_size(g, 90);
    INFO("M = " << M << ", N = " << N);
    T2 X(M, N), Y(M, N);
    lt::fill_random(X.view(), g, -3, 3);
    std::vector<double> soft(std::size_t(M * N)), norm(std::size_t(M * N)), frac(std::size_t(M * N));
    // The whole sum's operand is positive: a sum of values in [-3, 3] can be near 0, and then
    // X / total amplifies float's rounding past any fixed tolerance (seed 656361092 hit one).
    T2 P(M, N);
    lt::fill_random(P.view(), g, 0.5, 3);
    double total = 0;
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) total += P(a, b);
    for (index_t a = 0; a < M; ++a) {
      double mx = -1e300, s = 0, mean = 0, var = 0;
      for (index_t b = 0; b < N; ++b) mx = std::max(mx, double(X(a, b)));
      for (index_t b = 0; b < N; ++b) s += std::exp(X(a, b) - mx);
      for (index_t b = 0; b < N; ++b) mean += X(a, b);
      mean /= double(N);
      for (index_t b = 0; b < N; ++b) var += (X(a, b) - mean) * (X(a, b) - mean);
      var /= double(N);
      for (index_t b = 0; b < N; ++b) {
        const std::size_t q = std::size_t(a * N + b);
        soft[q] = std::exp(X(a, b) - mx) / s;
        norm[q] = (X(a, b) - mean) / std::sqrt(var + 1e-5);
        frac[q] = P(a, b) / total;
      }
    }
    const float inv_n = 1.f / float(N);
    loom::run(Y(i, j) = exp(X(i, j) - maximum(k, X(i, k))) / sum(k, exp(X(i, k) - maximum(l, X(i, l)))));
    CHECK(lt::compare(Y.view(), soft, 1e-5).ok);
    loom::run<loom::schedule<parallel<i>, vectorize<j>>>(Y(i, j) = exp(X(i, j) - maximum(k, X(i, k))) /
                                                                   sum(k, exp(X(i, k) - maximum(l, X(i, l)))));
    CHECK(lt::compare(Y.view(), soft, 1e-5).ok);
    // layer norm in one definition: mean and variance per row
    loom::run(Y(i, j) = (X(i, j) - sum(k, X(i, k)) * inv_n) /
                        sqrt(sum(k, (X(i, k) - sum(l, X(i, l)) * inv_n) * (X(i, k) - sum(l, X(i, l)) * inv_n)) * inv_n + 1e-5f));
    CHECK(lt::compare(Y.view(), norm, 1e-4).ok);
    // a reduction over everything: computed once, at root
    loom::run(Y(i, j) = P(i, j) / sum(k, l, P(k, l)));
    CHECK(lt::compare(Y.view(), frac, 1e-4, 1e-3).ok);
  }
}

TEST_CASE("pipeline: equivalent hoisted reductions are one stage when they read the same values", "[pipeline]") {
  auto g = lt::make_rng("pipeline merged hoist");
  // The shapes match up to the reductions' own variables; free variables, operators and views
  // must not be renamed.
  {
    using namespace loom::detail;
    T2 X("X", 2, 3), Y("Y", 2, 3);
    using MaxK = decltype(maximum(k, X(i, k)));
    using MaxL = decltype(maximum(l, X(i, l)));
    static_assert(alpha_equivalent<MaxK, MaxL>);
    static_assert(!alpha_equivalent<decltype(maximum(k, X(i, k))), decltype(maximum(k, X(j, k)))>);  // free i vs j
    static_assert(!alpha_equivalent<decltype(maximum(k, X(i, k))), decltype(sum(k, X(i, k)))>);
    static_assert(!alpha_equivalent<decltype(sum(k, l, X(k, l))), decltype(sum(k, l, X(l, k)))>);
    static_assert(alpha_equivalent<decltype(sum(k, l, X(k, l))), decltype(sum(l, k, X(l, k)))>);
    static_assert(!alpha_equivalent<decltype(sum(k, X(i, k))), decltype(sum(k, X(i, k + 1)))>);
    const auto softmax = Y(i, j) = exp(X(i, j) - maximum(k, X(i, k))) / sum(k, exp(X(i, k) - maximum(l, X(i, l))));
    const auto merged = hoist_all<true>(softmax);
    static_assert(std::tuple_size_v<decltype(merged.defs)> == 3);  // max, sum of exp, the output
    static_assert(std::tuple_size_v<decltype(hoist_all<false>(softmax).defs)> == 4);
    CHECK(merged.merges_hold());
    // print_loop_nest shows the pipeline that runs: the row's maximum and sum computed per strip
    const std::string nest = loom::print_loop_nest(softmax);
    INFO(nest);
    CHECK(nest.find("r0: computed here") != std::string::npos);
    CHECK(nest.find("r1: computed here") != std::string::npos);
    CHECK(nest.find("r2") == std::string::npos);
    // and the sum's body a stage of its own (pipeline/body_stage.hpp): each exponential once
    CHECK(nest.find("r1(i) = sum(k, b1(i, k))") != std::string::npos);
    CHECK(nest.find("Y(i, j) = (b1(i, j) / r1(i))") != std::string::npos);
    T2 X2(2, 3);
    const std::string apart =
        loom::print_loop_nest(Y(i, j) = exp(X(i, j) - maximum(k, X(i, k))) / sum(k, exp(X(i, k) - maximum(l, X2(i, l)))));
    CHECK(apart.find("r2: computed here") != std::string::npos);
  }
  for (int round = 0; round < 4; ++round) {
    const index_t M = round == 0 ? 1 : lt::pick_size(g, 30), N = round == 1 ? 1 : lt::pick_size(g, 70);
    INFO("M = " << M << ", N = " << N);
    T2 X(M, N), X2(M, N), Y(M, N), wide(M, N + 3);
    lt::fill_random(X.view(), g, 0.5, 3);  // positive: the sums below stay away from 0
    lt::fill_random(X2.view(), g, 0.5, 3);
    lt::fill_random(wide.view(), g, 0.5, 3);
    // Y(i, j) = A(i, j) * c1 / sum(k, B(i, k) * c2), in doubles: the shapes below differ only in
    // which view or constant the second reduction reads.
    auto ref = [&](const auto& A, const auto& B, double c1, double c2) {
      std::vector<double> r(std::size_t(M * N));
      for (index_t a = 0; a < M; ++a) {
        double s = 0, m1 = -1e300;
        for (index_t b = 0; b < N; ++b) s += double(B(a, b)) * c2, m1 = std::max(m1, double(A(a, b)) * c1);
        for (index_t b = 0; b < N; ++b) r[std::size_t(a * N + b)] = (double(A(a, b)) * c1 - m1) / s;
      }
      return r;
    };
    auto shifted = wide.view().block({0, 3}, {M, N});  // the same type as X's view, other elements
    // One stage for both maxima (the same view), and two where the views or constants differ.
    loom::run(Y(i, j) = (X(i, j) * 2.f - maximum(k, X(i, k) * 2.f)) / sum(k, X(i, k) * 2.f + 0.f * maximum(l, X(i, l) * 2.f)));
    CHECK(lt::compare(Y.view(), ref(X, X, 2, 2), 1e-4).ok);
    loom::run(Y(i, j) = (X(i, j) * 2.f - maximum(k, X(i, k) * 2.f)) / sum(k, X2(i, k) * 3.f + 0.f * maximum(l, X2(i, l) * 2.f)));
    CHECK(lt::compare(Y.view(), ref(X, X2, 2, 3), 1e-4).ok);
    loom::run(Y(i, j) = (X(i, j) * 2.f - maximum(k, X(i, k) * 2.f)) / sum(k, X(i, k) * 3.f));
    CHECK(lt::compare(Y.view(), ref(X, X, 2, 3), 1e-4).ok);
    loom::run(Y(i, j) = (X(i, j) - maximum(k, X(i, k))) / sum(k, shifted(i, k)));
    CHECK(lt::compare(Y.view(), ref(X, shifted, 1, 1), 1e-4).ok);
    // softmax whose two maxima read different tensors of one type: no merge, each its own stage
    loom::run(Y(i, j) = exp(X(i, j) - maximum(k, X(i, k))) / sum(k, exp(X(i, k) - maximum(l, X2(i, l)))));
    std::vector<double> soft(std::size_t(M * N));
    for (index_t a = 0; a < M; ++a) {
      double m1 = -1e300, m2 = -1e300, s = 0;
      for (index_t b = 0; b < N; ++b) m1 = std::max(m1, double(X(a, b))), m2 = std::max(m2, double(X2(a, b)));
      for (index_t b = 0; b < N; ++b) s += std::exp(X(a, b) - m2);
      for (index_t b = 0; b < N; ++b) soft[std::size_t(a * N + b)] = std::exp(X(a, b) - m1) / s;
    }
    CHECK(lt::compare(Y.view(), soft, 1e-5).ok);
  }
}

TEST_CASE("pipeline: a reduction nested in another reduction's body, hoisted to root", "[pipeline]") {
  auto g = lt::make_rng("pipeline nested hoist");
  const index_t M = 13, K = 17, L = 9;
  loom::Tensor<float, 2> A(M, K), B(K, L);
  loom::Tensor<float, 1> out(M);
  lt::fill_random(A.view(), g);
  lt::fill_random(B.view(), g);
  // out(i) = sum(k, A(i, k) * maximum(l, B(k, l))): the maximum depends on k only.
  loom::run(out(i) = sum(k, A(i, k) * maximum(l, B(k, l))));
  std::vector<double> ref(static_cast<std::size_t>(M));
  for (index_t a = 0; a < M; ++a) {
    double s = 0;
    for (index_t c = 0; c < K; ++c) {
      double mx = -1e300;
      for (index_t d = 0; d < L; ++d) mx = std::max(mx, double(B(c, d)));
      s += A(a, c) * mx;
    }
    ref[std::size_t(a)] = s;
  }
  CHECK(lt::compare(out.view(), ref, 1e-5).ok);
}

TEST_CASE("pipeline: a moved pipeline takes its arena; the moved-from one starts a new arena", "[pipeline][arena]") {
  const index_t H = 8, W = 9;
  T2 in(H, W + 1), out(H, W);
  auto g = lt::make_rng("pipeline moved");
  lt::fill_random(in.view(), g);
  auto p = loom::pipeline(bx(y, x) = in(y, x) * 2.f, out(y, x) = bx(y, x) + bx(y, x + 1));
  using S = stage<bx, compute_root>;
  auto check = [&] {
    for (index_t r = 0; r < H; ++r)
      for (index_t c = 0; c < W; ++c) REQUIRE(out(r, c) == in(r, c) * 2.f + in(r, c + 1) * 2.f);
  };
  loom::run<S>(p);
  check();
  REQUIRE(p.buffer_bytes() >= std::size_t(H * W) * sizeof(float));
  auto q = std::move(p);
  REQUIRE(q.buffer_bytes() >= std::size_t(H * W) * sizeof(float));
  CHECK(p.buffer_bytes() == 0);  // (it reported the arena it had lost, and ran on a null one)
  lt::fill(out.view(), 0.f);
  loom::run<S>(q);
  check();
  lt::fill(out.view(), 0.f);
  loom::run<S>(p);
  check();
  CHECK(p.buffer_bytes() > 0);
}

TEST_CASE("pipeline: reads outside an input are a bounds_error before anything is written", "[pipeline]") {
  const index_t H = 9, W = 11;
  T2 in(H, W), out(H, W);
  lt::fill(in.view(), 1.f);
  lt::fill(out.view(), 5.f);
  auto p = loom::pipeline(bx(y, x) = in(y, x) + in(y, x + 1), out(y, x) = bx(y, x) + bx(y + 1, x));
  // Inlined, the reads are in(y + 1, x + 1): a bounds_error. Computed anywhere (the default:
  // per strip), bx's region is rows [0, 10) of in, which has 9: the plain `in(y, x)` ranges past
  // it (a shape_error).
  CHECK_THROWS_AS((loom::run<stage<bx, compute_inline>>(p)), loom::bounds_error);
  CHECK_THROWS_AS(loom::run(p), loom::error);
  CHECK_THROWS_AS((loom::run<stage<bx, compute_root>>(p)), loom::error);
  CHECK_THROWS_AS((loom::run<stage<bx, compute_at<output, y>>>(p)), loom::error);
  for (float v : out) CHECK(v == 5.f);
  std::string what;
  try {
    loom::run<stage<bx, compute_root>>(p);
  } catch (const loom::error& e) {
    what = e.what();
  }
  INFO(what);
  CHECK(what.find(std::string(in.name())) != std::string::npos);  // names the input tensor
  CHECK(what.find("extent 9") != std::string::npos);
}

TEST_CASE("pipeline: a tensor an earlier definition writes is neither read nor written again", "[pipeline][alias]") {
  // Every definition reads the tensors as they were before the run, and root stages run in the
  // order the arena plan picks: a later reader would see old or new values by the schedule.
  constexpr loom::Func<float, 2, "a2"> a2;
  constexpr loom::Func<float, 2, "b2"> b2;
  const index_t H = 6, W = 10;
  T2 in(H, W), mid(H, W), out(H, W);
  lt::fill(in.view(), 1.f);
  lt::fill(mid.view(), 0.f);
  lt::fill(out.view(), 5.f);
  auto p = loom::pipeline(a2(y, x) = in(y, x) + 1.f, mid(y, x) = a2(y, x) * 2.f, b2(y, x) = mid(y, x) + 1.f,
                          out(y, x) = a2(y, x) + b2(y, x));
  CHECK_THROWS_AS(loom::run(p), loom::alias_error);
  CHECK_THROWS_AS((loom::run<stage<b2, compute_root>>(p)), loom::alias_error);
  CHECK_THROWS_AS((loom::plan_memory<stage<a2, compute_root>, stage<b2, compute_root>>(p)), loom::alias_error);
  for (float v : mid) CHECK(v == 0.f);
  for (float v : out) CHECK(v == 5.f);
  std::string what;
  try {
    loom::run(p);
  } catch (const loom::alias_error& e) {
    what = e.what();
  }
  CHECK(what.find(std::string(mid.name())) != std::string::npos);
  // In place in the middle, then read: the same error.
  T2 a(H, W);
  lt::fill(a.view(), 3.f);
  auto q = loom::pipeline(a(y, x) = a(y, x) + 1000.f, out(y, x) = a(y, x) * 1.f);
  CHECK_THROWS_AS(loom::run(q), loom::alias_error);
  for (float v : a) CHECK(v == 3.f);
  // Written twice.
  auto r = loom::pipeline(out(y, x) = in(y, x) * 2.f, out(y, x) = in(y, x) * 3.f);
  CHECK_THROWS_AS(loom::run(r), loom::alias_error);
  // Allowed: a tensor read before it is written (the old values, whatever the placement), and an
  // output that no later definition touches.
  T2 in2(H, W), side(H, W);
  lt::fill(in2.view(), 2.f);
  auto ok = loom::pipeline(a2(y, x) = in2(y, x) * 3.f, side(y, x) = in2(y, x) + 1.f, in2(y, x) = a2(y, x) + 1.f);
  loom::run<stage<a2, compute_root>>(ok);
  for (float v : in2) CHECK(v == 7.f);
  for (float v : side) CHECK(v == 3.f);
}

TEST_CASE("pipeline: a reduction over an empty range of a stage with storage, and a region far from 0", "[pipeline]") {
  constexpr loom::Func<float, 2, "f0"> f0;
  constexpr loom::Func<float, 1, "s0"> s0;
  // The stage's reads never run: they ask for none of it (a shape_error before), whatever the
  // placement; the reduction gives its identity.
  T2 E(5, 0);
  loom::Tensor<float, 1> o(5);
  auto p = loom::pipeline(f0(i, j) = E(i, j) * 2.f, s0(i) = sum(k, f0(i, k)) + 3.f, o(i) = s0(i) * 1.f);
  for (int placement = 0; placement < 3; ++placement) {
    lt::fill(o.view(), -1.f);
    if (placement == 0) loom::run(p);
    if (placement == 1) loom::run<stage<f0, compute_root, vectorize<j>>>(p);
    if (placement == 2) loom::run<stage<f0, compute_at<s0, i>>, stage<s0, compute_root, parallel<i>>>(p);
    INFO("placement " << placement);
    for (float v : o) CHECK(v == 3.f);
  }
  // A root stage read at 2^62 + y through repeat_edge: its region starts there, and binding its
  // output summed offsets whose terms overflow (UBSan in CI's sanitizer build).
  T2 src(4, 3), dst(4, 3);
  lt::fill(src.view(), 1.f);
  const index_t big = index_t(1) << 62;
  auto re = loom::repeat_edge(src);
  auto far = loom::pipeline(bx(y, x) = re(y, x) * 2.f, dst(y, x) = bx(y + big, x) + bx(y + big + 1, x));
  loom::run<stage<bx, compute_root>>(far);
  for (float v : dst) CHECK(v == 4.f);
}

TEST_CASE("pipeline: a root stage's buffer is kept from run to run", "[pipeline]") {
  const index_t H = 64, W = 64;
  T2 in(H + 1, W), out(H, W);
  lt::fill(in.view(), 2.f);
  auto p = loom::pipeline(bx(y, x) = in(y, x) * 3.f, out(y, x) = bx(y, x) + bx(y + 1, x));
  loom::run<stage<bx, compute_root>>(p);
  const std::size_t bytes = p.buffer_bytes();
  CHECK(bytes >= std::size_t((H + 1) * W) * sizeof(float));
  loom::run<stage<bx, compute_root>>(p);
  CHECK(p.buffer_bytes() == bytes);
  for (float v : out) CHECK(v == 12.f);
  p.release_buffers();
  CHECK(p.buffer_bytes() == 0);
}

TEST_CASE("pipeline: one pipeline object run under schedules whose root stages differ but sizes match", "[pipeline][arena]") {
  // Both schedules put four stages of the same sizes at root, which depend on each other
  // differently: the arena's order and offsets planned for one were reused for the other (c2 ran
  // before c1, which it reads).
  constexpr loom::Func<float, 2, "a1"> a1;
  constexpr loom::Func<float, 2, "b1"> b1;
  constexpr loom::Func<float, 2, "c1"> c1;
  constexpr loom::Func<float, 1, "a2"> a2;
  constexpr loom::Func<float, 1, "c2"> c2;
  constexpr loom::Func<float, 1, "d2"> d2;
  const index_t H = 16, W = 16;
  T2 in(H, W);
  loom::Tensor<float, 1> out(H);
  lt::fill(in.view(), 1.f);
  auto p = loom::pipeline(a1(y, x) = in(y, x) + 1.f, b1(y, x) = in(y, x) + 2.f, c1(y, x) = b1(y, x) * 3.f,
                          a2(y) = sum(k, a1(y, k)), c2(y) = sum(k, c1(y, k)), d2(y) = sum(k, b1(y, k) * b1(y, k)),
                          out(y) = a2(y) + c2(y) + d2(y));
  const float want = 16 * 2.f + 16 * 9.f + 16 * 9.f;
  for (int round = 0; round < 2; ++round) {
    loom::run<stage<a1, compute_root>, stage<b1, compute_inline>, stage<c1, compute_root>, stage<a2, compute_root>,
              stage<c2, compute_root>, stage<d2, compute_inline>>(p);
    for (index_t a = 0; a < H; ++a) CHECK(out(a) == want);
    lt::fill(out.view(), -1.f);
    loom::run<stage<a1, compute_inline>, stage<b1, compute_root>, stage<c1, compute_root>, stage<a2, compute_inline>,
              stage<c2, compute_root>, stage<d2, compute_root>>(p);
    for (index_t a = 0; a < H; ++a) CHECK(out(a) == want);
    const auto m = loom::plan_memory<stage<a1, compute_inline>, stage<b1, compute_root>, stage<c1, compute_root>,
                                     stage<a2, compute_inline>, stage<c2, compute_root>, stage<d2, compute_root>>(p);
    // c1 (position 1 among the roots b1, c1, c2, d2, out) runs before c2 (position 2), which reads it.
    const auto at = [&](int stage_pos) { return std::find(m.order.begin(), m.order.end(), stage_pos) - m.order.begin(); };
    CHECK(at(1) < at(2));
  }
}

TEST_CASE("pipeline: sliding windows whose loops between store and compute walk two dimensions", "[pipeline]") {
  // store_at outer<x>, compute_at inner<x> with y between them: each y starts the window again
  // along x, and the part computed for the earlier y spans other columns. The window computed so
  // far stayed a box only if each new slab spans it whole.
  auto g = lt::make_rng("pipeline sliding two dims");
  for (int rep = 0; rep < 12; ++rep) {
    const index_t H = lt::pick_size(g, 40), W = lt::pick_size(g, 60);
    T2 in(H + 1, W + 1), out(H, W);
    lt::fill_random(in.view(), g);
    std::vector<double> ref(std::size_t(H * W));
    for (index_t a = 0; a < H; ++a)
      for (index_t b = 0; b < W; ++b) ref[std::size_t(a * W + b)] = 2.0 * in(a, b) + 2.0 * in(a + 1, b + 1);
    auto p = loom::pipeline(bx(y, x) = in(y, x) * 2.f, out(y, x) = bx(y, x) + bx(y + 1, x + 1));
    INFO("H = " << H << ", W = " << W);
    auto check = [&](const char* what) {
      INFO(what);
      const auto r = lt::compare(out.view(), ref, 1e-6);
      CHECK(r.ok);
      if (!r.ok) UNSCOPED_INFO(r.message);
      lt::fill(out.view(), -7.f);
    };
    loom::run<stage<bx, loom::store_at<output, outer<x>>, compute_at<output, inner<x>>>,
              stage<output, split<x, 4>, loom::reorder<outer<x>, y, inner<x>>>>(p);
    check("split<x, 4>, reorder<outer<x>, y, inner<x>>, store at outer<x>, compute at inner<x>");
    loom::run<stage<bx, loom::store_at<output, outer<x>>, compute_at<output, inner<y>>>, stage<output, tile<x, y, 7, 3>>>(p);
    check("tile<x, y, 7, 3>, store at outer<x>, compute at inner<y>");
    loom::run<stage<bx, loom::store_at<output, outer<y>>, compute_at<output, inner<x>>>, stage<output, tile<y, x, 5, 4>>>(p);
    check("tile<y, x, 5, 4>, store at outer<y>, compute at inner<x>");
  }
}

TEST_CASE("pipeline: double stages", "[pipeline]") {
  auto g = lt::make_rng("pipeline double");
  const index_t H = 17, W = 29;
  loom::Tensor<double, 2> in(H, W + 1), out(H, W);
  lt::fill_random(in.view(), g);
  auto p = loom::pipeline(dx(y, x) = in(y, x + 1) - in(y, x), out(y, x) = dx(y, x) * dx(y, x));
  loom::run<stage<dx, compute_at<output, y>, vectorize<x>>, stage<output, vectorize<x>>>(p);
  for (index_t a = 0; a < H; ++a)
    for (index_t b = 0; b < W; ++b) {
      const double d = in(a, b + 1) - in(a, b);
      CHECK(out(a, b) == Approx(d * d));
    }
}

TEST_CASE("pipeline: the arena of root stages, planned from their live ranges", "[pipeline]") {
  const index_t H = 40, W = 48;
  T2 in(H, W), out(H, W);
  lt::fill(in.view(), 1.f);
  constexpr loom::Func<float, 2, "a"> a;
  constexpr loom::Func<float, 2, "b"> b;
  constexpr loom::Func<float, 2, "c"> c;
  const std::size_t one = std::size_t(H * W) * sizeof(float);
  // A chain: a is dead once b is computed, so c can reuse a's bytes: two buffers, not three.
  auto chain = loom::pipeline(a(y, x) = in(y, x) + 1.f, b(y, x) = a(y, x) * 2.f, c(y, x) = b(y, x) + 3.f, out(y, x) = c(y, x) * 0.5f);
  using roots = loom::meta::list<stage<a, compute_root>, stage<b, compute_root>, stage<c, compute_root>>;
  const auto m = [&]<class... S>(loom::meta::list<S...>*) { return loom::plan_memory<S...>(chain); }(static_cast<roots*>(nullptr));
  INFO(m.describe());
  CHECK(m.sum_bytes() == 3 * one);
  CHECK(m.arena_bytes() == 2 * one);
  REQUIRE(m.names.size() == 4);
  CHECK(m.names[0] == "a");
  CHECK(m.names[3] == std::string(out.name()));
  CHECK(m.plan.offsets[0] == m.plan.offsets[2]);  // c takes a's place
  CHECK(chain.buffer_bytes() == 0);                // planning allocates nothing
  [&]<class... S>(loom::meta::list<S...>*) { loom::run<S...>(chain); }(static_cast<roots*>(nullptr));
  for (float v : out) CHECK(v == 3.5f);
  CHECK(chain.buffer_bytes() >= 2 * one);
  CHECK(chain.buffer_bytes() < 3 * one);
  // Two branches read by the output: declared a, b (both live until the output), no reuse.
  auto branches = loom::pipeline(a(y, x) = in(y, x) + 1.f, b(y, x) = in(y, x) * 2.f, out(y, x) = a(y, x) - b(y, x));
  const auto m2 = loom::plan_memory<stage<a, compute_root>, stage<b, compute_root>>(branches);
  CHECK(m2.arena_bytes() == 2 * one);
  loom::run<stage<a, compute_root>, stage<b, compute_root>>(branches);
  for (float v : out) CHECK(v == 0.f);
}

TEST_CASE("pipeline: boundary conditions on a stage's input, every side, every placement", "[pipeline]") {
  auto g = lt::make_rng("pipeline boundary");
  auto clamp = [](index_t v, index_t n) { return v < 0 ? 0 : v >= n ? n - 1 : v; };
  auto mirror = [](index_t v, index_t n) {  // mirror_image: ... 1 0 | 0 1 ... n-1 | n-1 n-2 ...
    const index_t p = 2 * n;
    v = ((v % p) + p) % p;
    return v < n ? v : p - 1 - v;
  };
  for (int round = 0; round < 10; ++round) {
    const index_t H = round < 3 ? round + 1 : lt::pick_size(g, 45), W = round < 3 ? 3 - round : lt::pick_size(g, 70);
    INFO("H = " << H << ", W = " << W);
    T2 in(H, W), out(H, W);
    lt::fill_random(in.view(), g);
    // bx reads in at x - 2 .. x + 1, out reads bx at y - 1 .. y + 2: every side leaves the image.
    auto run_kind = [&](auto bounded, auto remap, const char* kind) {
      INFO(kind);
      std::vector<double> ref(static_cast<std::size_t>(H * W));
      auto bxr = [&](index_t a, index_t b) {
        double s = 0;
        for (index_t d = -2; d <= 1; ++d) s += remap(a, b + d);
        return s;
      };
      for (index_t a = 0; a < H; ++a)
        for (index_t b = 0; b < W; ++b) ref[std::size_t(a * W + b)] = bxr(a - 1, b) + 2 * bxr(a + 2, b);
      auto p = loom::pipeline(bx(y, x) = bounded(y, x - 2) + bounded(y, x - 1) + bounded(y, x) + bounded(y, x + 1),
                              out(y, x) = bx(y - 1, x) + bx(y + 2, x) * 2.f);
      check_blur(p, out, ref, "inlined");
      check_blur<stage<bx, compute_root, vectorize<x>>>(p, out, ref, "root, vectorized");
      check_blur<stage<bx, compute_at<output, outer<y>>, vectorize<x>>, stage<output, split<y, 4>, parallel<outer<y>>, vectorize<x>>>(
          p, out, ref, "per strip");
      check_blur<stage<bx, loom::store_at<output, outer<y>>, compute_at<output, inner<y>>>, stage<output, split<y, 8>>>(
          p, out, ref, "sliding window");
    };
    run_kind(loom::repeat_edge(in), [&](index_t a, index_t b) { return double(in(clamp(a, H), clamp(b, W))); }, "repeat_edge");
    run_kind(loom::constant_exterior(in, 0.5f),
             [&](index_t a, index_t b) { return a < 0 || a >= H || b < 0 || b >= W ? 0.5 : double(in(a, b)); }, "constant_exterior");
    run_kind(loom::mirror_image(in), [&](index_t a, index_t b) { return double(in(mirror(a, H), mirror(b, W))); }, "mirror_image");
  }
}
