// tests/test_gemm.cpp — the GEMM engine against a reference accumulated in double: loom::gemm()
// with the default policy and with blocking shrunk so small shapes pass through every blocking
// loop many times, the plain reference micro-kernel, every operand layout, alpha/beta (beta = 0
// never reads C), thread counts (bit-identical results), nesting inside an app's parallel region,
// shape and alias errors (nothing written), and index-notation contractions with fused epilogues.
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;
using lt::idx_t;

namespace {

/// Blocking shrunk to the minimum: MR = 3 rows, one vector of columns, KC = 8, MC = 2 MR,
/// NC = 2 NR, so a 40 x 40 x 40 problem runs 5 KC blocks, 7 MC blocks and 3 NC blocks per thread.
template <class T>
using tiny_policy = loom::gemm_policy<T, 3, 1, 8, 6, 2 * index_t(loom::simd::native_width<T>),
                                      loom::simd::native_width<T>>;

/// Error bound of a K-term dot product computed in T against the double reference: every term
/// and partial sum is rounded at most (K + 2) times, each by at most eps * |term| (Higham 3.1).
template <class T>
double gemm_bound(index_t K, double abs_sum) {
  return double(K + 2) * double(std::numeric_limits<T>::epsilon()) * abs_sum + 1e-30;
}

/// Row r of A times column c of B in double: the sum and the sum of absolute terms (the scale of
/// its rounding error).
struct dot_ref {
  double sum = 0, abs_sum = 0;
  template <class VA, class VB>
  dot_ref(const VA& A, const VB& B, index_t r, index_t c, index_t K) {
    for (index_t q = 0; q < K; ++q) {
      const double t = double(A(r, q)) * double(B(q, c));
      sum += t;
      abs_sum += std::abs(t);
    }
  }
};

struct gemm_case {
  index_t M, N, K;
  double alpha, beta;
};

template <class T>
struct gemm_data {
  lt::buffer<T, 2> A, B, C;
  std::vector<double> ref, bound;
  gemm_case shape;
  std::string info;
};

/// Random operands in random layouts and the double reference of alpha A B + beta C.
template <class T>
gemm_data<T> make_gemm(lt::rng_t& g, gemm_case cs, bool any_layout = true) {
  gemm_data<T> d;
  d.shape = cs;
  auto lay = [&] { return any_layout ? lt::pick_layout(g) : lt::layout::row_major; };
  d.A = lt::random_buffer<T, 2>({cs.M, cs.K}, lay(), "A", g);
  d.B = lt::random_buffer<T, 2>({cs.K, cs.N}, lay(), "B", g);
  d.C = lt::random_buffer<T, 2>({cs.M, cs.N}, lay(), "C", g);
  if (cs.beta == 0) lt::fill(d.C.view, std::numeric_limits<T>::quiet_NaN());  // must not be read
  d.ref.resize(std::size_t(cs.M * cs.N));
  d.bound.resize(d.ref.size());
  for (index_t r = 0; r < cs.M; ++r)
    for (index_t c = 0; c < cs.N; ++c) {
      const dot_ref dot(d.A.view, d.B.view, r, c, cs.K);
      const double c0 = cs.beta == 0 ? 0.0 : double(d.C.view(r, c));
      d.ref[std::size_t(r * cs.N + c)] = cs.alpha * dot.sum + cs.beta * c0;
      d.bound[std::size_t(r * cs.N + c)] = gemm_bound<T>(cs.K, std::abs(cs.alpha) * dot.abs_sum + std::abs(cs.beta * c0));
    }
  d.info = lt::str(lt::type_name<T>(), " M = ", cs.M, ", N = ", cs.N, ", K = ", cs.K, ", alpha = ", cs.alpha,
                   ", beta = ", cs.beta, "; ", d.A.describe(), "; ", d.B.describe(), "; ", d.C.describe());
  return d;
}

/// C against the reference within the K-scaled bound, and nothing outside C's view written.
template <class T>
lt::result check_gemm(const gemm_data<T>& d) {
  lt::result r;
  const auto& C = d.C.view;
  for (index_t a = 0; a < d.shape.M; ++a)
    for (index_t b = 0; b < d.shape.N; ++b) {
      const std::size_t q = std::size_t(a * d.shape.N + b);
      const double got = double(C(a, b));
      if (!(std::abs(got - d.ref[q]) <= d.bound[q])) {
        if (r.mismatches++ == 0)
          r.message = lt::str("C(", a, ", ", b, ") = ", got, ", expected ", d.ref[q], " (bound ", d.bound[q], ")");
      }
    }
  if (r.mismatches) {
    r.ok = false;
    r.message += lt::str("; ", r.mismatches, " of ", d.shape.M * d.shape.N, " elements differ");
    return r;
  }
  return d.C.untouched();
}

template <class T>
gemm_case random_case(lt::rng_t& g, index_t hi) {
  static const double alphas[] = {1.0, -0.5, 2.0};
  static const double betas[] = {0.0, 0.0, 1.0, -0.75};
  const auto pick = [&](const auto& arr) {
    return arr[std::size_t(lt::uniform(g, 0, index_t(std::size(arr)) - 1))];
  };
  const index_t lo = lt::coin(g, 0.05) ? 0 : 1;  // now and then an empty dimension
  return {lt::pick_size(g, hi, lo), lt::pick_size(g, hi, lo), lt::pick_size(g, hi, lo), pick(alphas), pick(betas)};
}

template <class Policy, class T>
void random_gemms(const char* key, int cases, index_t hi) {
  auto g = lt::make_rng(key);
  for (int n = 0, all = lt::cases_per_schedule(cases); n < all; ++n) {
    auto d = make_gemm<T>(g, random_case<T>(g, hi));
    loom::gemm<Policy>(d.C.view, d.A.view, d.B.view, T(d.shape.alpha), T(d.shape.beta));
    const auto r = check_gemm(d);
    INFO(d.info);
    REQUIRE(r.ok);
  }
}

}  // namespace

