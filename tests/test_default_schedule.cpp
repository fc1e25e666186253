// tests/test_default_schedule.cpp — loom::run(def) with no schedule over a corpus of definitions:
// ranks 1 to 5, reductions outermost, in the middle and innermost, over one and several variables,
// sum/maximum/minimum/product, contractions, stencils, broadcasts, transposed and column-major
// inputs, `+=`. Each runs against plain loops over several shapes (1, primes, tails), with the
// memory outside the output untouched and the same bits at 1 and 3 threads. Then a table pins
// the variable the default vectorizes (print_loop_nest), row-major and column-major.
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;
using loom::maximum;
using loom::minimum;
using loom::product;
using loom::sum;
using lt::idx_t;

namespace {

constexpr loom::Var<"q"> q;  // beyond the predefined loom::vars

template <std::size_t R, class F>
std::vector<double> reference(const idx_t<R>& ext, F&& f) {
  std::vector<double> ref;
  lt::for_each_index(ext, [&](const idx_t<R>& idx) { ref.push_back(f(idx)); });
  return ref;
}

/// Runs make(out)'s definition under the default schedule and checks it against ref; `+=`
/// definitions start from `init` (row-major), `=` from a sentinel.
template <class T, std::size_t R, class Make>
void check_default(const std::string& what, lt::buffer<T, R>& out, Make&& make, const std::vector<double>& ref, double tol,
                   const std::vector<double>& init = {}) {
  auto reset = [&] {
    std::size_t q0 = 0;
    lt::for_each_index(lt::extents_of(out.view), [&](const auto& idx) {
      lt::at(out.view, idx) = init.empty() ? lt::sentinel<T>() : static_cast<T>(init[q0++]);
    });
  };
  INFO(what << "; " << out.describe());
  reset();
  loom::run(make(out.view));
  const auto r = lt::compare(out.view, ref, tol);
  INFO(r.message);
  CHECK(r.ok);
  const auto u = out.untouched();
  INFO(u.message);
  CHECK(u.ok);
  if (!r.ok) return;
  std::vector<T> first;
  for (int threads : {1, 3}) {
    lt::thread_scope ts(threads);
    reset();
    loom::run(make(out.view));
    if (threads == 1) {
      first = out.store;
    } else {
      bool same = first.size() == out.store.size();
      for (std::size_t p = 0; same && p < first.size(); ++p) same = lt::same_bits(first[p], out.store[p]);
      INFO("3 threads differ from 1");
      CHECK(same);
    }
  }
}

/// Sizes of one dimension: 1, primes and vector tails, and one past the register tiles.
const std::vector<index_t> dims_small = {1, 3, 7, 17, 33};
const std::vector<index_t> dims_tiny = {1, 2, 5};

const std::vector<lt::layout> input_layouts = {lt::layout::row_major, lt::layout::col_major, lt::layout::transposed,
                                               lt::layout::strided};

}  // namespace

TEST_CASE("default schedule: rank 1 and full reductions", "[default_schedule]") {
  auto g = lt::make_rng("default rank 1");
  for (index_t N : {index_t{1}, index_t{2}, index_t{17}, index_t{97}, index_t{100003}}) {
    auto x = lt::random_buffer<float, 1>({N}, lt::layout::row_major, "x", g);
    auto y = lt::random_buffer<float, 1>({N}, lt::pick_layout(g), "y", g);
    auto out = lt::make_buffer<float, 1>({N}, lt::layout::row_major, "out");
    const auto xr = x.rows();
    check_default("out(i) = x(i) * 2 + y(i)", out, [&](const auto& o) { return o(i) = xr(i) * 2.f + y.view(i); },
                  reference<1>({N}, [&](const auto& a) { return 2.0 * xr(a[0]) + y.view(a[0]); }), 1e-6);
    auto s = lt::make_buffer<float, 0>({}, lt::layout::row_major, "s");
    double total = 0, most = -INFINITY;
    for (index_t a = 0; a < N; ++a) total += xr(a), most = std::max<double>(most, y.view(a));
    check_default("s() = sum(i, x(i))", s, [&](const auto& o) { return o() = sum(i, xr(i)); }, {total}, lt::tolerance<float>(N));
    check_default("s() = maximum(i, y(i))", s, [&](const auto& o) { return o() = maximum(i, y.view(i)); }, {most}, 0.0);
  }
  // A stencil: out(i) = sum(r, x(i + r) * w(r)).
  for (index_t N : {index_t{1}, index_t{13}, index_t{200}}) {
    for (index_t K : {index_t{1}, index_t{3}, index_t{8}}) {
      auto x = lt::random_buffer<float, 1>({N + K - 1}, lt::layout::row_major, "x", g);
      auto w = lt::random_buffer<float, 1>({K}, lt::layout::row_major, "w", g);
      auto out = lt::make_buffer<float, 1>({N}, lt::layout::row_major, "out");
      check_default("out(i) = sum(r, x(i + r) * w(r))", out, [&](const auto& o) { return o(i) = sum(r, x.view(i + r) * w.view(r)); },
                    reference<1>({N}, [&](const auto& a) {
                      double v = 0;
                      for (index_t b = 0; b < K; ++b) v += double(x.view(a[0] + b)) * w.view(b);
                      return v;
                    }),
                    lt::tolerance<float>(K));
    }
  }
}

