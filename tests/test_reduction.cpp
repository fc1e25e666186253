// tests/test_reduction.cpp — sum, product, maximum, minimum over one, two and three variables:
// row and column reductions, full reductions into rank-0 tensors, dot products, contractions with
// epilogues, `+=` with a reduction, several reductions in one expression, empty reduction ranges
// and convolutions. References are plain loops accumulated in double (exact for int32).
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;
using lt::idx_t;

namespace {

template <class T, std::size_t R>
void expect_match(const char* what, const lt::buffer<T, R>& out, const std::vector<double>& ref, double tol, double floor = 1.0) {
  const auto r = lt::compare(out.view, ref, tol, floor);
  INFO(what << ": " << out.describe() << ": " << r.message);
  CHECK(r.ok);
  const auto u = out.untouched();
  INFO(u.message);
  CHECK(u.ok);
}

enum class rop { sum, product, maximum, minimum };

const char* rop_name(rop o) {
  switch (o) {
    case rop::sum: return "sum";
    case rop::product: return "product";
    case rop::maximum: return "maximum";
    case rop::minimum: return "minimum";
  }
  return "?";
}

template <class T>
double identity(rop o) {
  switch (o) {
    case rop::sum: return 0;
    case rop::product: return 1;
    case rop::maximum:
      return std::is_integral_v<T> ? double(std::numeric_limits<T>::lowest()) : -std::numeric_limits<double>::infinity();
    case rop::minimum:
      return std::is_integral_v<T> ? double(std::numeric_limits<T>::max()) : std::numeric_limits<double>::infinity();
  }
  return 0;
}

double combine(rop o, double a, double b) {
  switch (o) {
    case rop::sum: return a + b;
    case rop::product: return a * b;
    case rop::maximum: return std::max(a, b);
    case rop::minimum: return std::min(a, b);
  }
  return 0;
}

/// Values for which the reduction is well conditioned and, for the extrema, for which a zero
/// (what a masked load puts in dead lanes) would win if it leaked in.
template <class T>
std::pair<double, double> value_range(rop o) {
  switch (o) {
    case rop::sum: return std::is_integral_v<T> ? std::pair{-1000.0, 1000.0} : std::pair{-1.0, 1.0};
    case rop::product: return std::is_integral_v<T> ? std::pair{-1.0, 1.0} : std::pair{0.97, 1.03};
    case rop::maximum: return std::is_integral_v<T> ? std::pair{-100000.0, -1.0} : std::pair{-10.0, -0.5};
    case rop::minimum: return std::is_integral_v<T> ? std::pair{1.0, 100000.0} : std::pair{0.5, 10.0};
  }
  return {0, 0};
}

template <class T>
double reduce_tol(rop o, index_t len) {
  if (o == rop::maximum || o == rop::minimum) return 0.0;  // exact
  return lt::tolerance<T>(len);
}

/// out(i) = op(j, X(i, j)) and out(j) = op(i, X(i, j)) through a scalar, a vectorized and the
/// default schedule.
template <class T, rop O, bool WithDefault, class Red>
void rows_and_columns(Red red) {
  auto g = lt::make_rng(lt::str("rows and columns ", rop_name(O), lt::type_name<T>()));
  const auto [lo, hi] = value_range<T>(O);
  for (int rep = 0; rep < 25; ++rep) {
    const index_t M = lt::pick_size(g, 100), N = lt::pick_size(g, 100);
    auto X = lt::random_buffer<T, 2>({M, N}, lt::pick_layout(g), "X", g, lo, hi);
    if constexpr (std::is_integral_v<T>)
      if (O == rop::product)  // mostly ones, a few -1 and 2: exact and far from overflow
        lt::for_each_index(lt::extents_of(X.view), [&](const auto& q) {
          const index_t r = lt::uniform(g, 0, 9);
          lt::at(X.view, q) = r == 0 ? -1 : r == 1 ? 2 : 1;
        });
    std::vector<double> rows(static_cast<std::size_t>(M), identity<T>(O)), cols(static_cast<std::size_t>(N), identity<T>(O));
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) {
        rows[std::size_t(a)] = combine(O, rows[std::size_t(a)], double(X.view(a, b)));
        cols[std::size_t(b)] = combine(O, cols[std::size_t(b)], double(X.view(a, b)));
      }
    auto out_r = lt::make_buffer<T, 1>({M}, lt::pick_layout(g), "rows");
    auto out_c = lt::make_buffer<T, 1>({N}, lt::pick_layout(g), "cols");
    auto def_r = out_r.view(i) = red(j, X.view(i, j));
    auto def_c = out_c.view(j) = red(i, X.view(i, j));
    INFO(rop_name(O) << " on " << lt::type_name<T>() << ", M = " << M << ", N = " << N << "; " << X.describe());
    const double tr = reduce_tol<T>(O, N), tc = reduce_tol<T>(O, M);

    if constexpr (WithDefault) {  // (the default schedules are costly to compile: a few only)
      loom::run(def_r);
      expect_match("rows, default", out_r, rows, tr);
      loom::run(def_c);
      expect_match("cols, default", out_c, cols, tc);
    }
    lt::fill(out_r.view, lt::sentinel<T>());
    loom::run<loom::schedule<>>(def_r);
    expect_match("rows, schedule<>", out_r, rows, tr);
    lt::fill(out_r.view, lt::sentinel<T>());
    lt::fill(out_c.view, lt::sentinel<T>());
    // Lanes along the reduction (rows) and along the output (columns), masked tails.
    loom::run<loom::schedule<loom::vectorize<j, loom::native, loom::tail::masked>>>(def_r);
    expect_match("rows, vectorize<j, masked>", out_r, rows, tr);
    lt::fill(out_r.view, lt::sentinel<T>());
    loom::run<loom::schedule<loom::reorder<j, i>, loom::vectorize<j, loom::native, loom::tail::guard>>>(def_r);
    expect_match("rows, vectorize<j, guard>, reorder<j, i>", out_r, rows, tr);
    loom::run<loom::schedule<loom::vectorize<j, loom::native, loom::tail::masked>>>(def_c);
    expect_match("cols, vectorize<j, masked>", out_c, cols, tc);
  }
}

}  // namespace

