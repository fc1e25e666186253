// tests/test_fuzz.cpp — inputs a fuzzer would try: zero-size dimensions in every position, one-
// element tensors, input and output views that overlap partially, strides that are huge but do
// not overflow, NaN and infinities through every reduction and the GEMM engine, and random shapes
// and layouts through the default schedule. Every result is checked against a plain loop.
//
// Semantics pinned here:
//   - an empty reduction range gives the reduction's identity: sum 0, product 1, maximum -inf
//     (lowest() for integers), minimum +inf (max() for integers);
//   - sum and product propagate NaN as the plain loop does (IEEE arithmetic);
//   - maximum and minimum skip NaN elements, in every schedule: the result is the extremum of the
//     other elements (the identity when all are NaN), as std::max(acc, x) folded from the identity.
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;
using lt::idx_t;

namespace {

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_v = std::numeric_limits<double>::infinity();

/// A row-major tensor's element at (r, c) as double.
template <class T>
double at2(const loom::Tensor<T, 2>& t, index_t r, index_t c) {
  return static_cast<double>(t.data()[r * t.extent(1) + c]);
}

/// maximum/minimum as loom defines them: NaN elements are skipped.
double max_skip_nan(double acc, double x) { return x > acc ? x : acc; }
double min_skip_nan(double acc, double x) { return x < acc ? x : acc; }

/// Plain-loop row reductions of X (M x K) in double: sum, product, maximum, minimum.
struct row_refs {
  std::vector<double> sum, product, maximum, minimum;
};
template <class T>
row_refs reduce_rows(const loom::Tensor<T, 2>& X) {
  const index_t M = X.extent(0), K = X.extent(1);
  row_refs r;
  for (index_t m = 0; m < M; ++m) {
    double s = 0, p = 1, mx = -inf_v, mn = inf_v;
    for (index_t k = 0; k < K; ++k) {
      const double v = at2(X, m, k);
      s += v;
      p *= v;
      mx = max_skip_nan(mx, v);
      mn = min_skip_nan(mn, v);
    }
    r.sum.push_back(s);
    r.product.push_back(p);
    r.maximum.push_back(mx);
    r.minimum.push_back(mn);
  }
  return r;
}

/// Runs the four row reductions of X into out under schedule S and checks each against ref.
template <class S, class T>
void check_row_reductions(const loom::Tensor<T, 2>& X, const row_refs& ref, const char* schedule) {
  INFO("schedule: " << schedule << ", X " << X.extent(0) << " x " << X.extent(1));
  const index_t M = X.extent(0), K = X.extent(1);
  loom::Tensor<T, 1> out("out", M);
  const double tol = lt::tolerance<T>(K);
  const auto check = [&](const std::vector<double>& want, const char* what) {
    INFO("reduction: " << what);
    const auto r = lt::compare(out.view(), [&](const idx_t<1>& q) { return want[std::size_t(q[0])]; }, tol);
    CHECK(r.ok);
    if (!r.ok) UNSCOPED_INFO(r.message);
  };
  loom::run<S>(out(i) = sum(j, X(i, j)));
  check(ref.sum, "sum");
  loom::run<S>(out(i) = product(j, X(i, j)));
  check(ref.product, "product");
  loom::run<S>(out(i) = maximum(j, X(i, j)));
  check(ref.maximum, "maximum");
  loom::run<S>(out(i) = minimum(j, X(i, j)));
  check(ref.minimum, "minimum");
}

/// The schedules a row reduction is tried with: scalar, lanes along the reduction, lanes across
/// the outputs, the output as accumulator, and the default.
template <class T>
void row_reductions_every_schedule(const loom::Tensor<T, 2>& X) {
  const row_refs ref = reduce_rows(X);
  check_row_reductions<loom::schedule<>>(X, ref, "scalar");
  check_row_reductions<loom::schedule<loom::vectorize<j>>>(X, ref, "vectorize<j>");
  check_row_reductions<loom::schedule<loom::split<j, 32>, loom::vectorize<loom::inner<j>>, loom::unroll<loom::outer<j>, 2>>>(
      X, ref, "split<j, 32>, vectorize<inner<j>>, unroll");
  check_row_reductions<loom::schedule<loom::vectorize<i>>>(X, ref, "vectorize<i>");
  check_row_reductions<loom::auto_schedule>(X, ref, "default");
}

}  // namespace