TEST_CASE("gemm: default policy, random shapes and layouts", "[gemm]") {
  random_gemms<void, float>("gemm default float", 150, 200);
  random_gemms<void, double>("gemm default double", 100, 200);
}

TEST_CASE("gemm: blocking shrunk so every blocking loop runs many times", "[gemm]") {
  random_gemms<tiny_policy<float>, float>("gemm tiny float", 250, 70);
  random_gemms<tiny_policy<double>, double>("gemm tiny double", 150, 70);
}

TEST_CASE("gemm: every edge of MR, NR, KC, MC, NC of the default policy", "[gemm]") {
  using P = loom::default_gemm_policy<float>;
  const index_t W = P::W, NR = P::NR;
  auto g = lt::make_rng("gemm edges");
  // Sizes at and around each blocking boundary (in their own dimension; others small).
  for (index_t m : {index_t(1), P::MR - 1, P::MR, P::MR + 1, P::MC - 1, P::MC, P::MC + 1})
    for (index_t n : {index_t(1), W - 1, W + 1, NR - 1, NR, NR + 1}) {
      auto d = make_gemm<float>(g, {m, n, 17, 1.0, 0.0});
      loom::gemm<P>(d.C.view, d.A.view, d.B.view);  // P given: the packed engine even when small
      INFO(d.info);
      REQUIRE(check_gemm(d).ok);
    }
  for (index_t kk : {P::KC - 1, P::KC, P::KC + 1, 2 * P::KC + 3}) {
    auto d = make_gemm<float>(g, {5, NR + 3, kk, 1.0, 1.0});
    loom::gemm<P>(d.C.view, d.A.view, d.B.view, 1.f, 1.f);
    INFO(d.info);
    REQUIRE(check_gemm(d).ok);
  }
  {
    auto d = make_gemm<float>(g, {3, P::NC + NR + 1, 2, -0.5, 0.0}, false);
    loom::gemm<P>(d.C.view, d.A.view, d.B.view, -0.5f, 0.f);
    INFO(d.info);
    REQUIRE(check_gemm(d).ok);
  }
}

TEST_CASE("gemm: A read in place, B packed sliver by sliver, the short-sliver kernel", "[gemm]") {
  // Row-major A whose slivers meet 1 to 5 slivers of B (read in place up to 4, or 2 when the rows
  // are a multiple of 4 KiB apart: K = 1024 floats), M <= 12 MR (B packed per sliver, the next
  // one prefetched) with a last sliver of A both shorter and longer than edge_rows, and last
  // slivers of 1 or 2 rows, which are merged with the sliver before and split in halves.
  using P = loom::default_gemm_policy<float>;
  auto g = lt::make_rng("gemm in place");
  for (index_t kk : {index_t(300), index_t(1024)})
    for (index_t m : {P::MR + 2, 2 * P::MR + 1, 2 * P::MR + P::edge_rows, 2 * P::MR + P::edge_rows + 1, 3 * P::MR})
      for (index_t n : {index_t(1), P::NR, 2 * P::NR + 3, 4 * P::NR, 4 * P::NR + 1})
        for (int t : {1, 2}) {
          auto d = make_gemm<float>(g, {m, n, kk, 1.0, 1.0}, false);
          lt::thread_scope threads(t);
          loom::gemm<P>(d.C.view, d.A.view, d.B.view, 1.f, 1.f);
          INFO(d.info << ", threads = " << t);
          REQUIRE(check_gemm(d).ok);
        }
}