TEST_CASE("reductions: rows and columns, every operator and element type", "[reduction]") {
  auto s = [](auto v, auto e) { return sum(v, e); };
  auto p = [](auto v, auto e) { return product(v, e); };
  auto mx = [](auto v, auto e) { return maximum(v, e); };
  SECTION("float") {
    // (the schedule matrix covers float sums, products and minima under many more schedules)
    rows_and_columns<float, rop::sum, false>(s);
    rows_and_columns<float, rop::maximum, true>(mx);
  }
  SECTION("double") {
    rows_and_columns<double, rop::sum, true>(s);
  }
  SECTION("int32") {
    rows_and_columns<int, rop::sum, true>(s);
    rows_and_columns<int, rop::product, false>(p);
    rows_and_columns<int, rop::maximum, false>(mx);
  }
}

TEST_CASE("reductions: full reductions into rank-0 tensors and dot products", "[reduction][rank0]") {
  auto g = lt::make_rng("full reductions");
  std::vector<index_t> sizes = lt::sizes_up_to(200);
  for (int q = 0; q < 4; ++q) sizes.push_back(lt::uniform(g, 200, 5000));
  for (index_t n : sizes) {
    auto v = lt::random_buffer<float, 1>({n}, lt::pick_layout(g), "v", g);
    auto w = lt::random_buffer<float, 1>({n}, lt::pick_layout(g), "w", g);
    double s = 0, d = 0, mx = -INFINITY, mn = INFINITY, sa = 0;
    for (index_t q = 0; q < n; ++q) {
      s += v.view(q);
      sa += std::abs(double(v.view(q)) * w.view(q));
      d += double(v.view(q)) * w.view(q);
      mx = std::max(mx, double(v.view(q)));
      mn = std::min(mn, double(v.view(q)));
    }
    loom::Tensor<float, 0> r("r");
    INFO("n = " << n << "; " << v.describe() << "; " << w.describe());
    const double tol = lt::tolerance<float>(n);
    loom::run(r() = sum(i, v.view(i)));
    CHECK(lt::close(r.data()[0], s, tol, 1.0));
    loom::run(r() = sum(i, v.view(i) * w.view(i)));
    CHECK(lt::close(r.data()[0], d, tol, std::max(1.0, sa)));
    loom::run<loom::schedule<loom::vectorize<i, lt::w16b<float>, loom::tail::masked>, loom::unroll<loom::outer<i>, 3>>>(
        r() = sum(i, v.view(i) * w.view(i)));
    CHECK(lt::close(r.data()[0], d, tol, std::max(1.0, sa)));
    loom::run<loom::schedule<loom::split<i, 4>, loom::unroll<loom::inner<i>>>>(r() = sum(i, v.view(i) * w.view(i)));
    CHECK(lt::close(r.data()[0], d, tol, std::max(1.0, sa)));
    loom::run(r() = maximum(i, v.view(i)));
    CHECK(r.data()[0] == float(mx));
    loom::run<loom::schedule<loom::vectorize<i, loom::native, loom::tail::masked>>>(r() = minimum(i, v.view(i)));
    CHECK(r.data()[0] == float(mn));
    // No loops at all: a rank-0 output and two reductions, both inline.
    loom::run<loom::schedule<>>(r() = minimum(i, v.view(i)) - maximum(i, v.view(i)));
    CHECK(r.data()[0] == float(mn) - float(mx));

    // double and int32 dot products.
    auto vd = lt::random_buffer<double, 1>({n}, lt::pick_layout(g), "vd", g);
    auto vi = lt::random_buffer<int, 1>({n}, lt::pick_layout(g), "vi", g, -1000, 1000);
    double dd = 0, ii = 0;
    for (index_t q = 0; q < n; ++q) {
      dd += vd.view(q) * vd.view(q);
      ii += double(vi.view(q)) * vi.view(q);
    }
    loom::Tensor<double, 0> rd("rd");
    loom::Tensor<int, 0> ri("ri");
    loom::run(rd() = sum(i, vd.view(i) * vd.view(i)));
    CHECK(lt::close(rd.data()[0], dd, lt::tolerance<double>(n), 1.0));
    loom::run(ri() = sum(i, vi.view(i) * vi.view(i)));  // int32 lane reduction, masked tail
    CHECK(ri.data()[0] == int(ii));
    ri.data()[0] = -1;
    loom::run<loom::schedule<loom::split<i, 4>, loom::unroll<loom::inner<i>>>>(ri() = sum(i, vi.view(i) * vi.view(i)));
    CHECK(ri.data()[0] == int(ii));
  }
}