TEST_CASE("fuzz: zero-size dimensions in every position", "[fuzz][empty]") {
  const float S = -3.5f;
  for (int zero = 0; zero < 3; ++zero) {
    idx_t<3> e{5, 7, 9};
    e[std::size_t(zero)] = 0;
    INFO("extents " << lt::to_string(e));
    loom::Tensor<float, 3> A(e, "A"), B(e, "B"), C(e, "C");
    lt::fill(A.view(), 1.f);
    lt::fill(B.view(), 2.f);
    loom::run(C(i, j, k) = A(i, j, k) * B(i, j, k) + 1.f);
    loom::run<loom::schedule<loom::vectorize<k>, loom::parallel<i>>>(C(i, j, k) = A(i, j, k) - B(i, j, k));
    CHECK(C.size() == 0);

    // Reduce over the last dimension: the output (e0 x e1) is empty, or each element is the
    // identity of an empty range.
    loom::Tensor<float, 2> R("R", e[0], e[1]);
    for (float& v : R) v = S;
    const bool empty_range = e[2] == 0;
    const auto all = [&](float want) { return std::all_of(R.begin(), R.end(), [&](float v) { return v == want; }); };
    loom::run(R(i, j) = sum(k, A(i, j, k)));
    CHECK(all(empty_range ? 0.f : 9.f));
    loom::run<loom::schedule<loom::vectorize<k>>>(R(i, j) = maximum(k, A(i, j, k)));
    CHECK(all(empty_range ? -INFINITY : 1.f));
    loom::run<loom::schedule<loom::vectorize<j>>>(R(i, j) = minimum(k, A(i, j, k)));
    CHECK(all(empty_range ? INFINITY : 1.f));
    loom::run<loom::schedule<loom::reorder<k, i>>>(R(i, j) = product(k, B(i, j, k)));
    CHECK(all(empty_range ? 1.f : 512.f));

    // Reduce over the first two dimensions into a vector of e2.
    loom::Tensor<float, 1> v("v", e[2]);
    for (float& x : v) x = S;
    loom::run(v(k) = sum(i, j, A(i, j, k)));
    const float want = float(e[0] * e[1]);
    CHECK(std::all_of(v.begin(), v.end(), [&](float x) { return x == want; }));
    // And over everything into a scalar.
    loom::Tensor<float, 0> s("s");
    loom::run(s() = sum(i, j, k, A(i, j, k)));
    CHECK(s.data()[0] == 0.f);
    loom::run<loom::schedule<loom::vectorize<k>>>(s() = maximum(i, j, k, A(i, j, k)));
    CHECK(s.data()[0] == -INFINITY);
  }
  // A contraction with an empty inner dimension: C = 0, also on the GEMM engine.
  for (index_t K : {index_t(0), index_t(1)}) {
    loom::Tensor<float, 2> A("A", 6, K), B("B", K, 5), C("C", 6, 5);
    lt::fill(A.view(), 2.f);
    lt::fill(B.view(), 3.f);
    lt::fill(C.view(), S);
    loom::run(C(i, j) = sum(k, A(i, k) * B(k, j)));
    CHECK(std::all_of(C.begin(), C.end(), [&](float x) { return x == 6.f * float(K); }));
    lt::fill(C.view(), S);
    loom::gemm(C, A, B, 1.f, 0.f);
    CHECK(std::all_of(C.begin(), C.end(), [&](float x) { return x == 6.f * float(K); }));
  }
}

