// tests/test_permute.cpp — the permutation engine: out(v...) = X(the same variables in another
// order) under the default schedule, checked bit for bit against a plain loop over every element,
// for 4- and 8-byte floats and integers (NaN payloads and bit patterns that are NaNs as floats
// included), ranks 2 to 4 in every order, row-major views (the engine by type) and views of any
// strides (the engine choosing per run between a transpose and a copy of rows), shapes of 1,
// primes and sizes across its tiles, in place and overlapping views, 1 and 2 threads, and the
// errors every run gives before writing.
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;
using lt::idx_t;

namespace {

/// Values whose bits must arrive unchanged: random ones, and for 4- and 8-byte types some that
/// are NaNs with payloads (or integers whose bits are) and infinities.
template <class T>
void fill_bits(const loom::TensorView<T, 2>& v, lt::rng_t& g) {
  lt::for_each_index(lt::extents_of(v), [&](const auto& idx) {
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    Bits b = static_cast<Bits>(g());
    if (lt::coin(g, 0.1)) b = sizeof(T) == 4 ? Bits(0x7FC00001u) : Bits(0x7FF8000000000003ull);  // a quiet NaN with a payload
    else if (lt::coin(g, 0.05)) b = sizeof(T) == 4 ? Bits(0x7F800001u) : Bits(0x7FF0000000000001ull);  // a signalling NaN
    else if (lt::coin(g, 0.05)) b = sizeof(T) == 4 ? Bits(0xFF800000u) : Bits(0xFFF0000000000000ull);  // -infinity
    std::memcpy(&lt::at(v, idx), &b, sizeof(T));
  });
}

/// out(b, a) has X(a, b)'s bits for every (a, b); the storage around out is untouched.
template <class T, class OutBuffer, class InBuffer>
void expect_transposed(const OutBuffer& out, const InBuffer& X, const char* what) {
  index_t bad = 0;
  std::string first;
  lt::for_each_index(lt::extents_of(X.view), [&](const auto& idx) {
    if (!lt::same_bits(X.view(idx[0], idx[1]), out.view(idx[1], idx[0])) && bad++ == 0) first = lt::to_string(idx);
  });
  INFO(what << ": " << X.describe() << " -> " << out.describe() << ": " << bad << " wrong, first at X" << first);
  CHECK(bad == 0);
  const auto u = out.untouched();
  INFO(u.message);
  CHECK(u.ok);
}

template <class T>
void transposes_of_type(const char* type) {
  auto g = lt::make_rng(std::string("permute transposes ") + type);
  for (int rep = 0; rep < 60; ++rep) {
    // Across the engine's tiles (128 4-byte or 64 8-byte elements) and vectors, and below them.
    const index_t M = lt::coin(g, 0.3) ? lt::uniform(g, 100, 300) : lt::pick_size(g, 70);
    const index_t N = lt::coin(g, 0.3) ? lt::uniform(g, 100, 300) : lt::pick_size(g, 70);
    auto X = lt::make_buffer<T, 2>({M, N}, lt::pick_layout(g), "X");
    fill_bits(X.view, g);
    auto out = lt::make_buffer<T, 2>({N, M}, lt::pick_layout(g), "out");
    INFO(type << " M = " << M << ", N = " << N);
    loom::run(out.view(j, i) = X.view(i, j));
    expect_transposed<T>(out, X, "strided views");
    // Row-major by type: the engine without a choice to make.
    if (X.view.stride(1) == 1 && out.view.stride(1) == 1) {
      lt::fill(out.view, T(0));
      loom::run(out.rows()(j, i) = X.rows()(i, j));
      expect_transposed<T>(out, X, "row-major views");
    }
  }
}

/// A rank-R permutation `perm` (out's dimension d is X's dimension perm[d]) against a plain loop.
template <class T, std::size_t R>
void expect_permuted(const lt::buffer<T, R>& out, const lt::buffer<T, R>& X, const std::array<int, R>& perm) {
  index_t bad = 0;
  lt::for_each_index(lt::extents_of(out.view), [&](const auto& o) {
    idx_t<R> x{};
    for (std::size_t d = 0; d < R; ++d) x[std::size_t(perm[d])] = o[d];
    if (lt::at(out.view, o) != lt::at(X.view, x)) ++bad;
  });
  INFO(X.describe() << " -> " << out.describe() << ": " << bad << " wrong");
  CHECK(bad == 0);
  CHECK(out.untouched().ok);
}

/// Every permutation of R variables, on random shapes and layouts: out(i, j, ...) = Xp(i, j, ...)
/// where Xp is X seen through strides permuted by perm (a layout_stride view), so that one
/// instantiation covers every order and each run finds which variables are unit-stride.
template <class T, std::size_t R>
void every_order(lt::rng_t& g, index_t hi) {
  std::array<int, R> perm{};
  for (std::size_t d = 0; d < R; ++d) perm[d] = int(d);
  do {
    idx_t<R> xe{};
    for (auto& e : xe) e = lt::pick_size(g, hi);
    idx_t<R> oe{}, ps{};
    for (std::size_t d = 0; d < R; ++d) oe[d] = xe[std::size_t(perm[d])];
    auto X = lt::random_buffer<T, R>(xe, lt::pick_layout(g), "X", g, -1000, 1000);
    auto out = lt::make_buffer<T, R>(oe, lt::pick_layout(g), "out");
    for (std::size_t d = 0; d < R; ++d) ps[d] = X.view.stride(std::size_t(perm[d]));
    const loom::TensorView<T, R> Xp(X.view.data(), loom::dims<R>(oe), loom::strides_t<R>(ps), "Xp");
    INFO("rank " << R << ", out's dimension d is X's perm[d], perm = " << [&] {
      std::string t;
      for (int q : perm) t += std::to_string(q) + " ";
      return t;
    }());
    constexpr auto vars = std::make_tuple(i, j, k, l);
    [&]<std::size_t... D>(std::index_sequence<D...>) {
      loom::run(out.view(std::get<D>(vars)...) = Xp(std::get<D>(vars)...));
    }(std::make_index_sequence<R>{});
    expect_permuted<T, R>(out, X, perm);
  } while (std::next_permutation(perm.begin(), perm.end()));
}

}  // namespace