TEST_CASE("gemm: each sliver of B packed by the micro-kernels of the one before", "[gemm]") {
  // M <= min(12 MR, MC): the kernels of one B sliver copy the next into the other sliver buffer;
  // M = an odd number of slivers above MC: into the thread's own part of the panel (one row part:
  // at 2 threads with 2 or 4 B slivers the grid is 1 x 2), during its first block of rows only. Each call
  // copies an equal share of the rows, asking for rows next_sliver::ahead ahead. K around that
  // distance and below the number of calls (some calls copy no row), a last sliver of B narrower
  // than NR (packed the old way), B in every layout (column-major and negative strides are never
  // streamed; offset rows are read unaligned), and both thread counts.
  using P = loom::default_gemm_policy<float>;
  constexpr index_t ahead = loom::gemm_detail::next_sliver<float>::ahead;
  auto g = lt::make_rng("gemm streamed B");
  const index_t odd_above_mc = (2 * (P::MC / P::MR / 2) + 3) * P::MR;
  for (index_t kk : {index_t(1), index_t(3), ahead - 1, ahead, ahead + 1, index_t(97), P::KC + 5})
    for (index_t m : {index_t(1), P::MR, 4 * P::MR + P::edge_rows, std::min(12 * P::MR, P::MC), odd_above_mc})
      for (index_t n : {2 * P::NR, 3 * P::NR + 5, 4 * P::NR})
        for (int t : {1, 2}) {
          auto d = make_gemm<float>(g, {m, n, kk, 1.0, 0.0});
          lt::thread_scope threads(t);
          loom::gemm<P>(d.C.view, d.A.view, d.B.view);  // P given: the packed engine even when small
          INFO(d.info << ", threads = " << t);
          REQUIRE(check_gemm(d).ok);
        }
}

TEST_CASE("gemm: threads alone on their columns pack their own panel slivers, K blocks of unequal length", "[gemm][threads]") {
  // The tiny policy at 2 threads: 33 slivers of A rows (M > MC = 6) and panels of 2 B slivers
  // make a 1 x 2 grid, so each thread packs its own panel slivers, with no barrier between K
  // blocks. K = 37 KC + 5 ends each panel on a short block: one thread may pack a long block's
  // sliver of the next panel while the other still reads a short one's, so slivers sit the same
  // distance apart in every block (a layout by each block's kc made them overlap; seen as wrong
  // sums with clang's OpenMP runtime).
  using P = tiny_policy<float>;
  auto g = lt::make_rng("gemm own panel");
  lt::thread_scope threads(2);
  for (int n = 0; n < 12; ++n) {
    auto d = make_gemm<float>(g, {33 * P::MR, 4 * P::NR + 6, 37 * P::KC + 5, 1.0, n % 2 ? 1.0 : 0.0}, false);
    loom::gemm<P>(d.C.view, d.A.view, d.B.view, 1.f, float(d.shape.beta));
    INFO(d.info);
    REQUIRE(check_gemm(d).ok);
  }
}

TEST_CASE("gemm: the plain reference micro-kernel agrees with the reference", "[gemm]") {
  auto g = lt::make_rng("gemm plain kernel");
  using P = tiny_policy<float>;
  for (int n = 0; n < 80; ++n) {
    // From case 60 on, at most MC = 6 rows: B packed per sliver, the next one copied by the kernel.
    gemm_case cs = random_case<float>(g, 50);
    if (n >= 60) cs.M = std::min<index_t>(cs.M, 6);
    auto d = make_gemm<float>(g, cs);
    const auto pb = loom::gemm_detail::make_problem<float>(d.C.view, d.A.view, d.B.view, float(d.shape.alpha),
                                                           float(d.shape.beta), true);
    loom::gemm_detail::run_packed<P, loom::gemm_detail::plain_kernel>(pb);
    INFO(d.info);
    REQUIRE(check_gemm(d).ok);
  }
}

TEST_CASE("gemm: results do not depend on the thread count", "[gemm][threads]") {
  auto g = lt::make_rng("gemm threads");
  for (auto cs : {gemm_case{301, 257, 129, 1.0, 0.0}, gemm_case{64, 1000, 300, 2.0, 1.0}, gemm_case{700, 40, 80, 1.0, 0.0}}) {
    auto d = make_gemm<float>(g, cs, false);
    std::vector<std::vector<float>> results;
    for (int t : {1, 2, 3}) {
      lt::thread_scope threads(t);
      loom::Tensor<float, 2> C(cs.M, cs.N);
      for (index_t a = 0; a < cs.M; ++a)
        for (index_t b = 0; b < cs.N; ++b) C(a, b) = d.C.view(a, b);
      loom::gemm(C, d.A.view, d.B.view, float(cs.alpha), float(cs.beta));
      results.emplace_back(C.data(), C.data() + cs.M * cs.N);
    }
    INFO(d.info);
    CHECK(results[0] == results[1]);
    CHECK(results[0] == results[2]);
    loom::gemm(d.C.view, d.A.view, d.B.view, float(cs.alpha), float(cs.beta));
    REQUIRE(check_gemm(d).ok);
  }
}

TEST_CASE("gemm: called from inside an application's parallel region", "[gemm][threads]") {
  // Each application thread runs its own GEMM; loom must not start a nested team or share scratch.
  constexpr int calls = 4;
  std::vector<gemm_data<float>> data;
  auto g = lt::make_rng("gemm nested");
  for (int n = 0; n < calls; ++n) data.push_back(make_gemm<float>(g, {150 + n, 130, 140, 1.0, 0.0}, false));
#pragma omp parallel for num_threads(2) schedule(static, 1)
  for (int n = 0; n < calls; ++n) loom::gemm(data[std::size_t(n)].C.view, data[std::size_t(n)].A.view, data[std::size_t(n)].B.view);
  for (auto& d : data) {
    INFO(d.info);
    REQUIRE(check_gemm(d).ok);
  }
}