TEST_CASE("reductions: over two and three variables at once", "[reduction]") {
  auto g = lt::make_rng("multi-variable reductions");
  for (int rep = 0; rep < 25; ++rep) {
    const index_t P = lt::pick_size(g, 17), M = lt::pick_size(g, 20), N = lt::pick_size(g, 40);
    auto X = lt::random_buffer<float, 3>({P, M, N}, lt::pick_layout(g), "X", g);
    std::vector<double> r1(static_cast<std::size_t>(P), 0.0), r1max(static_cast<std::size_t>(P), -INFINITY);
    double all = 0;
    for (index_t a = 0; a < P; ++a)
      for (index_t b = 0; b < M; ++b)
        for (index_t c = 0; c < N; ++c) {
          r1[std::size_t(a)] += X.view(a, b, c);
          r1max[std::size_t(a)] = std::max(r1max[std::size_t(a)], double(X.view(a, b, c)));
          all += X.view(a, b, c);
        }
    auto out = lt::make_buffer<float, 1>({P}, lt::pick_layout(g), "out");
    INFO("P = " << P << ", M = " << M << ", N = " << N << "; " << X.describe());
    const double tol = lt::tolerance<float>(M * N);
    loom::run(out.view(i) = sum(j, k, X.view(i, j, k)));
    expect_match("sum(j, k), default", out, r1, tol);
    loom::run<loom::schedule<loom::reorder<i, k, j>, loom::vectorize<k, loom::native, loom::tail::masked>>>(
        out.view(i) = sum(j, k, X.view(i, j, k)));  // the reduction loops in another order (k before j)
    expect_match("sum(j, k), vectorize<k>, k outside j", out, r1, tol);
    loom::run<loom::schedule<loom::fuse<j, k>, loom::parallel<i>>>(out.view(i) = maximum(j, k, X.view(i, j, k)));
    expect_match("maximum(j, k), fuse<j, k>, parallel<i>", out, r1max, 0);
    // Order of the reduction variables in the call does not matter.
    loom::run(out.view(i) = sum(k, j, X.view(i, j, k)));
    expect_match("sum(k, j)", out, r1, tol);

    loom::Tensor<float, 0> s("s");
    loom::run(s() = sum(i, j, k, X.view(i, j, k)));
    CHECK(lt::close(s.data()[0], all, lt::tolerance<float>(P * M * N), 1.0));
    loom::run<loom::schedule<loom::vectorize<k>, loom::unroll<j, 2>>>(s() = sum(i, j, k, X.view(i, j, k)));
    CHECK(lt::close(s.data()[0], all, lt::tolerance<float>(P * M * N), 1.0));
  }
}