TEST_CASE("default schedule: rank 2, reductions inner and outer, every input layout", "[default_schedule]") {
  auto g = lt::make_rng("default rank 2");
  for (lt::layout lay : input_layouts) {
    for (index_t M : dims_small) {
      for (index_t N : {index_t{1}, index_t{5}, index_t{16}, index_t{47}}) {
        auto X = lt::random_buffer<float, 2>({M, N}, lay, "X", g);
        auto v = lt::random_buffer<float, 1>({M}, lt::layout::row_major, "v", g);
        auto u = lt::random_buffer<float, 1>({N}, lt::layout::row_major, "u", g);
        auto& Xv = X.view;
        auto rows = lt::make_buffer<float, 1>({M}, lt::layout::row_major, "rows");
        auto cols = lt::make_buffer<float, 1>({N}, lt::layout::row_major, "cols");
        const double tn = lt::tolerance<float>(N), tm = lt::tolerance<float>(M);
        INFO(X.describe());
        // Reduction innermost: the row-wise sum of exp(X - v(i)).
        check_default("rows(i) = sum(j, exp(X(i, j) - v(i)))", rows,
                      [&](const auto& o) { return o(i) = sum(j, loom::exp(Xv(i, j) - v.view(i))); },
                      reference<1>({M}, [&](const auto& a) {
                        double s = 0;
                        for (index_t b = 0; b < N; ++b) s += std::exp(double(Xv(a[0], b)) - v.view(a[0]));
                        return s;
                      }),
                      tn);
        // Column minima on every layout: the reduction outermost.
        check_default("cols(j) = minimum(i, X(i, j))", cols, [&](const auto& o) { return o(j) = minimum(i, Xv(i, j)); },
                      reference<1>({N}, [&](const auto& a) {
                        double s = INFINITY;
                        for (index_t b = 0; b < M; ++b) s = std::min(s, double(Xv(b, a[0])));
                        return s;
                      }),
                      0.0);
        auto outT = lt::make_buffer<float, 2>({N, M}, lt::layout::col_major, "outT");
        check_default("outT(j, i) = X(i, j) (a column-major output)", outT, [&](const auto& o) { return o(j, i) = Xv(i, j); },
                      reference<2>({N, M}, [&](const auto& a) { return double(Xv(a[1], a[0])); }), 0.0);
        if (lay != lt::layout::row_major) continue;
        // The rest on rows unit-stride by type (layout_right), as loom::Tensor has them.
        const auto Xr = X.rows();
        check_default("rows(i) = maximum(j, X(i, j) * v(i)) * 2", rows,
                      [&](const auto& o) { return o(i) = maximum(j, Xr(i, j) * v.view(i)) * 2.f; },
                      reference<1>({M}, [&](const auto& a) {
                        double s = -INFINITY;
                        for (index_t b = 0; b < N; ++b) s = std::max(s, double(Xv(a[0], b) * v.view(a[0])));
                        return 2 * s;
                      }),
                      0.0);
        check_default("cols(j) = sum(i, X(i, j) * v(i)) + u(j)", cols,
                      [&](const auto& o) { return o(j) = sum(i, Xr(i, j) * v.view(i)) + u.view(j); },
                      reference<1>({N}, [&](const auto& a) {
                        double s = 0;
                        for (index_t b = 0; b < M; ++b) s += double(Xv(b, a[0])) * v.view(b);
                        return s + u.view(a[0]);
                      }),
                      tm);
        // `+=` of a row reduction (a matrix-vector product).
        std::vector<double> init;
        for (index_t a = 0; a < M; ++a) init.push_back(0.25 * double(a % 7));
        check_default("rows(i) += sum(j, X(i, j) * u(j))", rows, [&](const auto& o) { return o(i) += sum(j, Xr(i, j) * u.view(j)); },
                      reference<1>({M}, [&](const auto& a) {
                        double s = init[std::size_t(a[0])];
                        for (index_t b = 0; b < N; ++b) s += double(Xv(a[0], b)) * u.view(b);
                        return s;
                      }),
                      tn, init);
        // Elementwise with broadcasts, and a transpose.
        auto out = lt::make_buffer<float, 2>({M, N}, lt::layout::row_major, "out");
        check_default("out(i, j) = X(i, j) * v(i) + u(j)", out, [&](const auto& o) { return o(i, j) = Xr(i, j) * v.view(i) + u.view(j); },
                      reference<2>({M, N}, [&](const auto& a) { return double(Xv(a[0], a[1])) * v.view(a[0]) + u.view(a[1]); }), 1e-6);
      }
    }
  }
  // Large enough for the parallel thresholds and the out-of-cache nests' thresholds on rows.
  for (lt::layout lay : {lt::layout::row_major, lt::layout::col_major}) {
    const index_t M = 613, N = 1031;
    auto X = lt::random_buffer<float, 2>({M, N}, lay, "X", g);
    auto v = lt::random_buffer<float, 1>({M}, lt::layout::row_major, "v", g);
    auto rows = lt::make_buffer<float, 1>({M}, lt::layout::row_major, "rows");
    auto& Xv = X.view;
    check_default("large: rows(i) = sum(j, exp(X(i, j) - v(i)))", rows,
                  [&](const auto& o) { return o(i) = sum(j, loom::exp(Xv(i, j) - v.view(i))); },
                  reference<1>({M}, [&](const auto& a) {
                    double s = 0;
                    for (index_t b = 0; b < N; ++b) s += std::exp(double(Xv(a[0], b)) - v.view(a[0]));
                    return s;
                  }),
                  lt::tolerance<float>(N));
  }
}