TEST_CASE("gemm: bad shapes and overlapping operands throw before anything is written", "[gemm][errors]") {
  loom::Tensor<float, 2> A("A", 5, 7), B("B", 7, 3), C("C", 5, 3), Bw("Bw", 6, 3), Cw("Cw", 4, 3), Cn("Cn", 5, 4);
  for (auto* t : {&A, &B, &C, &Bw, &Cw, &Cn})
    for (index_t a = 0; a < t->extent(0); ++a)
      for (index_t b = 0; b < t->extent(1); ++b) (*t)(a, b) = 42.f;
  auto all_42 = [](const loom::Tensor<float, 2>& t) {
    for (index_t a = 0; a < t.extent(0); ++a)
      for (index_t b = 0; b < t.extent(1); ++b)
        if (t(a, b) != 42.f) return false;
    return true;
  };
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const loom::shape_error& e) {
      return std::string(e.what());
    }
    return std::string("no shape_error");
  };
  const auto m1 = message([&] { loom::gemm(C, A, Bw); });
  CHECK_THAT(m1, Catch::Contains("'Bw'") && Catch::Contains("dimension 0") && Catch::Contains("6") &&
                     Catch::Contains("7"));
  const auto m2 = message([&] { loom::gemm(Cw, A, B); });
  CHECK_THAT(m2, Catch::Contains("'A'") && Catch::Contains("'Cw'") && Catch::Contains("5") && Catch::Contains("4"));
  const auto m3 = message([&] { loom::gemm(Cn, A, B); });
  CHECK_THAT(m3, Catch::Contains("'B'") && Catch::Contains("dimension 1") && Catch::Contains("'Cn'"));
  CHECK(all_42(C));
  CHECK(all_42(Cw));
  CHECK(all_42(Cn));

  // C overlapping an operand: an alias_error (index notation makes this case correct instead).
  loom::Tensor<float, 2> S("S", 6, 6);
  for (index_t a = 0; a < 6; ++a)
    for (index_t b = 0; b < 6; ++b) S(a, b) = 42.f;
  CHECK_THROWS_AS(loom::gemm(S.block({0, 0}, {3, 3}), S.block({3, 3}, {3, 3}), S.block({2, 0}, {3, 3})),
                  loom::alias_error);
  CHECK(all_42(S));
  // Disjoint blocks of one tensor are fine.
  loom::gemm(S.block({0, 0}, {3, 3}), S.block({3, 3}, {3, 3}), S.block({3, 0}, {3, 3}));
  CHECK(S(0, 0) == 3 * 42.f * 42.f);
  CHECK(S(3, 3) == 42.f);

  // Empty problems are no-ops (K = 0 with beta = 0 writes zeros).
  loom::Tensor<float, 2> A0("A0", 4, 0), B0("B0", 0, 3), C0("C0", 4, 3);
  loom::gemm(C0, A0, B0);
  CHECK(C0(3, 2) == 0.f);
}