TEST_CASE("reductions: contractions with epilogues", "[reduction][gemm]") {
  auto g = lt::make_rng("gemm epilogue");
  for (int rep = 0; rep < 25; ++rep) {
    const index_t M = lt::pick_size(g, 80), N = lt::pick_size(g, 80), K = lt::pick_size(g, 80);
    auto A = lt::random_buffer<float, 2>({M, K}, lt::pick_layout(g), "A", g);
    auto B = lt::random_buffer<float, 2>({K, N}, lt::pick_layout(g), "B", g);
    auto bias = lt::random_buffer<float, 1>({N}, lt::pick_layout(g), "bias", g);
    auto C = lt::make_buffer<float, 2>({M, N}, lt::pick_layout(g), "C");
    const float alpha = 0.75f;
    std::vector<double> dot(static_cast<std::size_t>(M * N), 0.0);
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b)
        for (index_t c = 0; c < K; ++c) dot[std::size_t(a * N + b)] += double(A.view(a, c)) * B.view(c, b);
    std::vector<double> ref(dot.size());
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) ref[std::size_t(a * N + b)] = std::max(dot[std::size_t(a * N + b)] * alpha + bias.view(b), 0.0);
    INFO("M = " << M << ", N = " << N << ", K = " << K << "; " << A.describe() << "; " << B.describe());
    const double tol = lt::tolerance<float>(K);
    auto def = C.view(i, j) = max(sum(k, A.view(i, k) * B.view(k, j)) * alpha + bias.view(j), 0.f);
    loom::run<loom::schedule<loom::vectorize<j, loom::native, loom::tail::masked>, loom::parallel<i>>>(def);
    expect_match("relu(A B * alpha + bias), vectorize<j>, parallel<i>", C, ref, tol);
    // The reduction on either side of the epilogue's operators, and inside a function.
    auto def2 = C.view(i, j) = bias.view(j) - sigmoid(sum(k, A.view(i, k) * B.view(k, j)));
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b)
        ref[std::size_t(a * N + b)] = bias.view(b) - 1.0 / (1.0 + std::exp(-dot[std::size_t(a * N + b)]));
    loom::run<loom::schedule<loom::vectorize<j>, loom::parallel<i>>>(def2);
    expect_match("bias - sigmoid(A B), vectorize<j>", C, ref, tol);
    loom::run<loom::schedule<loom::vectorize<k, loom::native, loom::tail::masked>, loom::unroll<loom::outer<k>, 2>>>(def2);
    expect_match("bias - sigmoid(A B), vectorize<k>", C, ref, tol);
    // A contraction with the second operand transposed: C = A A^T.
    auto At = loom::view(A.view.data(), loom::shape(K, M), loom::strides(A.view.stride(1), A.view.stride(0)), "At");
    auto S = lt::make_buffer<float, 2>({M, M}, lt::pick_layout(g), "S");
    std::vector<double> sref(static_cast<std::size_t>(M * M), 0.0);
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < M; ++b)
        for (index_t c = 0; c < K; ++c) sref[std::size_t(a * M + b)] += double(A.view(a, c)) * A.view(b, c);
    loom::run<loom::schedule<loom::reorder<i, k, j>, loom::vectorize<j>>>(S.view(i, j) = sum(k, A.view(i, k) * At(k, j)));
    expect_match("A A^T", S, sref, tol);
  }
}