TEST_CASE("default schedule: double, product, and two reductions in one expression", "[default_schedule]") {
  auto g = lt::make_rng("default mixed");
  for (index_t M : dims_small) {
    for (index_t N : {index_t{1}, index_t{6}, index_t{19}}) {
      const auto Xb = lt::random_buffer<double, 2>({M, N}, lt::pick_row_layout(g), "X", g);
      const auto Pb = lt::random_buffer<float, 2>({M, N}, lt::pick_row_layout(g), "P", g, 0.9, 1.1);
      const auto Yb = lt::random_buffer<float, 2>({M, N}, lt::pick_row_layout(g), "Y", g);
      struct rows_of {
        decltype(Xb.rows()) view;
      };
      struct rows_of_f {
        decltype(Yb.rows()) view;
      };
      const rows_of X{Xb.rows()};
      const rows_of_f P{Pb.rows()}, Y{Yb.rows()};
      auto rd = lt::make_buffer<double, 1>({M}, lt::layout::row_major, "rd");
      auto rf = lt::make_buffer<float, 1>({M}, lt::layout::row_major, "rf");
      check_default("rd(i) = sum(j, X(i, j) * X(i, j))", rd, [&](const auto& o) { return o(i) = sum(j, X.view(i, j) * X.view(i, j)); },
                    reference<1>({M}, [&](const auto& a) {
                      double s = 0;
                      for (index_t b = 0; b < N; ++b) s += X.view(a[0], b) * X.view(a[0], b);
                      return s;
                    }),
                    lt::tolerance<double>(N));
      check_default("rf(i) = product(j, P(i, j))", rf, [&](const auto& o) { return o(i) = product(j, P.view(i, j)); },
                    reference<1>({M}, [&](const auto& a) {
                      double s = 1;
                      for (index_t b = 0; b < N; ++b) s *= P.view(a[0], b);
                      return s;
                    }),
                    lt::tolerance<float>(N));
      check_default("rf(i) = sum(j, Y(i, j)) + maximum(j, Y(i, j))", rf,
                    [&](const auto& o) { return o(i) = sum(j, Y.view(i, j)) + maximum(j, Y.view(i, j)); },
                    reference<1>({M}, [&](const auto& a) {
                      double s = 0, m = -INFINITY;
                      for (index_t b = 0; b < N; ++b) s += Y.view(a[0], b), m = std::max<double>(m, Y.view(a[0], b));
                      return s + m;
                    }),
                    lt::tolerance<float>(N));
      // Casts between types of different sizes, which vector lanes cannot do: scalar loops.
      check_default("rd(i) = sum(j, cast<double>(Y(i, j)) * X(i, j))", rd,
                    [&](const auto& o) { return o(i) = sum(j, loom::cast<double>(Y.view(i, j)) * X.view(i, j)); },
                    reference<1>({M}, [&](const auto& a) {
                      double s = 0;
                      for (index_t b = 0; b < N; ++b) s += double(Y.view(a[0], b)) * X.view(a[0], b);
                      return s;
                    }),
                    lt::tolerance<double>(N));
      auto md = lt::make_buffer<double, 2>({M, N}, lt::layout::row_major, "md");
      check_default("md(i, j) = cast<double>(Y(i, j)) + X(i, j)", md,
                    [&](const auto& o) { return o(i, j) = loom::cast<double>(Y.view(i, j)) + X.view(i, j); },
                    reference<2>({M, N}, [&](const auto& a) { return double(Y.view(a[0], a[1])) + X.view(a[0], a[1]); }), 0.0);
    }
  }
}

