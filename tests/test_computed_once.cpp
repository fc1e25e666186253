// tests/test_computed_once.cpp — values loom computes once instead of at every vector. Parts of a
// right side that a strip computes once per row (lower/invariant.hpp): a row's `sqrt(v(i) + eps)`,
// a let whose value is fixed along the row, an integer division by a per-row divisor (zero and -1
// included). An operand written twice in a definition with hoisted reductions (a variance's
// `(X - mean) * (X - mean)`: pipeline/repeated.hpp), bound once only when the run finds both the
// same. A reduction's body the definition computes again (a one-definition softmax's exponentials:
// pipeline/body_stage.hpp), a stage of its own only when the run finds both the same. Each against a plain loop, over shapes around every vector width, in every layout, through
// the default schedule and schedules whose strips fix one, two or no variables; and
// print_loop_nest's account of both.
#include <climits>
#include <cmath>

#include "support.hpp"

using loom::index_t;
using namespace loom::vars;

namespace {

using lt::idx_t;

/// The schedules every case runs through: the default, plain lanes along j (a strip per row),
/// masked tails with rows in parallel, rows unrolled outside the strip, lanes along i (the
/// strip fixes j), and no lanes at all (nothing is hoisted: the reference for the rest).
template <class Build>
void each_schedule(Build&& build_and_check) {
  using namespace loom;
  build_and_check("default", [](const auto& def) { loom::run(def); });
  build_and_check("vectorize<j>", [](const auto& def) { loom::run<schedule<vectorize<j>>>(def); });
  build_and_check("masked, parallel<i>",
                  [](const auto& def) { loom::run<schedule<vectorize<j, 0, tail::masked>, parallel<i>>>(def); });
  build_and_check("split<i, 3>, unroll<inner<i>>", [](const auto& def) {
    loom::run<schedule<split<i, 3>, vectorize<j, 0, tail::guard>, reorder<outer<i>, inner<i>, outer<j>, inner<j>>, unroll<inner<i>>>>(def);
  });
  build_and_check("lanes along i", [](const auto& def) { loom::run<schedule<reorder<j, i>, vectorize<i>>>(def); });
  build_and_check("schedule<> (scalar)", [](const auto& def) { loom::run<schedule<>>(def); });
}

std::vector<idx_t<2>> shapes(lt::rng_t& g) {
  std::vector<idx_t<2>> s = {{1, 1}, {1, 17}, {3, 1}, {5, 16}, {7, 33}, {13, 100}, {2, 257}};
  for (int q = 0; q < 3; ++q) s.push_back({lt::pick_size(g, 40), lt::pick_size(g, 300)});
  return s;
}

TEST_CASE("strip invariants: a row's scale and shift, computed once per row, float and double", "[computed_once]") {
  auto check = [&]<class T>(std::type_identity<T>) {
    auto g = lt::make_rng(lt::str("strip invariant normalize ", lt::type_name<T>()));
    for (const auto& ext : shapes(g)) {
      const index_t M = ext[0];
      auto X = lt::random_buffer<T, 2>(ext, lt::pick_layout(g), "X", g, -2, 2);
      auto m = lt::random_buffer<T, 1>({M}, lt::pick_layout(g), "m", g, -1, 1);
      auto v = lt::random_buffer<T, 1>({M}, lt::pick_layout(g), "v", g, 0, 3);
      auto Y = lt::make_buffer<T, 2>(ext, lt::pick_layout(g), "Y");
      const T eps = T(1e-3);
      auto ref = [&](const idx_t<2>& p) {
        const double x = double(X.view(p[0], p[1])), mi = double(m.view(p[0])), vi = double(v.view(p[0]));
        return (x - mi * 0.5) / std::sqrt(vi * 2.0 + double(eps)) + std::exp(mi);
      };
      INFO(X.describe() << "; " << m.describe() << "; " << v.describe() << "; " << Y.describe());
      each_schedule([&](const char* name, auto runner) {
        INFO("schedule: " << name);
        lt::fill(Y.view, lt::sentinel<T>());
        runner(Y.view(i, j) = (X.view(i, j) - m.view(i) * T(0.5)) / sqrt(v.view(i) * T(2) + eps) + exp(m.view(i)));
        const auto r = lt::compare(Y.view, ref, 1e-5);
        INFO(r.message);
        CHECK(r.ok);
        CHECK(Y.untouched().ok);
      });
    }
  };
  check(std::type_identity<float>{});
  check(std::type_identity<double>{});
}

TEST_CASE("strip invariants: lanes along i fix j, and a part of both variables stays in the loop", "[computed_once]") {
  auto g = lt::make_rng("strip invariant columns");
  for (const auto& ext : shapes(g)) {
    const index_t M = ext[0], N = ext[1];
    auto X = lt::random_buffer<float, 2>(ext, lt::pick_layout(g), "X", g, -1, 1);
    auto a = lt::random_buffer<float, 1>({M}, lt::pick_layout(g), "a", g, -1, 1);
    auto b = lt::random_buffer<float, 1>({N}, lt::pick_layout(g), "b", g, -1, 1);
    auto Y = lt::make_buffer<float, 2>(ext, lt::pick_layout(g), "Y");
    auto ref = [&](const idx_t<2>& p) {
      const double ai = double(a.view(p[0])), bj = double(b.view(p[1]));
      return double(X.view(p[0], p[1])) * std::max(bj * bj, 0.25) + std::max(ai, bj) + std::sqrt(ai * ai + 1.0);
    };
    INFO(X.describe() << "; " << a.describe() << "; " << b.describe() << "; " << Y.describe());
    each_schedule([&](const char* name, auto runner) {
      INFO("schedule: " << name);
      lt::fill(Y.view, lt::sentinel<float>());
      runner(Y.view(i, j) = X.view(i, j) * max(b.view(j) * b.view(j), 0.25f) + max(a.view(i), b.view(j)) +
                            sqrt(a.view(i) * a.view(i) + 1.f));
      const auto r = lt::compare(Y.view, ref, 1e-5);
      INFO(r.message);
      CHECK(r.ok);
      CHECK(Y.untouched().ok);
    });
  }
}

TEST_CASE("strip invariants: integer division by a per-row divisor, zero and -1 included", "[computed_once]") {
  auto g = lt::make_rng("strip invariant integer division");
  for (const auto& ext : shapes(g)) {
    const index_t M = ext[0];
    auto X = lt::random_buffer<std::int32_t, 2>(ext, lt::pick_layout(g), "X", g, -100000, 100000);
    auto d = lt::random_buffer<std::int32_t, 1>({M}, lt::pick_layout(g), "d", g, -9, 9);
    auto u = lt::random_buffer<std::uint16_t, 2>(ext, lt::pick_layout(g), "u", g, 0, 65535);
    auto e = lt::random_buffer<std::uint16_t, 1>({M}, lt::pick_layout(g), "e", g, 0, 700);
    X.view(0, 0) = INT_MIN;
    d.view(0) = -1;
    if (M > 1) d.view(1) = 0;
    auto Y = lt::make_buffer<std::int32_t, 2>(ext, lt::pick_layout(g), "Y");
    auto Z = lt::make_buffer<std::uint16_t, 2>(ext, lt::pick_layout(g), "Z");
    // loom's integer division: x / 0 is 0, INT_MIN / -1 wraps (simd/divide.hpp).
    auto ref_y = [&](const idx_t<2>& p) {
      const std::int64_t x = X.view(p[0], p[1]), q = std::int64_t(d.view(p[0])) * 2 - 1;
      const std::int64_t r = q == 0 ? 0 : x / q;
      return double(std::int32_t(std::uint32_t(r)));
    };
    auto ref_z = [&](const idx_t<2>& p) {
      const unsigned q = unsigned(e.view(p[0])) / 3u;
      return double(q == 0 ? 0u : unsigned(u.view(p[0], p[1])) / q);
    };
    INFO(X.describe() << "; " << d.describe() << "; " << Y.describe());
    each_schedule([&](const char* name, auto runner) {
      INFO("schedule: " << name);
      lt::fill(Y.view, lt::sentinel<std::int32_t>());
      lt::fill(Z.view, lt::sentinel<std::uint16_t>());
      runner(Y.view(i, j) = X.view(i, j) / (d.view(i) * 2 - 1));
      runner(Z.view(i, j) = u.view(i, j) / (e.view(i) / std::uint16_t(3)));
      const auto ry = lt::compare(Y.view, ref_y, 0);
      const auto rz = lt::compare(Z.view, ref_z, 0);
      INFO(ry.message << rz.message);
      CHECK(ry.ok);
      CHECK(rz.ok);
      CHECK(Y.untouched().ok);
      CHECK(Z.untouched().ok);
    });
  }
}

constexpr loom::Func<float, 1, "scale"> scale;
constexpr loom::Func<float, 2, "centred"> centred;

TEST_CASE("strip invariants: an inlined stage read twice at the row's point (a let) is computed once", "[computed_once]") {
  auto g = lt::make_rng("strip invariant let");
  for (const auto& ext : shapes(g)) {
    const index_t M = ext[0];
    auto X = lt::random_buffer<float, 2>(ext, lt::pick_row_layout(g), "X", g, -1, 1);
    auto v = lt::random_buffer<float, 1>({M}, lt::pick_row_layout(g), "v", g, 0, 2);
    auto Y = lt::make_buffer<float, 2>(ext, lt::pick_row_layout(g), "Y");
    auto ref = [&](const idx_t<2>& p) {
      const double s = 1.0 / std::sqrt(double(v.view(p[0])) + 0.5), c = double(X.view(p[0], p[1])) - s;
      return c * s + c * c * s;
    };
    auto p = loom::pipeline(scale(i) = 1.f / sqrt(v.view(i) + 0.5f), centred(i, j) = X.view(i, j) - scale(i),
                            Y.view(i, j) = centred(i, j) * scale(i) + centred(i, j) * centred(i, j) * scale(i));
    INFO(X.describe() << "; " << v.describe() << "; " << Y.describe());
    lt::fill(Y.view, lt::sentinel<float>());
    loom::run(p);
    auto r = lt::compare(Y.view, ref, 1e-5);
    INFO(r.message);
    CHECK(r.ok);
    lt::fill(Y.view, lt::sentinel<float>());
    loom::run<loom::stage<loom::output, loom::vectorize<j>, loom::parallel<i>>>(p);
    r = lt::compare(Y.view, ref, 1e-5);
    INFO(r.message);
    CHECK(r.ok);
    CHECK(Y.untouched().ok);
  }
}

TEST_CASE("strip invariants: print_loop_nest lists what each row computes once", "[computed_once]") {
  std::vector<float> storage(2 * 8 * 40 + 2 * 8);
  auto X = loom::view(storage.data(), loom::shape(8, 40), "X");
  auto Y = loom::view(storage.data() + 320, loom::shape(8, 40), "Y");
  auto m = loom::view(storage.data() + 640, loom::shape(8), "m");
  auto v = loom::view(storage.data() + 648, loom::shape(8), "v");
  const std::string nest =
      loom::print_loop_nest<loom::schedule<loom::vectorize<j>>>(Y(i, j) = (X(i, j) - m(i)) / sqrt(v(i) + 1.f));
  INFO(nest);
  CHECK(nest.find("once per row: sqrt((v(i) + 1))") != std::string::npos);
  // A single read is not worth holding: it stays in the loop (one broadcast load per vector).
  CHECK(nest.find("once per row: m(i)") == std::string::npos);
  const std::string scalar = loom::print_loop_nest<loom::schedule<>>(Y(i, j) = (X(i, j) - m(i)) / sqrt(v(i) + 1.f));
  INFO(scalar);
  CHECK(scalar.find("once per row") == std::string::npos);
}

TEST_CASE("repeated operands: a variance's (X - mean) squared is computed once per element, when both are one", "[computed_once]") {
  auto g = lt::make_rng("repeated operands");
  for (int round = 0; round < 6; ++round) {
    const index_t M = round == 0 ? 1 : lt::pick_size(g, 40), N = round == 1 ? 1 : lt::pick_size(g, 300);
    INFO("M = " << M << ", N = " << N);
    loom::Tensor<float, 2> X("X", M, N), Z("Z", M, N), Y("Y", M, N);
    lt::fill_random(X.view(), g, -2, 2);
    lt::fill_random(Z.view(), g, -2, 2);
    const float a = 1.f / float(N), b = 0.5f / float(N);
    auto mean = [&](const loom::Tensor<float, 2>& T, index_t r) {
      double s = 0;
      for (index_t c = 0; c < N; ++c) s += T(r, c);
      return s;
    };
    // ref(p, q, c1, c2): P(i, j) * sum(k, (P(i, k) - mean_P * c1) * (Q(i, k) - mean_P * c2)), to a
    // tolerance relative to N (the sum may cancel to near 0)
    auto check = [&](const char* what, const auto& P, const auto& Q, double c1, double c2, bool once) {
      INFO(what);
      std::vector<double> ref(std::size_t(M * N));
      for (index_t r = 0; r < M; ++r) {
        const double m = mean(P, r);
        double v = 0;
        for (index_t c = 0; c < N; ++c) v += (double(P(r, c)) - m * c1) * (double(Q(r, c)) - m * c2);
        for (index_t c = 0; c < N; ++c) ref[std::size_t(r * N + c)] = double(P(r, c)) * v;
      }
      const auto def = Y(i, j) = P(i, j) * sum(k, (P(i, k) - sum(l, P(i, l)) * float(c1)) * (Q(i, k) - sum(l, P(i, l)) * float(c2)));
      const std::string nest = loom::print_loop_nest(def);
      INFO(nest);
      CHECK((nest.find("let twice") != std::string::npos) == once);
      lt::fill(Y.view(), lt::sentinel<float>());
      loom::run(def);
      const auto r = lt::compare(Y.view(), ref, 1e-5, double(N));
      INFO(r.message);
      CHECK(r.ok);
    };
    check("the same operand twice: bound once", X, X, a, a, true);
    check("the same shape, another constant: as written", X, X, a, b, false);
    check("the same shape, another tensor: as written", X, Z, a, a, false);
  }
}

TEST_CASE("repeated operands: in the output's own expression, nested, and in integers", "[computed_once]") {
  auto g = lt::make_rng("repeated operands nested");
  for (int round = 0; round < 6; ++round) {
    const index_t M = round == 0 ? 1 : lt::pick_size(g, 30), N = round == 1 ? 1 : lt::pick_size(g, 200);
    INFO("M = " << M << ", N = " << N);
    loom::Tensor<float, 2> X("X", M, N), Y("Y", M, N);
    loom::Tensor<std::int32_t, 2> A("A", M, N), B("B", M, N);
    lt::fill_random(X.view(), g, -1, 1);
    lt::fill_random(A.view(), g, -1000, 1000);
    std::vector<double> ref(std::size_t(M * N)), iref(std::size_t(M * N));
    for (index_t r = 0; r < M; ++r) {
      double s = 0;
      std::int64_t is = 0;
      for (index_t c = 0; c < N; ++c) s += X(r, c), is += A(r, c);
      for (index_t c = 0; c < N; ++c) {
        const double d = double(X(r, c)) - s, sq = d * d;
        ref[std::size_t(r * N + c)] = sq * sq;
        const std::uint32_t e = std::uint32_t(A(r, c)) - std::uint32_t(is);
        iref[std::size_t(r * N + c)] = double(std::int32_t(e * e + e * e));
      }
    }
    const auto def = Y(i, j) = ((X(i, j) - sum(k, X(i, k))) * (X(i, j) - sum(k, X(i, k)))) *
                               ((X(i, j) - sum(k, X(i, k))) * (X(i, j) - sum(k, X(i, k))));
    const std::string nest = loom::print_loop_nest(def);
    INFO(nest);
    CHECK(nest.find("let twice") != std::string::npos);
    loom::run(def);
    auto r = lt::compare(Y.view(), ref, 1e-4, 1e-3);
    INFO(r.message);
    CHECK(r.ok);
    loom::run(B(i, j) = (A(i, j) - sum(k, A(i, k))) * (A(i, j) - sum(k, A(i, k))) + (A(i, j) - sum(k, A(i, k))) * (A(i, j) - sum(k, A(i, k))));
    r = lt::compare(B.view(), iref, 0);
    INFO(r.message);
    CHECK(r.ok);
  }
}

/// A row-wise softmax of P with Q in the sum, constants c1 and c2 added in the numerator's and the
/// sum's exponent, in double: exp(P(i, j) - max_P + c1) / sum_k exp(Q(i, k) - max_P + c2).
template <class V>
std::vector<double> softmax_ref(const V& P, const V& Q, double c1, double c2) {
  const index_t M = P.extent(0), N = P.extent(1);
  std::vector<double> ref(std::size_t(M * N));
  for (index_t r = 0; r < M; ++r) {
    double mx = -1e300, s = 0;
    for (index_t c = 0; c < N; ++c) mx = std::max(mx, double(P(r, c)));
    for (index_t c = 0; c < N; ++c) s += std::exp(double(Q(r, c)) - mx + c2);
    for (index_t c = 0; c < N; ++c) ref[std::size_t(r * N + c)] = std::exp(double(P(r, c)) - mx + c1) / s;
  }
  return ref;
}

TEST_CASE("reduction bodies: a softmax in one definition computes each exponential once, when both are one", "[computed_once]") {
  auto g = lt::make_rng("reduction bodies softmax");
  for (const auto& ext : shapes(g)) {
    auto X = lt::random_buffer<float, 2>(ext, lt::pick_layout(g), "X", g, -3, 3);
    auto Z = lt::random_buffer<float, 2>(ext, lt::pick_layout(g), "Z", g, -3, 3);
    auto Y = lt::make_buffer<float, 2>(ext, lt::pick_layout(g), "Y");
    INFO(X.describe() << "; " << Z.describe() << "; " << Y.describe());
    const auto X2 = X.view;  // another view object of the same elements
    auto check = [&](const char* what, const auto& P, const auto& Q, float c1, float c2, bool shared) {
      INFO(what);
      const auto ref = softmax_ref(P, Q, c1, c2);
      const auto def = Y.view(i, j) = exp(P(i, j) - maximum(k, P(i, k)) + c1) / sum(k, exp(Q(i, k) - maximum(l, P(i, l)) + c2));
      const std::string nest = loom::print_loop_nest(def);
      INFO(nest);
      CHECK((nest.find("r1(i) = sum(k, b1(i, k))") != std::string::npos) == shared);
      CHECK((nest.find("b1(i, j) = exp(") != std::string::npos) == shared);
      each_schedule([&](const char* name, auto runner) {
        INFO("schedule: " << name);
        lt::fill(Y.view, lt::sentinel<float>());
        runner(def);
        const auto r = lt::compare(Y.view, ref, 3e-6, 1e-30);
        INFO(r.message);
        CHECK(r.ok);
        CHECK(Y.untouched().ok);
      });
    };
    check("the sum's body is the numerator: computed once", X.view, X.view, 0.f, 0.f, true);
    check("another view of the same elements: computed once", X.view, X2, 0.25f, 0.25f, true);
    check("the same shape, another tensor: as written", X.view, Z.view, 0.f, 0.f, false);
    check("the same shape, another constant: as written", X.view, X.view, 0.5f, -0.25f, false);

    // Another tensor holding X's values runs as written (its own, leaner nests), with the bits of
    // the shared form: its sums add in the same order.
    lt::for_each_index(ext, [&](const idx_t<2>& p) { Z.view(p[0], p[1]) = X.view(p[0], p[1]); });
    auto Y2 = lt::make_buffer<float, 2>(ext, lt::pick_layout(g), "Y2");
    loom::run(Y.view(i, j) = exp(X.view(i, j) - maximum(k, X.view(i, k)) + 0.f) / sum(k, exp(X.view(i, k) - maximum(l, X.view(i, l)) + 0.f)));
    loom::run(Y2.view(i, j) = exp(X.view(i, j) - maximum(k, X.view(i, k)) + 0.f) / sum(k, exp(Z.view(i, k) - maximum(l, X.view(i, l)) + 0.f)));
    const auto bits = lt::compare_bits(Y2.view, Y.view);
    INFO("as written against shared: " << bits.message);
    CHECK(bits.ok);
  }
}

TEST_CASE("reduction bodies: a cheap body is computed again, an integer division once", "[computed_once]") {
  auto g = lt::make_rng("reduction bodies cheap and integer");
  for (const auto& ext : shapes(g)) {
    const index_t N = ext[1];
    auto X = lt::random_buffer<float, 2>(ext, lt::pick_layout(g), "X", g, -2, 2);
    auto Y = lt::make_buffer<float, 2>(ext, lt::pick_layout(g), "Y");
    auto A = lt::random_buffer<std::int32_t, 2>(ext, lt::pick_layout(g), "A", g, -100000, 100000);
    auto B = lt::make_buffer<std::int32_t, 2>(ext, lt::pick_layout(g), "B");
    INFO(X.describe() << "; " << Y.describe() << "; " << A.describe() << "; " << B.describe());
    const auto cheap = Y.view(i, j) = X.view(i, j) * 2.f + sum(k, X.view(i, k) * 2.f);
    const auto divided = B.view(i, j) = A.view(i, j) / 7 - sum(k, A.view(i, k) / 7);
    const std::string cheap_nest = loom::print_loop_nest(cheap), divided_nest = loom::print_loop_nest(divided);
    INFO(cheap_nest << divided_nest);
    CHECK(cheap_nest.find("b0(") == std::string::npos);
    CHECK(divided_nest.find("r0(i) = sum(k, b0(i, k))") != std::string::npos);
    lt::fill(Y.view, lt::sentinel<float>());
    lt::fill(B.view, lt::sentinel<std::int32_t>());
    loom::run(cheap);
    loom::run(divided);
    auto ry = lt::compare(Y.view, [&](const idx_t<2>& p) {
      double s = 0;
      for (index_t c = 0; c < N; ++c) s += double(X.view(p[0], c)) * 2.0;
      return double(X.view(p[0], p[1])) * 2.0 + s;
    }, 1e-5, double(N));
    auto rb = lt::compare(B.view, [&](const idx_t<2>& p) {
      std::uint32_t s = 0;  // int32 sums wrap
      for (index_t c = 0; c < N; ++c) s += std::uint32_t(A.view(p[0], c) / 7);
      return double(std::int32_t(std::uint32_t(A.view(p[0], p[1]) / 7) - s));
    }, 0);
    INFO(ry.message << rb.message);
    CHECK(ry.ok);
    CHECK(rb.ok);
    CHECK(Y.untouched().ok);
    CHECK(B.untouched().ok);
  }
}

TEST_CASE("reduction bodies: softmax along the last of three variables and along columns", "[computed_once]") {
  using namespace loom;
  auto g = lt::make_rng("reduction bodies rank 3 and columns");
  for (int round = 0; round < 6; ++round) {
    const idx_t<3> ext{lt::pick_size(g, 4), lt::pick_size(g, 9), round == 0 ? 1 : lt::pick_size(g, 80)};
    auto A = lt::random_buffer<float, 3>(ext, lt::pick_layout(g), "A", g, -2, 2);
    auto B = lt::make_buffer<float, 3>(ext, lt::pick_layout(g), "B");
    INFO(A.describe() << "; " << B.describe());
    std::vector<double> ref(std::size_t(lt::count(ext)));
    lt::for_each_index(ext, [&](const idx_t<3>& p) {
      double mx = -1e300, s = 0;
      for (index_t c = 0; c < ext[2]; ++c) mx = std::max(mx, double(A.view(p[0], p[1], c)));
      for (index_t c = 0; c < ext[2]; ++c) s += std::exp(double(A.view(p[0], p[1], c)) - mx);
      ref[std::size_t(lt::row_major_index(ext, p))] = std::exp(double(A.view(p[0], p[1], p[2])) - mx) / s;
    });
    const auto def = B.view(n, i, j) = exp(A.view(n, i, j) - maximum(k, A.view(n, i, k))) / sum(k, exp(A.view(n, i, k) - maximum(l, A.view(n, i, l))));
    const std::string nest = print_loop_nest(def);
    INFO(nest);
    CHECK(nest.find("= sum(k, b1(n, i, k))") != std::string::npos);
    lt::fill(B.view, lt::sentinel<float>());
    run(def);
    auto r = lt::compare(B.view, ref, 3e-6, 1e-30);
    INFO(r.message);
    CHECK(r.ok);
    CHECK(B.untouched().ok);

    // Along columns: the reductions run over the first variable, the body's stage over (i, j).
    const idx_t<2> e2{ext[1], ext[2]};
    auto X = lt::random_buffer<float, 2>(e2, lt::pick_layout(g), "X", g, -2, 2);
    auto Y = lt::make_buffer<float, 2>(e2, lt::pick_layout(g), "Y");
    std::vector<double> cref(std::size_t(lt::count(e2)));
    for (index_t c = 0; c < e2[1]; ++c) {
      double mx = -1e300, s = 0;
      for (index_t rr = 0; rr < e2[0]; ++rr) mx = std::max(mx, double(X.view(rr, c)));
      for (index_t rr = 0; rr < e2[0]; ++rr) s += std::exp(double(X.view(rr, c)) - mx);
      for (index_t rr = 0; rr < e2[0]; ++rr) cref[std::size_t(rr * e2[1] + c)] = std::exp(double(X.view(rr, c)) - mx) / s;
    }
    lt::fill(Y.view, lt::sentinel<float>());
    run(Y.view(i, j) = exp(X.view(i, j) - maximum(k, X.view(k, j))) / sum(k, exp(X.view(k, j) - maximum(l, X.view(l, j)))));
    r = lt::compare(Y.view, cref, 3e-6, 1e-30);
    INFO(r.message);
    CHECK(r.ok);
    CHECK(Y.untouched().ok);
  }
}

}  // namespace