TEST_CASE("reductions: += with a reduction", "[reduction][accumulate]") {
  auto g = lt::make_rng("plus equals reduction");
  for (int rep = 0; rep < 25; ++rep) {
    const index_t M = lt::pick_size(g, 60), N = lt::pick_size(g, 60), K = lt::pick_size(g, 60);
    auto A = lt::random_buffer<float, 2>({M, K}, lt::pick_layout(g), "A", g);
    auto B = lt::random_buffer<float, 2>({K, N}, lt::pick_layout(g), "B", g);
    auto C = lt::random_buffer<float, 2>({M, N}, lt::pick_layout(g), "C", g);
    std::vector<double> ref(static_cast<std::size_t>(M * N));
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) ref[std::size_t(a * N + b)] = C.view(a, b);
    auto step = [&](double scale) {
      for (index_t a = 0; a < M; ++a)
        for (index_t b = 0; b < N; ++b) {
          double d = 0;
          for (index_t c = 0; c < K; ++c) d += double(A.view(a, c)) * B.view(c, b);
          ref[std::size_t(a * N + b)] += scale * d;
        }
    };
    INFO("M = " << M << ", N = " << N << ", K = " << K << "; " << C.describe());
    const double tol = lt::tolerance<float>(K) * 2;
    loom::run<loom::schedule<loom::vectorize<j, loom::native, loom::tail::masked>, loom::parallel<i>>>(
        C.view(i, j) += sum(k, A.view(i, k) * B.view(k, j)));
    step(1);
    expect_match("C += A B, vectorize<j>, parallel<i>", C, ref, tol);
    // The output as the accumulator: k outside i and j.
    loom::run<loom::schedule<loom::reorder<k, i, j>, loom::vectorize<j, loom::native, loom::tail::masked>>>(
        C.view(i, j) += sum(k, A.view(i, k) * B.view(k, j)));
    step(1);
    expect_match("C += A B, reorder<k, i, j>", C, ref, tol);
    loom::run<loom::schedule<loom::vectorize<k, loom::native, loom::tail::guard>>>(C.view(i, j) += sum(k, A.view(i, k) * B.view(k, j)) * 2.f);
    step(2);
    expect_match("C += 2 A B, vectorize<k>", C, ref, tol);
    // Row maxima added to a vector.
    auto r = lt::random_buffer<float, 1>({M}, lt::pick_layout(g), "r", g);
    std::vector<double> rref(static_cast<std::size_t>(M));
    for (index_t a = 0; a < M; ++a) {
      double m = -INFINITY;
      for (index_t c = 0; c < K; ++c) m = std::max(m, double(A.view(a, c)));
      rref[std::size_t(a)] = double(r.view(a)) + float(m);
    }
    loom::run<loom::schedule<loom::vectorize<k, loom::native, loom::tail::masked>>>(r.view(i) += maximum(k, A.view(i, k)));
    expect_match("r += maximum(k, A)", r, rref, 1e-6);
  }
}