TEST_CASE("default schedule: rank 3, the reduction in every position", "[default_schedule]") {
  auto g = lt::make_rng("default rank 3");
  for (index_t A : dims_tiny) {
    for (index_t B : {index_t{1}, index_t{4}, index_t{9}}) {
      for (index_t C : {index_t{1}, index_t{3}, index_t{17}, index_t{35}}) {
        auto X = lt::random_buffer<float, 3>({A, B, C}, lt::pick_layout(g), "X", g);
        auto Xrb = lt::random_buffer<float, 3>({A, B, C}, lt::pick_row_layout(g), "Xr", g);
        const auto Xv = Xrb.rows();
        const auto& Xs = X.view;  // any layout: strides known at run time
        INFO(X.describe() << "; " << Xrb.describe());
        auto o_bc = lt::make_buffer<float, 2>({B, C}, lt::layout::row_major, "o_bc");
        auto o_ac = lt::make_buffer<float, 2>({A, C}, lt::layout::row_major, "o_ac");
        auto o_ab = lt::make_buffer<float, 2>({A, B}, lt::pick_layout(g), "o_ab");
        auto o_a = lt::make_buffer<float, 1>({A}, lt::layout::row_major, "o_a");
        check_default("o(j, k) = sum(i, X(i, j, k))", o_bc, [&](const auto& o) { return o(j, k) = sum(i, Xv(i, j, k)); },
                      reference<2>({B, C}, [&](const auto& a) {
                        double s = 0;
                        for (index_t e = 0; e < A; ++e) s += Xv(e, a[0], a[1]);
                        return s;
                      }),
                      lt::tolerance<float>(A));
        check_default("o(i, k) = maximum(j, X(i, j, k))", o_ac, [&](const auto& o) { return o(i, k) = maximum(j, Xv(i, j, k)); },
                      reference<2>({A, C}, [&](const auto& a) {
                        double s = -INFINITY;
                        for (index_t e = 0; e < B; ++e) s = std::max<double>(s, Xv(a[0], e, a[1]));
                        return s;
                      }),
                      0.0);
        check_default("o(i, j) = sum(k, X(i, j, k)) * 0.5", o_ab, [&](const auto& o) { return o(i, j) = sum(k, Xs(i, j, k)) * 0.5f; },
                      reference<2>({A, B}, [&](const auto& a) {
                        double s = 0;
                        for (index_t e = 0; e < C; ++e) s += Xs(a[0], a[1], e);
                        return 0.5 * s;
                      }),
                      lt::tolerance<float>(C));
        check_default("o(i) = sum(j, k, X(i, j, k))", o_a, [&](const auto& o) { return o(i) = sum(j, k, Xv(i, j, k)); },
                      reference<1>({A}, [&](const auto& a) {
                        double s = 0;
                        for (index_t e = 0; e < B; ++e)
                          for (index_t f = 0; f < C; ++f) s += Xv(a[0], e, f);
                        return s;
                      }),
                      lt::tolerance<float>(B * C));
        // Elementwise with broadcasts along the first and last variable.
        auto w = lt::random_buffer<float, 1>({C}, lt::layout::row_major, "w", g);
        auto z0 = lt::random_buffer<float, 1>({A}, lt::layout::row_major, "z0", g);
        auto o3 = lt::make_buffer<float, 3>({A, B, C}, lt::layout::row_major, "o3");
        check_default("o(i, j, k) = X(i, j, k) * w(k) + z0(i)", o3,
                      [&](const auto& o) { return o(i, j, k) = Xv(i, j, k) * w.view(k) + z0.view(i); },
                      reference<3>({A, B, C}, [&](const auto& a) { return double(Xv(a[0], a[1], a[2])) * w.view(a[2]) + z0.view(a[0]); }),
                      1e-6);
      }
    }
  }
}

