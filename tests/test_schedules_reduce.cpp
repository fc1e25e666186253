// tests/test_schedules_reduce.cpp — the schedule matrix for reductions other than contractions:
// row sums (lanes along the reduction), row maxima / products / minima (where a dead lane that
// leaked into the result would show), column sums (lanes along the output, the output as the
// accumulator), a convolution and several reductions in one expression.
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;
using namespace loom;
using lt::idx_t;

namespace {

constexpr index_t NF = lt::native_width<float>;
constexpr index_t W4 = lt::w16b<float>;

// ---- out(i) = op(j, X(i, j)) [* 2] and out(j) = sum(i, X(i, j)) ------------------------------
// Op 0: sum; 1: maximum(...) * 2 on negative values; 2: product on values near 1; 3: minimum on
// positive values; 4: column sums out(j) = sum(i, X(i, j)).
template <int Op>
struct rowred {
  static constexpr const char* name = Op == 0   ? "out(i) = sum(j, X(i, j))"
                                      : Op == 1 ? "out(i) = maximum(j, X(i, j)) * 2 (X < 0)"
                                      : Op == 2 ? "out(i) = product(j, X(i, j)) (X near 1)"
                                      : Op == 3 ? "out(i) = minimum(j, X(i, j)) (X > 0)"
                                                : "out(j) = sum(i, X(i, j))";
  struct data : lt::case_base<float, 1> {
    lt::buffer<float, 2> X;
  };
  static data make(lt::rng_t& g) {
    data d;
    const index_t M = lt::case_size(g, Op == 4 ? 150 : 100, 200, 600), N = lt::case_size(g, Op == 4 ? 200 : 150, 200, 600);
    const double lo = Op == 1 ? -10 : Op == 2 ? 0.98 : Op == 3 ? 0.5 : -1, hi = Op == 1 ? -0.5 : Op == 2 ? 1.02 : Op == 3 ? 10 : 1;
    d.X = lt::random_buffer<float, 2>({M, N}, lt::pick_layout(g), "X", g, lo, hi);
    d.out = lt::make_buffer<float, 1>({Op == 4 ? N : M}, lt::pick_layout(g), "out");
    if constexpr (Op == 4) {
      d.ref.assign(static_cast<std::size_t>(N), 0.0);
      for (index_t a = 0; a < M; ++a)
        for (index_t b = 0; b < N; ++b) d.ref[std::size_t(b)] += d.X.view(a, b);
    } else {
      for (index_t a = 0; a < M; ++a) {
        double r = Op == 0 ? 0 : Op == 1 ? -INFINITY : Op == 2 ? 1 : INFINITY;
        for (index_t b = 0; b < N; ++b) {
          const double v = d.X.view(a, b);
          r = Op == 0 ? r + v : Op == 1 ? std::max(r, v) : Op == 2 ? r * v : std::min(r, v);
        }
        d.ref.push_back(Op == 1 ? 2 * r : r);
      }
    }
    d.tol = Op == 1 || Op == 3 ? 0.0 : lt::tolerance<float>(Op == 4 ? M : N);
    d.info = lt::str("M = ", M, ", N = ", N, "; ", d.X.describe());
    return d;
  }
  static auto def(data& d) {
    auto& X = d.X.view;
    auto& o = d.out.view;
    if constexpr (Op == 0) return o(i) = sum(j, X(i, j));
    else if constexpr (Op == 1) return o(i) = maximum(j, X(i, j)) * 2.f;
    else if constexpr (Op == 2) return o(i) = product(j, X(i, j));
    else if constexpr (Op == 3) return o(i) = minimum(j, X(i, j));
    else return o(j) = sum(i, X(i, j));
  }
};

using rowsum_schedules = lt::schedule_list<
    auto_schedule,
    schedule<>,
    schedule<vectorize<j, native, tail::masked>>,
    schedule<vectorize<j, native, tail::guard>>,                       // guard inside the reduction runs masked
    schedule<vectorize<j, W4>, unroll<outer<j>, 4>>,
    schedule<split<j, 8>, unroll<inner<j>>>,
    schedule<vectorize<i>>,                                             // lanes along the output: strided loads
    schedule<split<i, W4>, reorder<j, inner<i>>, vectorize<inner<i>, W4>>,
    schedule<reorder<j, i>>,                                            // the output accumulates
    schedule<reorder<j, i>, vectorize<i, native, tail::masked>>,
    schedule<parallel<i>, vectorize<j>, unroll<outer<j>, 2>>,
    schedule<split<i, 8>, parallel<outer<i>>, vectorize<j, native, tail::masked>>,
    schedule<split<j, 64>, reorder<outer<j>, i>, parallel<outer<j>>, vectorize<inner<j>>>,  // chunked parallel reduction
    schedule<split<i, 3>, large_blocks<i, 10, 2000>, parallel<outer<i>>, vectorize<j>>,  // rows in blocks of 3 or 10
    // reads ahead on every run (MinBytes 0): rows in blocks of 8, along the reduction; and rows ahead
    schedule<split<i, 8>, vectorize<j>, reorder<outer<i>, outer<j>, inner<i>, inner<j>>, parallel<outer<i>>, prefetch<j, 512, 0>>,
    schedule<vectorize<j, native, tail::masked>, prefetch<i, 2, 0>>,
    // so far ahead that the prefetch reads 2 KiB ahead instead: a run-time stride, and a fixed one
    schedule<split<i, 4>, vectorize<j>, reorder<outer<i>, outer<j>, inner<i>, inner<j>>, prefetch<i, 1000000, 0>>,
    schedule<vectorize<j>, unroll<outer<j>, 2>, prefetch<j, -1000000, 0>>,
    // one of two schedules per run: by the bytes touched (4 KB: the small cases take the second),
    // nested, and the first always (0 bytes)
    specialize<touches_at_least<4000>, schedule<split<i, 8>, vectorize<j>, reorder<outer<i>, outer<j>, inner<i>, inner<j>>, prefetch<j, 64, 0>>,
               schedule<vectorize<j, W4>, unroll<outer<j>, 3>>>,
    specialize<touches_at_least<20000>, schedule<parallel<i>, vectorize<j>>,
               specialize<touches_at_least<1000>, schedule<reorder<j, i>>, schedule<split<j, 8>, unroll<inner<j>>>>>,
    specialize<touches_at_least<0>, schedule<split<i, 4>, parallel<outer<i>>, vectorize<j>>, schedule<>>,
    // by a variable's extent, the output's (i) or the reduction's (j): the random shapes fall on both sides
    specialize<extent_at_least<j, 24>, schedule<split<i, 8>, vectorize<j>, reorder<outer<i>, outer<j>, inner<i>, inner<j>>, prefetch<i, 8, 0>>,
               schedule<vectorize<j, W4>, unroll<outer<j>, 4>>>,
    specialize<extent_at_least<i, 9>, specialize<extent_at_least<j, 5>, schedule<parallel<i>, vectorize<j>>, schedule<reorder<j, i>>>,
               schedule<split<j, 8>, unroll<inner<j>>>>>;

using rowmax_schedules = lt::schedule_list<
    auto_schedule,
    schedule<vectorize<j, native, tail::masked>>,
    schedule<vectorize<j, W4, tail::guard>, unroll<outer<j>, 2>>,
    schedule<split<j, 4>, unroll<inner<j>>, parallel<i>>,
    schedule<split<j, 16>, reorder<outer<j>, i>, parallel<outer<j>>, vectorize<inner<j>, W4>>>;

using rowprod_schedules = lt::schedule_list<
    schedule<vectorize<j, native, tail::masked>>,
    schedule<reorder<j, i>, vectorize<i, native, tail::masked>>,
    schedule<split<j, 4>, unroll<inner<j>>>>;

using rowmin_schedules = lt::schedule_list<
    schedule<vectorize<j, W4, tail::masked>, unroll<outer<j>, 3>>,
    schedule<reorder<j, i>, vectorize<i>>>;

using colsum_schedules = lt::schedule_list<
    auto_schedule,
    schedule<>,
    schedule<vectorize<j, native, tail::masked>>,
    schedule<reorder<i, j>>,
    schedule<reorder<i, j>, vectorize<j, native, tail::guard>>,
    schedule<split<j, NF>, reorder<i, inner<j>>, vectorize<inner<j>>>,
    schedule<split<j, 4 * W4>, split<inner<j>, W4>, vectorize<inner<inner<j>>, W4>,
             reorder<outer<j>, i, outer<inner<j>>, inner<inner<j>>>, parallel<outer<j>>>,
    schedule<vectorize<i>>,                                             // lanes along the reduction: strided loads
    schedule<unroll<i, 4>, vectorize<j>>,
    schedule<split<i, 16>, reorder<outer<i>, j>, parallel<outer<i>>, vectorize<j>>,  // chunked parallel reduction
    // strips of 20 or 44 columns by the bytes touched: the output accumulates (no constant trip)
    schedule<split<j, 20>, large_blocks<j, 44, 2000>, reorder<outer<j>, i, inner<j>>, vectorize<inner<j>>>,
    // reads ahead on every run (MinBytes 0): the default's rows streamed, and rows ahead (negative: behind)
    schedule<split<i, 256>, unroll<inner<i>, 8>, reorder<outer<i>, outer<inner<i>>, j, inner<inner<i>>>, vectorize<j>,
             parallel<outer<i>>, prefetch<j, 512, 0>>,
    schedule<unroll<i, 4>, vectorize<j>, prefetch<i, -3, 0>>,
    // the default's three nests out of cache, each chosen by the row length (j's extent)
    specialize<extent_at_least<j, 40>,
               schedule<split<i, 256>, unroll<inner<i>, 8>, reorder<outer<i>, outer<inner<i>>, j, inner<inner<i>>>, vectorize<j>,
                        parallel<outer<i>>, prefetch<i, 8, 0>>,
               specialize<extent_at_least<j, 12>, schedule<split<i, 16>, reorder<outer<i>, inner<i>, j>, vectorize<j>, parallel<outer<i>>>,
                          schedule<split<i, 8>, unroll<inner<i>, 4>, reorder<outer<i>, outer<inner<i>>, j, inner<inner<i>>>,
                                   vectorize<j, W4>, parallel<outer<i>>, prefetch<j, 32, 0>>>>>;

TEST_CASE("schedule matrix: row sums", "[schedules][reduction]") {
  lt::check_schedules<rowred<0>>(rowsum_schedules{}, lt::cases_per_schedule(20));
}
TEST_CASE("schedule matrix: row maxima, products, minima", "[schedules][reduction]") {
  lt::check_schedules<rowred<1>>(rowmax_schedules{}, lt::cases_per_schedule(20));
  lt::check_schedules<rowred<2>>(rowprod_schedules{}, lt::cases_per_schedule(20));
  lt::check_schedules<rowred<3>>(rowmin_schedules{}, lt::cases_per_schedule(20));
}
TEST_CASE("schedule matrix: column sums", "[schedules][reduction]") {
  lt::check_schedules<rowred<4>>(colsum_schedules{}, lt::cases_per_schedule(20));
}

// ---- out(y, x) = sum(ry, rx, in(y + ry, x + rx) * w(ry, rx)) ---------------------------------
struct conv {
  static constexpr const char* name = "out(y, x) = sum(ry, rx, in(y + ry, x + rx) * w(ry, rx))";
  struct data : lt::case_base<float, 2> {
    lt::buffer<float, 2> in, w;
  };
  static data make(lt::rng_t& g) {
    data d;
    const index_t H = lt::case_size(g, 50, 100, 300), W = lt::case_size(g, 70, 100, 300), KH = lt::uniform(g, 1, 5), KW = lt::uniform(g, 1, 7);
    d.in = lt::random_buffer<float, 2>({H + KH - 1, W + KW - 1}, lt::pick_layout(g), "in", g);
    d.w = lt::random_buffer<float, 2>({KH, KW}, lt::pick_layout(g), "w", g);
    d.out = lt::make_buffer<float, 2>({H, W}, lt::pick_layout(g), "out");
    d.ref.assign(static_cast<std::size_t>(H * W), 0.0);
    for (index_t a = 0; a < H; ++a)
      for (index_t b = 0; b < W; ++b)
        for (index_t p = 0; p < KH; ++p)
          for (index_t q = 0; q < KW; ++q) d.ref[std::size_t(a * W + b)] += double(d.in.view(a + p, b + q)) * d.w.view(p, q);
    d.tol = lt::tolerance<float>(KH * KW);
    d.info = lt::str("H = ", H, ", W = ", W, ", kernel ", KH, " x ", KW, "; ", d.in.describe(), "; ", d.w.describe());
    return d;
  }
  static auto def(data& d) { return d.out.view(y, x) = sum(ry, rx, d.in.view(y + ry, x + rx) * d.w.view(ry, rx)); }
};

using conv_schedules = lt::schedule_list<
    auto_schedule,
    schedule<>,
    schedule<vectorize<x, native, tail::masked>>,
    schedule<reorder<y, ry, rx, x>, vectorize<x>>,                      // the output accumulates
    schedule<tile<y, x, 2, 8>, reorder<ry, rx, inner<y>, inner<x>>, vectorize<inner<x>, W4>, parallel<outer<y>>>,
    schedule<unroll<rx, 3>, vectorize<x, native, tail::guard>>,
    schedule<fuse<ry, rx>, vectorize<x>>,
    schedule<vectorize<rx, W4>>,                                        // lanes along a short reduction: mostly masked
    schedule<split<ry, 2>, reorder<outer<ry>, y, x>, parallel<outer<ry>>, vectorize<x>>>;  // chunked over ry

TEST_CASE("schedule matrix: 2-D convolution", "[schedules][reduction][conv]") {
  lt::check_schedules<conv>(conv_schedules{}, lt::cases_per_schedule(16));
}

// ---- out(i) = sum(j, X(i, j)) + maximum(j, X(i, j)): two reductions, evaluated in place -------
struct two_reductions {
  static constexpr const char* name = "out(i) = sum(j, X(i, j)) + maximum(j, X(i, j))";
  struct data : lt::case_base<float, 1> {
    lt::buffer<float, 2> X;
  };
  static data make(lt::rng_t& g) {
    data d;
    const index_t M = lt::case_size(g, 100, 200, 600), N = lt::case_size(g, 100, 200, 600);
    d.X = lt::random_buffer<float, 2>({M, N}, lt::pick_layout(g), "X", g);
    d.out = lt::make_buffer<float, 1>({M}, lt::pick_layout(g), "out");
    for (index_t a = 0; a < M; ++a) {
      double s = 0, m = -INFINITY;
      for (index_t b = 0; b < N; ++b) {
        s += d.X.view(a, b);
        m = std::max(m, double(d.X.view(a, b)));
      }
      d.ref.push_back(s + m);
    }
    d.tol = lt::tolerance<float>(N);
    d.info = lt::str("M = ", M, ", N = ", N, "; ", d.X.describe());
    return d;
  }
  static auto def(data& d) { return d.out.view(i) = sum(j, d.X.view(i, j)) + maximum(j, d.X.view(i, j)); }
};

using two_reductions_schedules = lt::schedule_list<
    auto_schedule,
    schedule<>,
    schedule<vectorize<i, native, tail::masked>>,
    schedule<parallel<i>>,
    schedule<split<i, 4>, unroll<inner<i>>, parallel<outer<i>>>>;

TEST_CASE("schedule matrix: two reductions in one expression", "[schedules][reduction]") {
  lt::check_schedules<two_reductions>(two_reductions_schedules{}, lt::cases_per_schedule(20));
}

}  // namespace