TEST_CASE("reductions: several and nested reductions in one expression", "[reduction]") {
  auto g = lt::make_rng("several reductions");
  for (int rep = 0; rep < 25; ++rep) {
    const index_t M = lt::pick_size(g, 60), N = lt::pick_size(g, 60);
    auto X = lt::random_buffer<float, 2>({M, N}, lt::pick_layout(g), "X", g);
    auto Y = lt::random_buffer<float, 2>({N, M}, lt::pick_layout(g), "Y", g);
    auto out = lt::make_buffer<float, 1>({M}, lt::pick_layout(g), "out");
    std::vector<double> ref(static_cast<std::size_t>(M));
    for (index_t a = 0; a < M; ++a) {
      double s = 0, m = -INFINITY;
      for (index_t b = 0; b < N; ++b) {
        s += X.view(a, b);
        m = std::max(m, double(X.view(a, b)));
      }
      ref[std::size_t(a)] = s + m;
    }
    INFO("M = " << M << ", N = " << N << "; " << X.describe());
    const double tol = lt::tolerance<float>(N);
    auto def = out.view(i) = sum(j, X.view(i, j)) + maximum(j, X.view(i, j));
    loom::run(def);
    expect_match("sum + maximum, default", out, ref, tol);
    loom::run<loom::schedule<loom::vectorize<i, loom::native, loom::tail::masked>>>(def);
    expect_match("sum + maximum, vectorize<i>", out, ref, tol);
    loom::run<loom::schedule<loom::split<i, 3>, loom::parallel<loom::outer<i>>>>(def);
    expect_match("sum + maximum, parallel", out, ref, tol);

    // Nested: out(i) = sum(j, X(i, j) * maximum(k, Y(j, k))).
    std::vector<double> ymax(static_cast<std::size_t>(N), -INFINITY);
    for (index_t b = 0; b < N; ++b)
      for (index_t c = 0; c < M; ++c) ymax[std::size_t(b)] = std::max(ymax[std::size_t(b)], double(Y.view(b, c)));
    for (index_t a = 0; a < M; ++a) {
      double s = 0;
      for (index_t b = 0; b < N; ++b) s += X.view(a, b) * ymax[std::size_t(b)];
      ref[std::size_t(a)] = s;
    }
    auto nested = out.view(i) = sum(j, X.view(i, j) * maximum(k, Y.view(j, k)));
    loom::run(nested);
    expect_match("nested, default", out, ref, tol);
    loom::run<loom::schedule<loom::vectorize<i>>>(nested);
    expect_match("nested, vectorize<i>", out, ref, tol);

    // Softmax-like: a reduction over the row inside an elementwise 2-D definition.
    auto P = lt::make_buffer<float, 2>({M, N}, lt::pick_layout(g), "P");
    std::vector<double> pref(static_cast<std::size_t>(M * N));
    for (index_t a = 0; a < M; ++a) {
      double m = -INFINITY;
      for (index_t b = 0; b < N; ++b) m = std::max(m, double(X.view(a, b)));
      for (index_t b = 0; b < N; ++b) pref[std::size_t(a * N + b)] = std::exp(double(X.view(a, b)) - m);
    }
    // A reduction under a binary node under a function: exp(X - rowmax).
    auto soft = P.view(i, j) = exp(X.view(i, j) - maximum(k, X.view(i, k)));
    loom::run<loom::schedule<loom::vectorize<j, loom::native, loom::tail::masked>>>(soft);
    expect_match("exp(X - rowmax), vectorize<j>", P, pref, 1e-6);
    loom::run<loom::schedule<loom::reorder<j, i>, loom::vectorize<i>>>(soft);
    expect_match("exp(X - rowmax), reorder<j, i>, vectorize<i>", P, pref, 1e-6);
  }
}