// ---------------------------------------------------------------------------------------------
// Index notation: contractions run on the engine with the expression around them fused.
// ---------------------------------------------------------------------------------------------
namespace {

template <class T>
struct notation_case {
  index_t M, N, K;
  lt::buffer<T, 2> A, B, C;
  lt::buffer<T, 1> bias, scale;
  std::string info;
};

template <class T>
notation_case<T> make_notation(lt::rng_t& g, index_t hi) {
  notation_case<T> d;
  d.M = lt::pick_size(g, hi);
  d.N = lt::pick_size(g, hi);
  d.K = lt::pick_size(g, hi);
  d.A = lt::random_buffer<T, 2>({d.M, d.K}, lt::pick_layout(g), "A", g);
  d.B = lt::random_buffer<T, 2>({d.K, d.N}, lt::pick_layout(g), "B", g);
  d.C = lt::random_buffer<T, 2>({d.M, d.N}, lt::pick_layout(g), "C", g);
  d.bias = lt::random_buffer<T, 1>({d.N}, lt::pick_layout(g), "bias", g);
  d.scale = lt::random_buffer<T, 1>({d.M}, lt::pick_layout(g), "scale", g);
  d.info = lt::str(lt::type_name<T>(), " M = ", d.M, ", N = ", d.N, ", K = ", d.K, "; ", d.A.describe(), "; ",
                   d.B.describe(), "; ", d.C.describe());
  return d;
}

/// Runs `def` and checks C(a, b) against f(dot(a, b), |dot|(a, b), C0(a, b), a, b) with the GEMM
/// bound scaled by `gain` (the epilogue's largest derivative) plus a few ulps for its own rounding.
template <class T, class Def, class F>
void check_notation(notation_case<T>& d, Def&& def, F&& f, double gain = 1.0) {
  std::vector<double> c0(std::size_t(d.M * d.N));
  for (index_t a = 0; a < d.M; ++a)
    for (index_t b = 0; b < d.N; ++b) c0[std::size_t(a * d.N + b)] = double(d.C.view(a, b));
  loom::run(std::forward<Def>(def));
  lt::result r;
  for (index_t a = 0; a < d.M; ++a)
    for (index_t b = 0; b < d.N; ++b) {
      const dot_ref dot(d.A.view, d.B.view, a, b, d.K);
      const double want = f(dot.sum, c0[std::size_t(a * d.N + b)], a, b);
      const double bound = gain * gemm_bound<T>(d.K, dot.abs_sum + std::abs(c0[std::size_t(a * d.N + b)])) +
                           8 * double(std::numeric_limits<T>::epsilon()) * std::max(1.0, std::abs(want));
      const double got = double(d.C.view(a, b));
      if (!(std::abs(got - want) <= bound) && r.mismatches++ == 0)
        r.message = lt::str("C(", a, ", ", b, ") = ", got, ", expected ", want, " (bound ", bound, ")");
    }
  INFO(d.info);
  INFO(r.message);
  REQUIRE(r.mismatches == 0);
  REQUIRE(d.C.untouched().ok);
}

template <class T>
void notation_suite(const char* key, int cases) {
  auto g = lt::make_rng(key);
  for (int n = 0; n < cases; ++n) {
    auto d = make_notation<T>(g, 150);
    auto& A = d.A.view;
    auto& B = d.B.view;
    auto& C = d.C.view;
    auto& bias = d.bias.view;
    auto& scale = d.scale.view;
    const T alpha = T(0.75);
    switch (n % 6) {
      case 0:
        check_notation(d, C(i, j) = sum(k, A(i, k) * B(k, j)), [](double s, double, index_t, index_t) { return s; });
        break;
      case 1:
        check_notation(d, C(i, j) = max(sum(k, A(i, k) * B(k, j)) * alpha + bias(j), T(0)),
                       [&](double s, double, index_t, index_t b) { return std::max(s * 0.75 + double(bias(b)), 0.0); });
        break;
      case 2:
        check_notation(d, C(i, j) += sum(k, A(i, k) * B(k, j)),
                       [](double s, double c0, index_t, index_t) { return c0 + s; });
        break;
      case 3:
        // Operands in the other order, a row broadcast and the old C read in the epilogue.
        check_notation(d, C(i, j) = scale(i) * sum(k, B(k, j) * A(i, k)) - C(i, j),
                       [&](double s, double c0, index_t a, index_t) { return double(scale(a)) * s - c0; });
        break;
      case 4:
        check_notation(d, C(i, j) = sigmoid(sum(k, A(i, k) * B(k, j))),
                       [](double s, double, index_t, index_t) { return 1.0 / (1.0 + std::exp(-s)); }, 0.25);
        break;
      case 5:
        check_notation(d, C(i, j) = sum(k, A(i, k) * B(k, j)) + bias(j) * T(2),
                       [&](double s, double, index_t, index_t b) { return s + 2.0 * double(bias(b)); });
        break;
    }
  }
}

}  // namespace

TEST_CASE("gemm: index-notation contractions with fused epilogues", "[gemm][notation]") {
  notation_suite<float>("gemm notation float", 120);
  notation_suite<double>("gemm notation double", 60);
}