TEST_CASE("fuzz: one-element tensors", "[fuzz][one]") {
  loom::Tensor<double, 3> A("A", 1, 1, 1), B("B", 1, 1, 1), C("C", 1, 1, 1);
  A(0, 0, 0) = 3;
  B(0, 0, 0) = -2;
  loom::run(C(i, j, k) = A(i, j, k) * B(i, j, k) + 1.0);
  CHECK(C(0, 0, 0) == -5.0);
  loom::run<loom::schedule<loom::vectorize<k>, loom::parallel<i>>>(C(i, j, k) = loom::max(A(i, j, k), B(i, j, k)));
  CHECK(C(0, 0, 0) == 3.0);
  loom::Tensor<double, 0> s("s");
  loom::run(s() = sum(i, j, k, A(i, j, k) * B(i, j, k)));
  CHECK(s.data()[0] == -6.0);
  loom::run(s() = minimum(i, j, k, B(i, j, k)));
  CHECK(s.data()[0] == -2.0);
  loom::Tensor<double, 2> M1("M1", 1, 1), M2("M2", 1, 1), M3("M3", 1, 1);
  M1(0, 0) = 1.5;
  M2(0, 0) = 4;
  loom::run(M3(i, j) = sum(k, M1(i, k) * M2(k, j)));
  CHECK(M3(0, 0) == 6.0);
  loom::gemm(M3, M1, M2, 2.0, 1.0);
  CHECK(M3(0, 0) == 18.0);
  loom::Tensor<float, 2> X("X", 1, 1);
  X(0, 0) = 7.f;
  row_reductions_every_schedule(X);
}

TEST_CASE("fuzz: input and output views that overlap partially compute as if into a temporary", "[fuzz][alias]") {
  auto g = lt::make_rng("fuzz overlap");
  for (index_t n : {index_t(1), index_t(5), index_t(17), index_t(64), index_t(131)}) {
    for (index_t off : {index_t(-7), index_t(-1), index_t(1), index_t(3), index_t(16), n - 1}) {
      if (off == 0 || (off < 0 && -off >= n)) continue;
      INFO("n = " << n << ", input at output + " << off);
      const index_t lo = std::min<index_t>(0, off), span = n + std::abs(off);
      std::vector<float> buf(static_cast<std::size_t>(span));
      for (float& v : buf) v = float(lt::uniform(g, -9, 9));
      float* out_p = buf.data() - lo;
      const auto in = loom::view(out_p + off, loom::shape(n), "in");
      const auto out = loom::view(out_p, loom::shape(n), "out");
      const std::vector<float> before = buf;
      const auto in_at = [&](index_t q) { return double(before[std::size_t(q + off - lo)]); };
      const auto out_at = [&](index_t q) { return double(before[std::size_t(q - lo)]); };
      const auto check = [&](auto&& want, const char* what) {
        INFO(what);
        const auto r = lt::compare(out, [&](const idx_t<1>& q) { return want(q[0]); }, 0.0);
        CHECK(r.ok);
        if (!r.ok) UNSCOPED_INFO(r.message);
        buf = before;
      };
      loom::run(out(i) = in(i) * 2.f + 1.f);
      check([&](index_t q) { return in_at(q) * 2 + 1; }, "out = in * 2 + 1 (default)");
      loom::run<loom::schedule<loom::split<i, 8, loom::tail::shift_inwards>, loom::vectorize<loom::inner<i>>>>(out(i) = in(i) - 1.f);
      check([&](index_t q) { return in_at(q) - 1; }, "out = in - 1 (shifted tail)");
      loom::run<loom::schedule<loom::vectorize<i>>>(out(i) += in(i));
      check([&](index_t q) { return out_at(q) + in_at(q); }, "out += in");
      // A reduction reading the output's storage: out(i) = sum(r, in(i + r)) over the valid range.
      if (n > 2) {
        const auto inner_out = loom::view(out_p, loom::shape(n - 2), "out");
        loom::Tensor<float, 1> w("w", 3);
        w(0) = 1.f, w(1) = 2.f, w(2) = 4.f;
        loom::run(inner_out(i) = sum(j, in(i + j) * w(j)));
        for (index_t q = 0; q < n - 2; ++q) {
          INFO("q = " << q);
          CHECK(double(inner_out(q)) == in_at(q) + 2 * in_at(q + 1) + 4 * in_at(q + 2));
        }
        buf = before;
      }
    }
  }
  // 2-D: a row-major matrix and the same storage shifted by part of a row, and a GEMM whose C
  // shares storage with A.
  for (index_t shift : {index_t(1), index_t(5), index_t(12)}) {
    INFO("shift = " << shift);
    const index_t M = 9, N = 13;
    std::vector<double> buf(static_cast<std::size_t>(M * N + shift));
    for (std::size_t q = 0; q < buf.size(); ++q) buf[q] = double(q % 11) - 5;
    const std::vector<double> before = buf;
    const auto A = loom::view(buf.data() + shift, loom::shape(M, N), "A");
    const auto C = loom::view(buf.data(), loom::shape(M, N), "C");
    loom::run<loom::schedule<loom::vectorize<j>, loom::parallel<i>>>(C(i, j) = A(i, j) * A(i, j));
    for (index_t r = 0; r < M; ++r)
      for (index_t c = 0; c < N; ++c) {
        const double a = before[std::size_t(r * N + c + shift)];
        CHECK(C(r, c) == a * a);
      }
    buf = before;
    const index_t K = N;
    std::vector<double> Bv(static_cast<std::size_t>(K * N));
    for (std::size_t q = 0; q < Bv.size(); ++q) Bv[q] = double(q % 7) - 3;
    const auto B = loom::view(Bv.data(), loom::shape(K, N), "B");
    loom::run(C(i, j) = sum(k, A(i, k) * B(k, j)));
    for (index_t r = 0; r < M; ++r)
      for (index_t c = 0; c < N; ++c) {
        double want = 0;
        for (index_t q = 0; q < K; ++q) want += before[std::size_t(r * N + q + shift)] * Bv[std::size_t(q * N + c)];
        CHECK(C(r, c) == want);
      }
  }
}