TEST_CASE("reductions: an empty reduction range gives the identity", "[reduction][empty]") {
  for (index_t M : {1, 5, 17, 64}) {
    INFO("M = " << M);
    loom::Tensor<float, 2> X("X", M, 0);
    loom::Tensor<int, 2> Xi("Xi", M, 0);
    loom::Tensor<float, 1> out("out", M);
    loom::Tensor<int, 1> outi("outi", M);
    auto all = [&](float v) { return std::all_of(out.begin(), out.end(), [&](float e) { return e == v; }); };
    auto alli = [&](int v) { return std::all_of(outi.begin(), outi.end(), [&](int e) { return e == v; }); };
    lt::fill(out.view(), 7.f);
    loom::run(out(i) = sum(j, X(i, j)));
    CHECK(all(0.f));
    loom::run<loom::schedule<loom::vectorize<j, loom::native, loom::tail::masked>>>(out(i) = product(j, X(i, j)));
    CHECK(all(1.f));
    loom::run<loom::schedule<loom::vectorize<j, loom::native, loom::tail::guard>>>(out(i) = maximum(j, X(i, j)));
    CHECK(all(-INFINITY));
    loom::run<loom::schedule<loom::vectorize<i>>>(out(i) = minimum(j, X(i, j)));
    CHECK(all(INFINITY));
    loom::run<loom::schedule<loom::reorder<j, i>>>(out(i) = sum(j, X(i, j)));  // output as the accumulator
    CHECK(all(0.f));
    loom::run<loom::schedule<loom::vectorize<j>>>(out(i) = sum(j, X(i, j)) * 2.f + 3.f);  // the epilogue still runs
    CHECK(all(3.f));
    // (int32 with scalar schedules: the default one does not compile yet, see "rows and columns")
    loom::run<loom::schedule<>>(outi(i) = maximum(j, Xi(i, j)));
    CHECK(alli(std::numeric_limits<int>::lowest()));
    loom::run<loom::schedule<loom::vectorize<i>>>(outi(i) = minimum(j, Xi(i, j)));
    CHECK(alli(std::numeric_limits<int>::max()));
    loom::run<loom::schedule<loom::reorder<j, i>>>(outi(i) = product(j, Xi(i, j)));
    CHECK(alli(1));
    // += of an empty sum leaves the output as it was.
    lt::fill(out.view(), 2.5f);
    loom::run<loom::schedule<loom::vectorize<i>>>(out(i) += sum(j, X(i, j)));
    CHECK(all(2.5f));
  }
  loom::Tensor<double, 1> empty("empty", 0);
  loom::Tensor<double, 0> s("s");
  s.data()[0] = 42;
  loom::run(s() = sum(i, empty(i)));
  CHECK(s.data()[0] == 0.0);
  loom::run(s() = maximum(i, empty(i)));
  CHECK(s.data()[0] == -INFINITY);
}

TEST_CASE("reductions: convolutions out(y, x) = sum(ry, rx, in(y + ry, x + rx) * w(ry, rx))", "[reduction][conv]") {
  auto g = lt::make_rng("conv");
  for (int rep = 0; rep < 25; ++rep) {
    const index_t H = lt::pick_size(g, 50), W = lt::pick_size(g, 50), KH = lt::uniform(g, 1, 5), KW = lt::uniform(g, 1, 7);
    auto in = lt::random_buffer<float, 2>({H + KH - 1, W + KW - 1}, lt::pick_layout(g), "in", g);
    auto w = lt::random_buffer<float, 2>({KH, KW}, lt::pick_layout(g), "w", g);
    auto out = lt::make_buffer<float, 2>({H, W}, lt::pick_layout(g), "out");
    std::vector<double> ref(static_cast<std::size_t>(H * W), 0.0);
    for (index_t a = 0; a < H; ++a)
      for (index_t b = 0; b < W; ++b)
        for (index_t p = 0; p < KH; ++p)
          for (index_t q = 0; q < KW; ++q) ref[std::size_t(a * W + b)] += double(in.view(a + p, b + q)) * w.view(p, q);
    INFO("H = " << H << ", W = " << W << ", kernel " << KH << " x " << KW << "; " << in.describe());
    const double tol = lt::tolerance<float>(KH * KW);
    auto def = out.view(y, x) = sum(ry, rx, in.view(y + ry, x + rx) * w.view(ry, rx));
    loom::run(def);
    expect_match("default", out, ref, tol);
    // (the schedule matrix runs this convolution under many more schedules)
    // Dilated / strided convolution: in(2 * y + 2 * ry, x + rx).
    auto in2 = lt::random_buffer<float, 2>({2 * H + 2 * KH, W + KW - 1}, lt::pick_layout(g), "in2", g);
    std::fill(ref.begin(), ref.end(), 0.0);
    for (index_t a = 0; a < H; ++a)
      for (index_t b = 0; b < W; ++b)
        for (index_t p = 0; p < KH; ++p)
          for (index_t q = 0; q < KW; ++q) ref[std::size_t(a * W + b)] += double(in2.view(2 * a + 2 * p, b + q)) * w.view(p, q);
    loom::run(out.view(y, x) = sum(ry, rx, in2.view(2 * y + 2 * ry, x + rx) * w.view(ry, rx)));
    expect_match("strided dilated", out, ref, tol);
  }
}