TEST_CASE("gemm: index notation with the output transposed, a demanded engine, and an aliased output",
          "[gemm][notation]") {
  auto g = lt::make_rng("gemm notation special");
  for (int n = 0; n < 30; ++n) {
    const index_t M = lt::pick_size(g, 100), N = lt::pick_size(g, 100), K = lt::pick_size(g, 100);
    auto A = lt::random_buffer<float, 2>({M, K}, lt::pick_layout(g), "A", g);
    auto B = lt::random_buffer<float, 2>({K, N}, lt::pick_layout(g), "B", g);
    auto D = lt::random_buffer<float, 2>({M, N}, lt::pick_layout(g), "D", g);
    auto Ct = lt::make_buffer<float, 2>({N, M}, lt::pick_layout(g), "Ct");
    auto C = lt::make_buffer<float, 2>({M, N}, lt::pick_layout(g), "C");
    auto& a = A.view;
    auto& b = B.view;
    INFO(lt::str("M = ", M, ", N = ", N, ", K = ", K, "; ", A.describe(), "; ", B.describe(), "; ", Ct.describe()));
    // The output indexed (j, i): its rows are the product's columns.
    loom::run(Ct.view(j, i) = sum(k, a(i, k) * b(k, j)));
    // gemm_schedule demands the engine; the default policy shrunk to the tiny one.
    loom::run<loom::gemm_schedule<tiny_policy<float>>>(C.view(i, j) = sum(k, a(i, k) * b(k, j)) - D.view(i, j));
    for (index_t r = 0; r < M; ++r)
      for (index_t c = 0; c < N; ++c) {
        const dot_ref dot(a, b, r, c, K);
        const double bound = gemm_bound<float>(K, dot.abs_sum + 1) + 1e-6;
        REQUIRE(std::abs(double(Ct.view(c, r)) - dot.sum) <= bound);
        REQUIRE(std::abs(double(C.view(r, c)) - (dot.sum - double(D.view(r, c)))) <= bound);
      }
    REQUIRE(Ct.untouched().ok);
    REQUIRE(C.untouched().ok);
  }
  // S = S B reads the output at other indices than it writes: made correct (not the engine's
  // in-place overwrite).
  for (index_t n : {index_t(1), index_t(7), index_t(40)}) {
    loom::Tensor<double, 2> S("S", n, n), B("B", n, n), S0("S0", n, n);
    auto g2 = lt::make_rng(lt::str("gemm aliased ", n));
    lt::fill_random(S.as_view(), g2);
    lt::fill_random(B.as_view(), g2);
    for (index_t r = 0; r < n; ++r)
      for (index_t c = 0; c < n; ++c) S0(r, c) = S(r, c);
    loom::run(S(i, j) = sum(k, S(i, k) * B(k, j)));
    for (index_t r = 0; r < n; ++r)
      for (index_t c = 0; c < n; ++c) {
        REQUIRE(std::abs(S(r, c) - dot_ref(S0, B, r, c, n).sum) <= 1e-12 * double(n));
      }
    // `+=` with the output as the right operand, and an epilogue reading the output transposed.
    for (index_t r = 0; r < n; ++r)
      for (index_t c = 0; c < n; ++c) S(r, c) = S0(r, c);
    loom::run(S(i, j) += sum(k, B(i, k) * S(k, j)));
    for (index_t r = 0; r < n; ++r)
      for (index_t c = 0; c < n; ++c) {
        double ref = S0(r, c);
        for (index_t q = 0; q < n; ++q) ref += B(r, q) * S0(q, c);
        REQUIRE(std::abs(S(r, c) - ref) <= 1e-12 * double(n + 1));
      }
    for (index_t r = 0; r < n; ++r)
      for (index_t c = 0; c < n; ++c) S(r, c) = S0(r, c);
    loom::run(S(i, j) = max(sum(k, B(i, k) * B(k, j)) + S(j, i), 0.0));
    for (index_t r = 0; r < n; ++r)
      for (index_t c = 0; c < n; ++c) {
        const double ref = std::max(dot_ref(B, B, r, c, n).sum + S0(c, r), 0.0);
        REQUIRE(std::abs(S(r, c) - ref) <= 1e-12 * double(n + 1));
      }
  }
}

TEST_CASE("gemm: bad shapes in index notation throw before the engine writes", "[gemm][errors][notation]") {
  loom::Tensor<float, 2> A("A", 5, 7), B("B", 6, 3), C("C", 5, 3);
  for (index_t a = 0; a < 5; ++a)
    for (index_t b = 0; b < 3; ++b) C(a, b) = 1.f;
  CHECK_THROWS_AS(loom::run(C(i, j) = sum(k, A(i, k) * B(k, j))), loom::shape_error);
  try {
    loom::run(C(i, j) = sum(k, A(i, k) * B(k, j)));
  } catch (const loom::shape_error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("k") && Catch::Contains("6") && Catch::Contains("7"));
  }
  for (index_t a = 0; a < 5; ++a)
    for (index_t b = 0; b < 3; ++b) CHECK(C(a, b) == 1.f);
}