TEST_CASE("fuzz: huge strides that do not overflow, and offsets past the extent", "[fuzz][bounds]") {
  std::vector<float> buf(64, 1.f);
  // A stride of 2^40 elements over an extent of 1 never steps: the view is valid and runs.
  const auto tall = loom::view(buf.data(), loom::shape(1, 8), loom::strides(index_t(1) << 40, 1), "tall");
  loom::Tensor<float, 2> out("out", 1, 8);
  loom::run(out(i, j) = tall(i, j) * 3.f);
  CHECK(std::all_of(out.begin(), out.end(), [](float v) { return v == 3.f; }));
  // An index offset far past the extent is a bounds_error, not a read.
  loom::Tensor<float, 1> a("a", 8), b("b", 8);
  CHECK_THROWS_AS(loom::run(b(i) = a(i + (index_t(1) << 40))), loom::bounds_error);
  CHECK_THROWS_AS(loom::run(b(i) = a(i - (index_t(1) << 62))), loom::bounds_error);
  CHECK_THROWS_AS(loom::run(b(i) = a((index_t(1) << 40) * i)), loom::bounds_error);
  // block() and strided() of a tensor with huge arguments: checked, no overflow.
  loom::Tensor<float, 2> T("T", 8, 8);
  CHECK_THROWS_AS(T.block({std::numeric_limits<index_t>::max(), 0}, {2, 2}), loom::bounds_error);
  CHECK_THROWS_AS(T.block({2, 2}, {std::numeric_limits<index_t>::max(), 1}), loom::bounds_error);
  const auto every = T.strided({std::numeric_limits<index_t>::max(), 3});
  CHECK(every.extent(0) == 1);
  CHECK(every.extent(1) == 3);
}