TEST_CASE("reductions: default row and column sums of a matrix that outgrows the cache", "[reduction][large]") {
  // Out of cache the default sums pick a nest by the row length; run each where it is picked
  // ("read ahead" where the target does, simd::default_read_ahead):
  //   97, 1000 columns: row sum one row at a time, column sum 8 rows at once, the next 8 read ahead;
  //   2053 columns:  both 8 rows at once, the next 8 read ahead;
  //   16411 columns: both 8 rows at once, each read 2 KiB ahead along the row;
  //   65599 columns: the same, and the column sum of so few rows in chunks of 64 rows (the same
  //                  nest, its chunk length chosen per run);
  //   40 rows:       the column sum in one chunk of 64 rows;
  //   15, 7, 1 rows: the column sum in strips of one vector, all rows at once.
  // Every shape with 8 rows or more ends in a partial block of 8 rows; every shape in a masked vector.
  const index_t cache = loom::simd::outgrows_cache_bytes();
  std::vector<std::pair<index_t, index_t>> shapes;  // (rows, columns), each just over `cache` bytes
  for (const index_t cols : {97, 1000, 2053, 16411, 65599}) shapes.emplace_back(cache / index_t(sizeof(float) * cols) + 37, cols);
  for (const index_t rows : {40, 15, 7, 1}) shapes.emplace_back(rows, cache / index_t(sizeof(float) * rows) + 37);
  for (const auto& [rows, cols] : shapes) {
    loom::Tensor<float, 2> X("X", rows, cols);
    loom::Tensor<float, 1> rs("rs", rows), cs("cs", cols);
    std::vector<double> rref(std::size_t(rows), 0.0), cref(std::size_t(cols), 0.0);
    for (index_t r = 0; r < rows; ++r)
      for (index_t q = 0; q < cols; ++q) {
        const float v = float((r * 7 + q * 13) % 31) * 0.125f - 1.5f;
        X(r, q) = v;
        rref[std::size_t(r)] += v;
        cref[std::size_t(q)] += v;
      }
    REQUIRE(loom::print_loop_nest(rs(i) = loom::sum(j, X(i, j))).find("if the run outgrows the last-level cache:\n  if j.extent >= ") == 0);
    const std::string cs_nest = loom::print_loop_nest(cs(j) = loom::sum(i, X(i, j)));
    REQUIRE(cs_nest.find("if i.extent >= 64:\n") == 0);
    // (fewer than 512 rows: chunks of 64 rows, chosen per run in the same nest)
    REQUIRE(cs_nest.find("chunks of 64 points of i when its extent is under 512") != std::string::npos);
    REQUIRE(cs_nest.find("if j.extent") == std::string::npos);  // short rows too: 8 rows at once
    loom::run(rs(i) = loom::sum(j, X(i, j)));
    loom::run(cs(j) = loom::sum(i, X(i, j)));
    // float sums of up to `rows` terms of magnitude <= 2.5
    auto near = [](double got, double want, double terms) { return std::abs(got - want) <= 2.5 * terms * 1.2e-7 * 4 + 1e-6; };
    index_t bad_rows = 0, bad_cols = 0;
    for (index_t r = 0; r < rows; ++r) bad_rows += !near(rs(r), rref[std::size_t(r)], double(cols));
    for (index_t q = 0; q < cols; ++q) bad_cols += !near(cs(q), cref[std::size_t(q)], double(rows));
    INFO(rows << " x " << cols << " floats");
    CHECK(bad_rows == 0);
    CHECK(bad_cols == 0);
  }
}