// ---------------------------------------------------------------------------------------------
// Static small shapes: the unpacked path (row-major B and C; dense A with compile-time strides, or
// a column-major A with run-time ones) and the fallback (a transposed B).
// ---------------------------------------------------------------------------------------------
namespace {

/// An epilogue for loom::gemm that depends on the row and on each lane's column:
/// max(v, 0) * (1 + i % 3) + j / 4 (so each lane must see its own i and j).
struct row_col_epilogue {
  template <class B>
  B apply(const B& v, index_t i, index_t j, index_t) const {
    using T = typename B::value_type;
    alignas(64) std::array<T, B::size> cols{};
    for (std::size_t l = 0; l < B::size; ++l) cols[l] = T(j + index_t(l)) / T(4);
    return xsimd::max(v, B(T(0))) * B(T(1 + i % 3)) + B::load_aligned(cols.data());
  }
  static double scalar(double v, index_t i, index_t j) { return std::max(v, 0.0) * double(1 + i % 3) + double(j) / 4; }
};

/// The reference of d passed through row_col_epilogue.
template <class T>
void apply_row_col_epilogue(gemm_data<T>& d) {
  for (index_t r = 0; r < d.shape.M; ++r)
    for (index_t c = 0; c < d.shape.N; ++c) {
      const std::size_t q = std::size_t(r * d.shape.N + c);
      d.ref[q] = row_col_epilogue::scalar(d.ref[q], r, c);
      // The epilogue scales errors by at most 3 and rounds twice more.
      d.bound[q] = 3 * d.bound[q] + 4 * std::numeric_limits<T>::epsilon() * std::abs(d.ref[q]);
    }
}

template <class T, index_t M, index_t N, index_t K>
void static_case(lt::rng_t& g, bool transposed_b, bool a_col_major, double alpha, double beta,
                 bool with_epilogue = false) {
  auto d = make_gemm<T>(g, {M, N, K, alpha, beta}, false);
  if (with_epilogue) apply_row_col_epilogue(d);
  using EA = loom::extents<M, K>;
  using EB = loom::extents<K, N>;
  using EC = loom::extents<M, N>;
  // A column-major (a copy): the small path with run-time strides instead of the dense one.
  std::vector<T> at(std::size_t(M * K));
  for (index_t r = 0; r < M; ++r)
    for (index_t c = 0; c < K; ++c) at[std::size_t(c * M + r)] = d.A.view(r, c);
  loom::TensorView<T, 2, EA> A = a_col_major ? loom::TensorView<T, 2, EA>(at.data(), EA{}, {1, M}, loom::tensor_name("A"))
                                             : loom::TensorView<T, 2, EA>(d.A.view.data(), EA{}, {K, 1}, loom::tensor_name("A"));
  loom::TensorView<T, 2, EC> C(d.C.view.data(), EC{}, {N, 1}, loom::tensor_name("C"));
  // A transposed B: the same values stored column-major in a copy.
  std::vector<T> bt(std::size_t(K * N));
  for (index_t r = 0; r < K; ++r)
    for (index_t c = 0; c < N; ++c) bt[std::size_t(c * K + r)] = d.B.view(r, c);
  loom::TensorView<T, 2, EB> B = transposed_b ? loom::TensorView<T, 2, EB>(bt.data(), EB{}, {1, K}, loom::tensor_name("B"))
                                              : loom::TensorView<T, 2, EB>(d.B.view.data(), EB{}, {N, 1}, loom::tensor_name("B"));
  // Whether the shape fits the registers depends on the target (N = 64 floats does with AVX-512's
  // 32 registers, not with AVX2's 16); the shapes that fit everywhere are asserted below.
  constexpr bool small = loom::gemm_detail::small_static<decltype(C), decltype(A), decltype(B)>;
  if (with_epilogue) loom::gemm(C, A, B, T(alpha), T(beta), row_col_epilogue{});
  else loom::gemm(C, A, B, T(alpha), T(beta));
  INFO(d.info << (transposed_b ? " (B column-major: packed fallback)" : small ? " (static small path)" : " (too wide for this target's registers: packed)")
              << (a_col_major ? ", A column-major" : "") << (with_epilogue ? ", with an epilogue" : ""));
  REQUIRE(check_gemm(d).ok);
}

}  // namespace

TEST_CASE("gemm: static small shapes run unpacked and agree with the reference", "[gemm][static]") {
  auto g = lt::make_rng("gemm static");
  for (int layout = 0; layout < 3; ++layout) {
    const bool tb = layout == 1, acm = layout == 2;
    // The small path's three ways to finish a vector: store, scale by alpha, combine with beta C.
    for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-1.5, 0.0}, std::pair{-0.5, 1.0}, std::pair{2.0, -0.75}}) {
      static_case<float, 1, 1, 1>(g, tb, acm, alpha, beta);
      static_case<float, 16, 16, 16>(g, tb, acm, alpha, beta);
      static_case<float, 32, 32, 32>(g, tb, acm, alpha, beta);
      static_case<float, 64, 64, 64>(g, tb, acm, alpha, beta);
      static_case<float, 7, 13, 5>(g, tb, acm, alpha, beta);
      static_case<float, 33, 17, 64>(g, tb, acm, alpha, beta);
      static_case<float, 64, 1, 3>(g, tb, acm, alpha, beta);
      static_case<float, 5, 63, 2>(g, tb, acm, alpha, beta);
      static_case<double, 16, 16, 16>(g, tb, acm, alpha, beta);
      static_case<double, 29, 31, 37>(g, tb, acm, alpha, beta);
      static_case<double, 64, 64, 64>(g, tb, acm, alpha, beta);
    }
  }
  // An epilogue on the small path (and on the packed fallback), row blocks of R and R - 1 rows.
  for (int layout = 0; layout < 2; ++layout)
    for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{2.0, -0.75}}) {
      static_case<float, 64, 64, 64>(g, layout == 1, false, alpha, beta, true);
      static_case<float, 33, 17, 29>(g, layout == 1, false, alpha, beta, true);
      static_case<double, 23, 9, 11>(g, layout == 1, false, alpha, beta, true);
    }
  // Shapes whose rows of C take at most 3 vectors fit 16 vector registers: the small path on any
  // x86-64 target with AVX2 or better (so the cases above do exercise it everywhere).
  static_assert(loom::gemm_detail::small_static<loom::TensorView<float, 2, loom::extents<33, 17>>,
                                                loom::TensorView<float, 2, loom::extents<33, 64>>,
                                                loom::TensorView<float, 2, loom::extents<64, 17>>>);
  static_assert(loom::gemm_detail::small_static<loom::TensorView<double, 2, loom::extents<16, 16>>,
                                                loom::TensorView<double, 2, loom::extents<16, 16>>,
                                                loom::TensorView<double, 2, loom::extents<16, 16>>>);
  // Beyond 64 the packed engine runs, static or not.
  static_assert(!loom::gemm_detail::small_static<loom::TensorView<float, 2, loom::extents<65, 8>>,
                                                 loom::TensorView<float, 2, loom::extents<65, 8>>,
                                                 loom::TensorView<float, 2, loom::extents<8, 8>>>);
}