TEST_CASE("fuzz: NaN and infinities through every reduction", "[fuzz][nan]") {
  auto g = lt::make_rng("fuzz nan");
  for (int rep = 0; rep < 12; ++rep) {
    const index_t M = lt::pick_size(g, 40), K = lt::pick_size(g, 70);
    loom::Tensor<float, 2> X("X", M, K);
    lt::fill_random(X.view(), g, 0.5, 1.5);
    // Specials in random places, and one row of nothing but NaN.
    const double specials[] = {nan_v, inf_v, -inf_v};
    for (int q = 0; q < 6; ++q)
      X.data()[lt::uniform(g, 0, M * K - 1)] = float(specials[std::size_t(lt::uniform(g, 0, 2))]);
    const index_t all_nan = lt::uniform(g, 0, M - 1);
    for (index_t c = 0; c < K; ++c) X.data()[all_nan * K + c] = NAN;
    row_reductions_every_schedule(X);

    // Column reductions and a deterministic parallel reduction over the whole matrix.
    loom::Tensor<float, 1> col("col", K);
    loom::run(col(j) = maximum(i, X(i, j)));
    for (index_t c = 0; c < K; ++c) {
      double want = -inf_v;
      for (index_t r = 0; r < M; ++r) want = max_skip_nan(want, at2(X, r, c));
      CHECK(lt::close<float>(col(c), want, 0, 1));
    }
    loom::Tensor<float, 0> s("s");
    double total = 0, mn = inf_v;
    for (index_t q = 0; q < M * K; ++q) {
      total += double(X.data()[q]);
      mn = min_skip_nan(mn, double(X.data()[q]));
    }
    const auto flat = loom::view(X.data(), loom::shape(M * K), "flat");
    loom::run<loom::schedule<loom::split<i, 64>, loom::vectorize<loom::inner<i>>, loom::parallel<loom::outer<i>>>>(s() = minimum(i, flat(i)));
    CHECK(lt::close<float>(s.data()[0], mn, 0, 1));  // the deterministic parallel reduction
    loom::run(s() = sum(i, j, X(i, j)));
    CHECK(std::isnan(s.data()[0]));
    CHECK(std::isnan(total));
  }
}

TEST_CASE("fuzz: elementwise max and min with NaN agree with std::max and std::min in every schedule", "[fuzz][nan]") {
  const index_t n = 37;
  loom::Tensor<float, 1> a("a", n), b("b", n), o("o", n);
  for (index_t q = 0; q < n; ++q) {
    a(q) = (q % 3 == 0) ? NAN : float(q % 5) - 2.f;
    b(q) = (q % 4 == 1) ? NAN : (q % 7 == 0) ? -0.f : float(q % 3) - 1.f;
  }
  const auto check = [&](auto&& want, const char* what) {
    INFO(what);
    const auto r = lt::compare_bits(o.view(), [&] {
      loom::Tensor<float, 1> w("want", n);
      for (index_t q = 0; q < n; ++q) w(q) = want(a(q), b(q));
      return w;
    }().view());
    CHECK(r.ok);
    if (!r.ok) UNSCOPED_INFO(r.message);
  };
  const auto std_max = [](float x, float y) { return std::max(x, y); };
  const auto std_min = [](float x, float y) { return std::min(x, y); };
  loom::run<loom::schedule<>>(o(i) = loom::max(a(i), b(i)));
  check(std_max, "max, scalar");
  loom::run<loom::schedule<loom::vectorize<i>>>(o(i) = loom::max(a(i), b(i)));
  check(std_max, "max, vectorized");
  loom::run<loom::schedule<>>(o(i) = loom::min(a(i), b(i)));
  check(std_min, "min, scalar");
  loom::run<loom::schedule<loom::vectorize<i>>>(o(i) = loom::min(a(i), b(i)));
  check(std_min, "min, vectorized");
}

TEST_CASE("fuzz: NaN and infinities through the GEMM engine propagate like the plain loop", "[fuzz][nan][gemm]") {
  auto g = lt::make_rng("fuzz gemm nan");
  for (int rep = 0; rep < 6; ++rep) {
    const index_t M = lt::pick_size(g, 70), N = lt::pick_size(g, 70), K = lt::pick_size(g, 90);
    INFO("M, N, K = " << M << ", " << N << ", " << K);
    loom::Tensor<double, 2> A("A", M, K), B("B", K, N), C("C", M, N);
    lt::fill_random(A.view(), g);
    lt::fill_random(B.view(), g);
    A.data()[lt::uniform(g, 0, M * K - 1)] = nan_v;
    A.data()[lt::uniform(g, 0, M * K - 1)] = inf_v;
    B.data()[lt::uniform(g, 0, K * N - 1)] = 0.0;  // inf * 0 = NaN where they meet
    B.data()[lt::uniform(g, 0, K * N - 1)] = -inf_v;
    const auto ref = [&](const idx_t<2>& q) {
      double acc = 0;
      for (index_t p = 0; p < K; ++p) acc += at2(A, q[0], p) * at2(B, p, q[1]);
      return acc;
    };
    // C holds NaN before: `=` and beta = 0 never read it.
    lt::fill(C.view(), nan_v);
    loom::run(C(i, j) = sum(k, A(i, k) * B(k, j)));
    auto r = lt::compare(C.view(), ref, lt::tolerance<double>(K));
    CHECK(r.ok);
    if (!r.ok) UNSCOPED_INFO(r.message);
    lt::fill(C.view(), nan_v);
    loom::gemm(C, A, B, 1.0, 0.0);
    r = lt::compare(C.view(), ref, lt::tolerance<double>(K));
    CHECK(r.ok);
    if (!r.ok) UNSCOPED_INFO(r.message);
    // `+=` reads C: its NaN stays.
    lt::fill(C.view(), nan_v);
    loom::run(C(i, j) += sum(k, A(i, k) * B(k, j)));
    CHECK(std::all_of(C.begin(), C.end(), [](double v) { return std::isnan(v); }));
  }
}