TEST_CASE("default schedule: contractions, batched matmul and convolutions", "[default_schedule]") {
  auto g = lt::make_rng("default contractions");
  // Batched matmul C(n, i, j) [+]= sum(k, A(n, i, k) * B(n, k, j)), and a batched mat-vec.
  for (index_t Bt : {index_t{1}, index_t{3}}) {
    for (index_t M : {index_t{1}, index_t{7}, index_t{13}}) {
      for (index_t N : {index_t{1}, index_t{17}, index_t{65}}) {
        for (index_t K : {index_t{1}, index_t{5}, index_t{33}}) {
          auto Ab = lt::random_buffer<float, 3>({Bt, M, K}, lt::pick_layout(g), "A", g);
          auto Bb = lt::random_buffer<float, 3>({Bt, K, N}, lt::pick_row_layout(g), "B", g);
          auto Arb = lt::random_buffer<float, 3>({Bt, M, K}, lt::pick_row_layout(g), "Ar", g);
          struct rows3 {
            decltype(Bb.rows()) view;
          };
          const rows3 A{Arb.rows()}, B{Bb.rows()};
          auto C = lt::make_buffer<float, 3>({Bt, M, N}, lt::layout::row_major, "C");
          const auto ref = reference<3>({Bt, M, N}, [&](const auto& a) {
            double s = 0;
            for (index_t e = 0; e < K; ++e) s += double(A.view(a[0], a[1], e)) * B.view(a[0], e, a[2]);
            return s;
          });
          check_default("C(n, i, j) = sum(k, A(n, i, k) * B(n, k, j))", C,
                        [&](const auto& o) { return o(n, i, j) = sum(k, A.view(n, i, k) * B.view(n, k, j)); }, ref, lt::tolerance<float>(K));
          std::vector<double> init(ref.size(), 1.5), ref2 = ref;
          for (double& e : ref2) e += 1.5;
          check_default("C(n, i, j) += sum(k, A(n, i, k) * B(n, k, j))", C,
                        [&](const auto& o) { return o(n, i, j) += sum(k, A.view(n, i, k) * B.view(n, k, j)); }, ref2, lt::tolerance<float>(K), init);
          auto x = lt::random_buffer<float, 2>({Bt, K}, lt::layout::row_major, "x", g);
          auto y = lt::make_buffer<float, 2>({Bt, M}, lt::layout::row_major, "y");
          check_default("y(n, i) = sum(k, A(n, i, k) * x(n, k)), A of any layout", y,
                        [&](const auto& o) { return o(n, i) = sum(k, Ab.view(n, i, k) * x.view(n, k)); },
                        reference<2>({Bt, M}, [&](const auto& a) {
                          double s = 0;
                          for (index_t e = 0; e < K; ++e) s += double(Ab.view(a[0], a[1], e)) * x.view(a[0], e);
                          return s;
                        }),
                        lt::tolerance<float>(K));
        }
      }
    }
  }
  // NHWC convolutions: full (reductions over ry, rx and the input channel) and depthwise.
  for (index_t Nb : {index_t{1}, index_t{2}}) {
    for (index_t H : {index_t{1}, index_t{5}, index_t{9}}) {
      for (index_t Ci : {index_t{1}, index_t{3}, index_t{16}}) {
        for (index_t Co : {index_t{1}, index_t{5}, index_t{17}}) {
          const index_t R = 3, Wd = H + 2;
          loom::Tensor<float, 4> in("in", Nb, H + R - 1, Wd + R - 1, Ci), w("w", R, R, Ci, Co);
          loom::Tensor<float, 3> dw("dw", R, R, Ci);
          lt::fill_random(in.view(), g);
          lt::fill_random(w.view(), g);
          lt::fill_random(dw.view(), g);
          auto out = lt::make_buffer<float, 4>({Nb, H, Wd, Co}, lt::layout::row_major, "out");
          check_default("out(n, y, x, c) = sum(ry, rx, rc, in(n, y + ry, x + rx, rc) * w(ry, rx, rc, c))", out,
                        [&](const auto& o) { return o(n, y, x, c) = sum(ry, rx, rc, in(n, y + ry, x + rx, rc) * w(ry, rx, rc, c)); },
                        reference<4>({Nb, H, Wd, Co}, [&](const auto& a) {
                          double s = 0;
                          for (index_t e = 0; e < R; ++e)
                            for (index_t f = 0; f < R; ++f)
                              for (index_t h = 0; h < Ci; ++h)
                                s += double(in.view()(a[0], a[1] + e, a[2] + f, h)) * w.view()(e, f, h, a[3]);
                          return s;
                        }),
                        lt::tolerance<float>(R * R * Ci));
          auto dout = lt::make_buffer<float, 4>({Nb, H, Wd, Ci}, lt::layout::row_major, "dout");
          check_default("out(n, y, x, c) = sum(ry, rx, in(n, y + ry, x + rx, c) * dw(ry, rx, c))", dout,
                        [&](const auto& o) { return o(n, y, x, c) = sum(ry, rx, in(n, y + ry, x + rx, c) * dw(ry, rx, c)); },
                        reference<4>({Nb, H, Wd, Ci}, [&](const auto& a) {
                          double s = 0;
                          for (index_t e = 0; e < R; ++e)
                            for (index_t f = 0; f < R; ++f) s += double(in.view()(a[0], a[1] + e, a[2] + f, a[3])) * dw.view()(e, f, a[3]);
                          return s;
                        }),
                        lt::tolerance<float>(R * R));
        }
      }
    }
  }
}