TEST_CASE("permutation engine: transposes, bit for bit, in every layout", "[permute]") {
  transposes_of_type<float>("float");
  transposes_of_type<double>("double");
  transposes_of_type<std::int32_t>("int32");
  transposes_of_type<std::uint64_t>("uint64");
}

TEST_CASE("permutation engine: ranks 2 to 4 in every order", "[permute]") {
  auto g = lt::make_rng("permute orders");
  for (int rep = 0; rep < 3; ++rep) {
    every_order<float, 2>(g, 150);
    every_order<double, 3>(g, 40);
    every_order<std::int32_t, 3>(g, 40);
    every_order<float, 4>(g, 12);
  }
  // Row-major views, whose unit-stride variables the type fixes (no choice per run).
  for (int rep = 0; rep < 8; ++rep) {
    const index_t a = lt::pick_size(g, 40), b = lt::pick_size(g, 40), c = lt::pick_size(g, 40);
    auto X = lt::random_buffer<double, 3>({a, b, c}, lt::pick_row_layout(g), "X", g, -1000, 1000);
    auto out1 = lt::make_buffer<double, 3>({c, a, b}, lt::pick_row_layout(g), "out1");
    auto out2 = lt::make_buffer<double, 3>({b, c, a}, lt::pick_row_layout(g), "out2");
    loom::run(out1.rows()(k, i, j) = X.rows()(i, j, k));
    loom::run(out2.rows()(j, k, i) = X.rows()(i, j, k));
    expect_permuted<double, 3>(out1, X, {2, 0, 1});
    expect_permuted<double, 3>(out2, X, {1, 2, 0});
  }
}