// ---------------------------------------------------------------------------------------------
// The run-time small path (kernels/gemm/small_dynamic.hpp): no policy given, run-time extents,
// N <= 4 vectors, M N K <= 64^3, B and C with unit column strides; M below a block padded.
// ---------------------------------------------------------------------------------------------
namespace {

template <class T>
void dynamic_small_cases(const char* key) {
  using shape = loom::gemm_detail::small_dynamic_shape<T>;
  const index_t W = shape::W;
  auto g = lt::make_rng(key);
  static const double alphas[] = {1.0, 1.0, -1.5, 2.0};
  static const double betas[] = {0.0, 0.0, 1.0, -0.75};
  int on_path = 0, cases = 0;
  // N around every vector boundary up to 4 W; M around the row blocks of every NV (16, 8, 4 rows
  // with AVX-512: whole blocks, a shifted last block, fewer rows than a block, padded); K from 0.
  for (index_t n : {index_t(1), index_t(3), W - 1, W, W + 1, 2 * W - 1, 2 * W, 2 * W + 3, 3 * W, 3 * W + 1,
                    4 * W - 1, 4 * W})
    for (index_t m : {index_t(1), index_t(3), index_t(4), index_t(5), index_t(7), index_t(8), index_t(9), index_t(15),
                      index_t(16), index_t(17), index_t(23), index_t(31), index_t(33), index_t(47), index_t(64)})
      for (index_t kk : {index_t(0), index_t(1), index_t(7), index_t(16), index_t(29), index_t(64)}) {
        const double alpha = alphas[std::size_t(lt::uniform(g, 0, 3))], beta = betas[std::size_t(lt::uniform(g, 0, 3))];
        const bool epilogue = ++cases % 3 == 0;
        auto d = make_gemm<T>(g, {m, n, kk, alpha, beta});
        if (epilogue) apply_row_col_epilogue(d);
        // Whether this case runs on the path (a column-major C without epilogue is computed as C^T).
        const auto pb = loom::gemm_detail::make_problem<T>(d.C.view, d.A.view, d.B.view, T(alpha), T(beta), !epilogue);
        on_path += pb.b.cs == 1 && pb.c.cs == 1 && shape::fits(pb.M, pb.N, pb.K);
        if (epilogue) loom::gemm(d.C.view, d.A.view, d.B.view, T(alpha), T(beta), row_col_epilogue{});
        else loom::gemm(d.C.view, d.A.view, d.B.view, T(alpha), T(beta));
        INFO(d.info << (epilogue ? ", with an epilogue" : ""));
        REQUIRE(check_gemm(d).ok);
      }
  INFO(on_path << " of " << cases << " cases ran on the small run-time path");
  CHECK(on_path > cases / 4);
}

}  // namespace

TEST_CASE("gemm: small run-time shapes run unpacked and agree with the reference", "[gemm][small]") {
  dynamic_small_cases<float>("gemm small dynamic float");
  dynamic_small_cases<double>("gemm small dynamic double");
}

TEST_CASE("gemm: small run-time shapes through index notation, with an epilogue and +=", "[gemm][small][notation]") {
  auto g = lt::make_rng("gemm small notation");
  for (index_t m : {index_t(16), index_t(21)})
    for (index_t n : {index_t(5), index_t(16), index_t(40)}) {
      const index_t kk = 13;
      auto A = lt::random_buffer<float, 2>({m, kk}, lt::layout::row_major, "A", g);
      auto B = lt::random_buffer<float, 2>({kk, n}, lt::layout::row_major, "B", g);
      auto bias = lt::random_buffer<float, 1>({n}, lt::layout::row_major, "bias", g);
      loom::Tensor<float, 2> C("C", m, n), D("D", m, n);
      for (index_t r = 0; r < m; ++r)
        for (index_t c = 0; c < n; ++c) D(r, c) = float(r - c);
      loom::run(C(i, j) = max(sum(k, A.view(i, k) * B.view(k, j)) + bias.view(j), 0.f));
      loom::run(D(i, j) += sum(k, A.view(i, k) * B.view(k, j)));
      for (index_t r = 0; r < m; ++r)
        for (index_t c = 0; c < n; ++c) {
          const dot_ref dot(A.view, B.view, r, c, kk);
          // The bias and the old D are one more term of the sum each (K + 1 roundings).
          const double b = double(bias.view(c)), d0 = double(r - c);
          INFO("M = " << m << ", N = " << n << ", C(" << r << ", " << c << ")");
          REQUIRE(std::abs(double(C(r, c)) - std::max(dot.sum + b, 0.0)) <= gemm_bound<float>(kk + 1, dot.abs_sum + std::abs(b)));
          REQUIRE(std::abs(double(D(r, c)) - (dot.sum + d0)) <= gemm_bound<float>(kk + 1, dot.abs_sum + std::abs(d0)));
        }
    }
}