TEST_CASE("default schedule: ranks 4 and 5", "[default_schedule]") {
  auto g = lt::make_rng("default rank 5");
  for (int rep = 0; rep < 6; ++rep) {
    const index_t A = lt::pick_size(g, 4), B = lt::pick_size(g, 5), C = lt::pick_size(g, 3), D = lt::pick_size(g, 6),
                  E = lt::pick_size(g, 19);
    auto X = lt::random_buffer<float, 5>({A, B, C, D, E}, lt::pick_row_layout(g), "X", g);
    const auto Xv = X.rows();
    INFO(X.describe());
    auto o5 = lt::make_buffer<float, 5>({A, B, C, D, E}, lt::layout::row_major, "o5");
    check_default("o(i, j, k, l, m) = X(i, j, k, l, m) * 2 - 1", o5,
                  [&](const auto& o) { return o(i, j, k, l, m) = Xv(i, j, k, l, m) * 2.f - 1.f; },
                  reference<5>({A, B, C, D, E}, [&](const auto& a) { return 2.0 * Xv(a[0], a[1], a[2], a[3], a[4]) - 1.0; }), 1e-6);
    auto o_last = lt::make_buffer<float, 4>({A, B, C, D}, lt::layout::row_major, "o_last");
    check_default("o(i, j, k, l) = maximum(m, X(i, j, k, l, m))", o_last,
                  [&](const auto& o) { return o(i, j, k, l) = maximum(m, Xv(i, j, k, l, m)); },
                  reference<4>({A, B, C, D}, [&](const auto& a) {
                    double s = -INFINITY;
                    for (index_t e = 0; e < E; ++e) s = std::max<double>(s, Xv(a[0], a[1], a[2], a[3], e));
                    return s;
                  }),
                  0.0);
    auto o_first = lt::make_buffer<float, 4>({B, C, D, E}, lt::layout::row_major, "o_first");
    check_default("o(j, k, l, m) = sum(i, X(i, j, k, l, m))", o_first,
                  [&](const auto& o) { return o(j, k, l, m) = sum(i, Xv(i, j, k, l, m)); },
                  reference<4>({B, C, D, E}, [&](const auto& a) {
                    double s = 0;
                    for (index_t e = 0; e < A; ++e) s += Xv(e, a[0], a[1], a[2], a[3]);
                    return s;
                  }),
                  lt::tolerance<float>(A));
    auto o_mid = lt::make_buffer<float, 3>({A, C, E}, lt::layout::row_major, "o_mid");
    check_default("o(i, k, m) = sum(j, l, X(i, j, k, l, m))", o_mid,
                  [&](const auto& o) { return o(i, k, m) = sum(j, l, Xv(i, j, k, l, m)); },
                  reference<3>({A, C, E}, [&](const auto& a) {
                    double s = 0;
                    for (index_t e = 0; e < B; ++e)
                      for (index_t f = 0; f < D; ++f) s += Xv(a[0], e, a[1], f, a[2]);
                    return s;
                  }),
                  lt::tolerance<float>(B * D));
    // A variable of one's own (q), a permuted rank-4 input and `+=`.
    auto Yb = lt::random_buffer<float, 4>({D, C, B, A}, lt::layout::row_major, "Y", g);
    struct rows4 {
      decltype(Yb.rows()) view;
    };
    const rows4 Y{Yb.rows()};
    auto o4 = lt::make_buffer<float, 4>({A, B, C, D}, lt::layout::row_major, "o4");
    std::vector<double> init(std::size_t(A * B * C * D), -0.5);
    check_default("o(i, j, k, q) += Y(q, k, j, i) * X(i, j, k, q, 0)", o4,
                  [&](const auto& o) { return o(i, j, k, q) += Y.view(q, k, j, i) * Xv(i, j, k, q, 0); },
                  reference<4>({A, B, C, D}, [&](const auto& a) {
                    return -0.5 + double(Y.view(a[3], a[2], a[1], a[0])) * Xv(a[0], a[1], a[2], a[3], 0);
                  }),
                  1e-6, init);
  }
}