TEST_CASE("permutation engine: what it takes and what it leaves to the nest", "[permute]") {
  loom::Tensor<float, 2> X("X", 19, 23), T("T", 23, 19);
  loom::Tensor<std::int16_t, 2> X16("X16", 19, 23), T16("T16", 23, 19);
  auto g = lt::make_rng("permute family");
  lt::fill_random(X.view(), g);
  lt::fill_random(X16.view(), g, -1000, 1000);
  // A transpose: the engine.
  CHECK(loom::print_loop_nest(T(j, i) = X(i, j)).find("permutation engine") != std::string::npos);
  // Not a permutation, or not of 4- or 8-byte elements: the loop nest, still correct.
  CHECK(loom::print_loop_nest(T(j, i) = X(i, j) * 2.f).find("permutation engine") == std::string::npos);
  CHECK(loom::print_loop_nest(T16(j, i) = X16(i, j)).find("permutation engine") == std::string::npos);
  CHECK(loom::print_loop_nest(X(i, j) = T(j, i) + 0.f).find("permutation engine") == std::string::npos);
  loom::run(T16(j, i) = X16(i, j));
  loom::run(T(j, i) = X(i, j) * 2.f);
  for (index_t a = 0; a < 19; ++a)
    for (index_t b = 0; b < 23; ++b) {
      CHECK(T16(b, a) == X16(a, b));
      CHECK(T(b, a) == X(a, b) * 2.f);
    }
  // A schedule asks for the loop nest: it gets it.
  loom::run<loom::schedule<loom::vectorize<i>>>(T(j, i) = X(i, j));
  for (index_t a = 0; a < 19; ++a)
    for (index_t b = 0; b < 23; ++b) CHECK(T(b, a) == X(a, b));
}

TEST_CASE("permutation engine: in place and through overlapping views", "[permute][alias]") {
  auto g = lt::make_rng("permute alias");
  for (index_t n : {1, 2, 7, 8, 9, 31, 129, 200}) {
    loom::Tensor<float, 2> A("A", n, n);
    lt::fill_random(A.view(), g);
    std::vector<float> before(A.data(), A.data() + n * n);
    loom::run(A(j, i) = A(i, j));  // in place: every read sees A as it was
    index_t bad = 0;
    for (index_t a = 0; a < n; ++a)
      for (index_t b = 0; b < n; ++b) bad += A(a, b) != before[std::size_t(b * n + a)];
    INFO("n = " << n);
    CHECK(bad == 0);
  }
  // The output a shifted window of the input's storage.
  loom::Tensor<double, 2> S("S", 40, 40);
  lt::fill_random(S.view(), g);
  const std::vector<double> old(S.data(), S.data() + 1600);
  auto src = loom::view(S.data(), loom::shape(30, 30), loom::strides(40, 1), "src");
  auto dst = loom::view(S.data() + 41, loom::shape(30, 30), loom::strides(40, 1), "dst");
  loom::run(dst(j, i) = src(i, j));
  index_t bad = 0;
  for (index_t a = 0; a < 30; ++a)
    for (index_t b = 0; b < 30; ++b) bad += S.data()[41 + b * 40 + a] != old[std::size_t(a * 40 + b)];
  CHECK(bad == 0);
}

TEST_CASE("permutation engine: results do not depend on the thread count", "[permute][threads]") {
  auto g = lt::make_rng("permute threads");
  loom::Tensor<float, 3> X("X", 3, 300, 517), A("A", 3, 517, 300), B("B", 3, 517, 300);
  lt::fill_random(X.view(), g);
  {
    loom::thread_limit one(1);
    loom::run(A(n, j, i) = X(n, i, j));
  }
  loom::run(B(n, j, i) = X(n, i, j));
  CHECK(std::memcmp(A.data(), B.data(), sizeof(float) * 3 * 300 * 517) == 0);
  index_t bad = 0;
  for (index_t c = 0; c < 3; ++c)
    for (index_t a = 0; a < 300; ++a)
      for (index_t b = 0; b < 517; ++b) bad += A(c, b, a) != X(c, a, b);
  CHECK(bad == 0);
}

TEST_CASE("permutation engine: wrong extents are an error before anything is written", "[permute][errors]") {
  loom::Tensor<float, 2> X("X", 5, 7), T("T", 7, 6), ok("ok", 7, 5);
  lt::fill(T.view(), 3.f);
  CHECK_THROWS_AS(loom::run(T(j, i) = X(i, j)), loom::error);
  for (index_t a = 0; a < 7; ++a)
    for (index_t b = 0; b < 6; ++b) CHECK(T(a, b) == 3.f);
  // Empty tensors: nothing to do, nothing read.
  loom::Tensor<float, 2> E("E", 0, 7), Et("Et", 7, 0);
  loom::run(Et(j, i) = E(i, j));
  loom::run(ok(j, i) = X(i, j));
  CHECK(ok(6, 4) == X(4, 6));
}