TEST_CASE("fuzz: random shapes and layouts through the default schedule", "[fuzz][random]") {
  auto g = lt::make_rng("fuzz random shapes");
  for (int rep = 0; rep < 40; ++rep) {
    const idx_t<2> e{lt::pick_size(g, 60, 0), lt::pick_size(g, 60, 0)};
    const auto la = lt::pick_layout(g), lb = lt::pick_layout(g), lo = lt::pick_layout(g);
    auto A = lt::random_buffer<float, 2>(e, la, "A", g);
    auto B = lt::random_buffer<float, 2>(e, lb, "B", g);
    auto O = lt::make_buffer<float, 2>(e, lo, "O");
    auto v = lt::random_buffer<float, 1>({e[0]}, lt::pick_layout(g), "v", g);
    auto w = lt::make_buffer<float, 1>({e[1]}, lt::pick_layout(g), "w");
    INFO(A.describe() << ", " << B.describe() << ", " << O.describe());
    const auto a = [&](index_t r, index_t c) { return double(lt::at(A.view, idx_t<2>{r, c})); };
    const auto b = [&](index_t r, index_t c) { return double(lt::at(B.view, idx_t<2>{r, c})); };
    const auto vv = [&](index_t r) { return double(lt::at(v.view, idx_t<1>{r})); };

    loom::run(O.view(i, j) = A.view(i, j) * B.view(i, j) + v.view(i));
    auto r = lt::compare(O.view, [&](const idx_t<2>& q) { return a(q[0], q[1]) * b(q[0], q[1]) + vv(q[0]); },
                         lt::tolerance<float>(2));
    CHECK(r.ok);
    if (!r.ok) UNSCOPED_INFO(r.message);
    loom::run(O.view(i, j) = loom::max(A.view(i, j), B.view(i, j)) - loom::exp(v.view(i)));
    r = lt::compare(O.view, [&](const idx_t<2>& q) { return std::max(a(q[0], q[1]), b(q[0], q[1])) - std::exp(vv(q[0])); },
                    lt::tolerance<float>(4));
    CHECK(r.ok);
    if (!r.ok) UNSCOPED_INFO(r.message);
    CHECK(O.untouched().ok);

    loom::run(v.view(i) = sum(j, A.view(i, j) * B.view(i, j)));
    r = lt::compare(v.view, [&](const idx_t<1>& q) {
      double s = 0;
      for (index_t c = 0; c < e[1]; ++c) s += a(q[0], c) * b(q[0], c);
      return s;
    }, lt::tolerance<float>(e[1]));
    CHECK(r.ok);
    if (!r.ok) UNSCOPED_INFO(r.message);
    loom::run(w.view(j) = maximum(i, A.view(i, j)));
    r = lt::compare(w.view, [&](const idx_t<1>& q) {
      double m = -inf_v;
      for (index_t rr = 0; rr < e[0]; ++rr) m = std::max(m, a(rr, q[0]));
      return m;
    }, 0.0);
    CHECK(r.ok);
    if (!r.ok) UNSCOPED_INFO(r.message);
    CHECK(v.untouched().ok);
    CHECK(w.untouched().ok);
  }
}