namespace {
/// The variables the printed nest vectorizes: the root of each "vectorized for <loop> in" line.
std::vector<std::string> lane_roots(const std::string& nest) {
  std::vector<std::string> roots;
  const std::string key = "vectorized for ";
  for (std::size_t at = nest.find(key); at != std::string::npos; at = nest.find(key, at + 1)) {
    const std::size_t from = at + key.size();
    const std::string loop = nest.substr(from, nest.find(' ', from) - from);
    const std::string root = loop.substr(0, loop.find('.'));
    if (std::find(roots.begin(), roots.end(), root) == roots.end()) roots.push_back(root);
  }
  return roots;
}
void expect_lanes(const std::string& what, const std::string& nest, std::vector<std::string> expected) {
  INFO(what << "\nprint_loop_nest:\n" << nest);
  std::vector<std::string> got = lane_roots(nest);
  std::sort(got.begin(), got.end());
  std::sort(expected.begin(), expected.end());
  CHECK(got == expected);
}
}  // namespace

TEST_CASE("default schedule: the vectorized variable follows the unit-stride traffic", "[default_schedule]") {
  loom::Tensor<float, 2> X("X", 64, 48), Y("Y", 48, 64);
  loom::Tensor<float, 1> s("s", 64), v("v", 64), cs("cs", 48);
  const auto Xc = loom::view(X.data(), loom::shape(48, 64), loom::strides(1, 48), "Xc");  // column-major
  const auto Xt = X.view().transposed();                                                 // 48 x 64, column-major
  loom::Tensor<float, 3> A("A", 2, 5, 7), B("B", 2, 7, 9), C("C", 2, 5, 9), X3("X3", 4, 5, 6);
  loom::Tensor<float, 2> O2("O2", 4, 5), O2b("O2b", 5, 6);
  loom::Tensor<float, 0> s0("s0");
  // Row-major (layout_right): chosen at compile time, one lane variable.
  expect_lanes("s(i) = sum(j, exp(X(i, j) - v(i)))", loom::print_loop_nest(s(i) = sum(j, loom::exp(X(i, j) - v(i)))), {"j"});
  expect_lanes("s(i) = sum(j, X(i, j) * v(i))", loom::print_loop_nest(s(i) = sum(j, X(i, j) * v(i))), {"j"});
  expect_lanes("s(i) = maximum(j, max(X(i, j), v(i)))", loom::print_loop_nest(s(i) = maximum(j, loom::max(X(i, j), v(i)))), {"j"});
  expect_lanes("cs(j) = sum(i, X(i, j))", loom::print_loop_nest(cs(j) = sum(i, X(i, j))), {"j"});
  expect_lanes("cs(j) = sum(i, X(i, j) * v(i))", loom::print_loop_nest(cs(j) = sum(i, X(i, j) * v(i))), {"j"});
  expect_lanes("Y(i, j) = X(j, i) * 2", loom::print_loop_nest(Y(i, j) = X(j, i) * 2.f), {"j"});
  // (A plain transpose is the permutation engine's: no lanes to choose, blocks transposed in registers.)
  CHECK(loom::print_loop_nest(Y(i, j) = X(j, i)).find("permutation engine") == 0);
  expect_lanes("C(n, i, j) = sum(k, A(n, i, k) * B(n, k, j))", loom::print_loop_nest(C(n, i, j) = sum(k, A(n, i, k) * B(n, k, j))), {"j"});
  expect_lanes("O2(i, j) = sum(k, X3(i, j, k))", loom::print_loop_nest(O2(i, j) = sum(k, X3(i, j, k))), {"k"});
  expect_lanes("O2b(j, k) = sum(i, X3(i, j, k))", loom::print_loop_nest(O2b(j, k) = sum(i, X3(i, j, k))), {"k"});
  expect_lanes("s0() = sum(i, v(i))", loom::print_loop_nest(s0() = sum(i, v(i))), {"i"});
  // Column-major and transposed inputs: the unit-stride choice of each layout, chosen per run.
  loom::Tensor<float, 1> s48("s48", 48), c64("c64", 64);
  const std::string rs_c = loom::print_loop_nest(s48(i) = sum(j, loom::exp(Xc(i, j) - v(j))));
  expect_lanes("s48(i) = sum(j, exp(Xc(i, j) - v(j))), Xc column-major", rs_c, {"i", "j"});
  CHECK(rs_c.find("if lanes along j meet as many unit-stride bytes as along i or more:\n") == 0);
  expect_lanes("c64(j) = sum(i, Xt(i, j))", loom::print_loop_nest(c64(j) = sum(i, Xt(i, j))), {"i", "j"});
  // Which nest a run takes: lanes along i for the column-major view, along j for a row-major one.
  using D = decltype(s48(i) = sum(j, Xc(i, j)));
  using S = loom::default_schedule_t<D>;
  static_assert(loom::is_specialize<S>);
  const auto Xr = loom::view(Y.data(), loom::shape(48, 64), loom::strides(64, 1), "Xr");  // row-major, run-time strides
  CHECK(!loom::detail::holds(typename S::condition{}, s48(i) = sum(j, Xc(i, j))));
  CHECK(loom::detail::holds(typename S::condition{}, s48(i) = sum(j, Xr(i, j))));
}
