// tests/test_pipeline_share.cpp — an inlined stage read several times at the reader's own point is
// computed once per point (pipeline/share.hpp): results against plain loops under inlined,
// default, vectorized (masked and shifted tails), unrolled, parallel and tiled schedules, stages
// shared between definitions that are themselves inlined, shared reads inside a reduction, next
// to a stencil read of the same stage, in a hoisted softmax; and the printed nest binds each
// shared stage once.
#include "support.hpp"

#include <loom/pipeline/run.hpp>

#include <cmath>
#include <string>

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
using loom::unroll;
using loom::vectorize;

constexpr loom::Func<float, 2, "ga"> ga;  // ga = in * 2 + in(x + 1)
constexpr loom::Func<float, 2, "gb"> gb;  // gb = ga * ga (ga read twice at the point)
constexpr loom::Func<float, 2, "gc"> gc;  // gc = gb + gb(y + 1) - ga (a stencil of gb, ga again)
constexpr loom::Func<float, 2, "gd"> gd;  // gd = gc * gc - gc
constexpr loom::Func<float, 2, "ge"> ge;  // ge = gc + 1 (gc shared between gd and ge)

using T2 = loom::Tensor<float, 2>;

template <class... S, class P>
void check(P& p, const T2& out, const std::vector<double>& ref, const char* what, double rtol = 1e-5) {
  auto& o = const_cast<T2&>(out);
  std::fill(o.begin(), o.end(), -7.f);
  loom::run<S...>(p);
  INFO(what);
  const auto r = lt::compare(out.view(), ref, rtol);
  CHECK(r.ok);
  if (!r.ok) UNSCOPED_INFO(r.message);
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("share: stages read at the reader's point are computed once, under every schedule", "[pipeline][share]") {
  auto g = lt::make_rng("pipeline share");
  for (int round = 0; round < 7; ++round) {
    const index_t H = round == 0 ? 1 : lt::pick_size(g, 40), W = round == 1 ? 1 : round == 2 ? 17 : lt::pick_size(g, 70);
    INFO("H = " << H << ", W = " << W);
    T2 in(H + 1, W + 1), out(H, W);
    lt::fill_random(in.view(), g, -1, 1);
    auto ar = [&](index_t a, index_t b) { return double(in(a, b)) * 2 + in(a, b + 1); };
    auto br = [&](index_t a, index_t b) { return ar(a, b) * ar(a, b); };
    auto cr = [&](index_t a, index_t b) { return br(a, b) + br(a + 1, b) - ar(a, b); };
    std::vector<double> ref(std::size_t(H * W));
    for (index_t a = 0; a < H; ++a)
      for (index_t b = 0; b < W; ++b) {
        const double c = cr(a, b), d = c * c - c, e = c + 1;
        ref[std::size_t(a * W + b)] = d * e + d - e * e;
      }
    auto p = loom::pipeline(ga(y, x) = in(y, x) * 2.f + in(y, x + 1),  //
                            gb(y, x) = ga(y, x) * ga(y, x),            //
                            gc(y, x) = gb(y, x) + gb(y + 1, x) - ga(y, x),
                            gd(y, x) = gc(y, x) * gc(y, x) - gc(y, x),  //
                            ge(y, x) = gc(y, x) + 1.f,                  //
                            out(y, x) = gd(y, x) * ge(y, x) + gd(y, x) - ge(y, x) * ge(y, x));
    using all_inline = loom::meta::list<stage<ga, compute_inline>, stage<gb, compute_inline>, stage<gc, compute_inline>,
                                        stage<gd, compute_inline>, stage<ge, compute_inline>>;
    auto inl = [&]<class... O>(const char* what) {
      [&]<class... I>(loom::meta::list<I...>*) { check<I..., O...>(p, out, ref, what); }(static_cast<all_inline*>(nullptr));
    };
    check(p, out, ref, "default placements");
    inl.template operator()<>("all inlined, default loops");
    inl.template operator()<stage<output, loom::schedule<>>>("all inlined, scalar");
    inl.template operator()<stage<output, vectorize<x>>>("all inlined, vectorized");
    inl.template operator()<stage<output, vectorize<x, 8, loom::tail::masked>>>("all inlined, masked tail");
    inl.template operator()<stage<output, vectorize<x, 8, loom::tail::shift_inwards>>>("all inlined, shifted tail");
    inl.template operator()<stage<output, split<y, 4>, unroll<inner<y>>, vectorize<x>>>("all inlined, 4 rows unrolled");
    inl.template operator()<stage<output, tile<y, x, 3, 16>, parallel<outer<y>>, vectorize<inner<x>>>>("all inlined, tiles");
    check<stage<gb, compute_root>, stage<gd, compute_inline>, stage<ge, compute_inline>, stage<output, parallel<y>, vectorize<x>>>(
        p, out, ref, "gb root (ga shared inside it), gc inlined into gd and ge");
    check<stage<gb, compute_at<output, outer<y>>, vectorize<x>>, stage<gc, compute_at<output, outer<y>>>,
          stage<output, split<y, 5>, parallel<outer<y>>, vectorize<x>>>(p, out, ref, "gb and gc per strip, gd and ge shared in out");
  }
}

TEST_CASE("share: the printed nest binds each shared stage once", "[pipeline][share]") {
  T2 in(9, 12), out(8, 11);
  auto p = loom::pipeline(ga(y, x) = in(y, x) * 2.f + in(y, x + 1),  //
                          gb(y, x) = ga(y, x) * ga(y, x),            //
                          gc(y, x) = gb(y, x) + gb(y + 1, x) - ga(y, x),
                          gd(y, x) = gc(y, x) * gc(y, x) - gc(y, x),  //
                          ge(y, x) = gc(y, x) + 1.f,                  //
                          out(y, x) = gd(y, x) * ge(y, x) + gd(y, x) - ge(y, x) * ge(y, x));
  const std::string nest = loom::print_loop_nest<stage<gb, compute_root>, stage<ga, compute_inline>, stage<gc, compute_inline>,
                                                 stage<gd, compute_inline>, stage<ge, compute_inline>>(p);
  INFO(nest);
  CHECK(count(nest, "let gc = ") == 1);  // read by gd (three times) and ge: one value
  CHECK(count(nest, "let gd = ") == 1);
  CHECK(count(nest, "let ge = ") == 1);
  CHECK(count(nest, "let ga = ") == 2);  // inside gb's root nest, and in out (gc reads it at the point)
}

TEST_CASE("share: shared reads inside a reduction, a hoisted softmax", "[pipeline][share]") {
  auto g = lt::make_rng("pipeline share reductions");
  constexpr loom::Func<float, 2, "sq"> sq;  // sq(i, k): a stage whose own variables a reduction walks
  constexpr loom::Func<float, 2, "ex"> ex;
  for (int round = 0; round < 6; ++round) {
    const index_t M = round == 0 ? 1 : lt::pick_size(g, 30), N = round == 1 ? 1 : lt::pick_size(g, 80);
    INFO("M = " << M << ", N = " << N);
    T2 X(M, N), out(M, N);
    lt::fill_random(X.view(), g, -2, 2);
    // out(i, j) = X(i, j) / (1 + sum(k, sq(i, k) * sq(i, k))), sq(i, k) = X(i, k) + 0.5: sq is read at
    // its own variables inside the reduction: shared there, at each of the reduction's points.
    std::vector<double> ref(std::size_t(M * N)), soft(ref.size());
    for (index_t a = 0; a < M; ++a) {
      double s = 1, mx = -1e300, z = 0;
      for (index_t b = 0; b < N; ++b) s += (X(a, b) + 0.5) * (X(a, b) + 0.5);
      for (index_t b = 0; b < N; ++b) mx = std::max(mx, double(X(a, b)));
      for (index_t b = 0; b < N; ++b) z += std::exp(X(a, b) - mx);
      for (index_t b = 0; b < N; ++b) {
        ref[std::size_t(a * N + b)] = X(a, b) / s;
        soft[std::size_t(a * N + b)] = std::exp(X(a, b) - mx) / z * (1 + std::exp(X(a, b) - mx) / z);
      }
    }
    auto p = loom::pipeline(sq(i, k) = X(i, k) + 0.5f, out(i, j) = X(i, j) / (1.f + sum(k, sq(i, k) * sq(i, k))));
    check(p, out, ref, "sq shared inside the reduction (hoisted)", 1e-4);
    check<stage<output, parallel<i>, vectorize<j>>>(p, out, ref, "vectorized rows", 1e-4);
    // ex is read twice at the point, the reductions over it are hoisted out of out's loops
    auto q = loom::pipeline(ex(i, j) = exp(X(i, j) - maximum(k, X(i, k))),
                            out(i, j) = ex(i, j) / sum(k, ex(i, k)) * (1.f + ex(i, j) / sum(k, ex(i, k))));
    check(q, out, soft, "softmax with ex shared", 1e-4);
    check<stage<output, parallel<i>, vectorize<j>>>(q, out, soft, "softmax, vectorized rows", 1e-4);
  }
}

}  // namespace
