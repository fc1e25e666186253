// tests/test_prefetch_stores.cpp — prefetch_stores<C>: a stage computed at a loop of C asks, at
// each point it computes, for the line C stores at that point. A prefetch changes no result, so
// the cases check that the pipelines that ask compute what plain loops compute (softmax rows and
// strips with tails, every output layout, an output that overlaps its input, an integer output
// of a float stage, three dimensions, threads), that the hint addresses the consumer's element at
// each point (its base and strides, origins included), and what print_loop_nest says.
#include <cmath>

#include "support.hpp"

using loom::index_t;
using namespace loom::vars;

namespace {

using lt::idx_t;

constexpr loom::Func<float, 1, "m"> ps_m;
constexpr loom::Func<float, 2, "e"> ps_e;
constexpr loom::Func<float, 1, "s"> ps_s;
constexpr loom::Func<float, 3, "f"> ps_f;

std::vector<idx_t<2>> shapes(lt::rng_t& g) {
  std::vector<idx_t<2>> s = {{1, 1}, {1, 17}, {3, 1}, {5, 16}, {9, 33}, {13, 100}, {2, 257}};
  for (int q = 0; q < 3; ++q) s.push_back({lt::pick_size(g, 40), lt::pick_size(g, 300)});
  return s;
}

/// Row-wise softmax of X in double.
template <class B>
std::vector<double> softmax_ref(const B& X) {
  const auto ext = lt::extents_of(X.view);
  std::vector<double> out(std::size_t(ext[0] * ext[1]));
  for (index_t a = 0; a < ext[0]; ++a) {
    double mx = -1e300, s = 0;
    for (index_t b = 0; b < ext[1]; ++b) mx = std::max(mx, double(X.view(a, b)));
    for (index_t b = 0; b < ext[1]; ++b) s += std::exp(double(X.view(a, b)) - mx);
    for (index_t b = 0; b < ext[1]; ++b) out[std::size_t(a * ext[1] + b)] = std::exp(double(X.view(a, b)) - mx) / s;
  }
  return out;
}

/// The softmax pipeline under schedules that ask for the output's lines: per row, strips of 3 and 8
/// rows (tails), masked tails with rows in parallel, and the same without prefetch_stores.
template <class Check>
void each_softmax_schedule(Check&& check) {
  using namespace loom;
  check("rows", [](auto& p) {
    run<stage<ps_m, compute_at<output, i>>, stage<ps_e, compute_at<output, i>, vectorize<j>, prefetch_stores<output>>,
        stage<ps_s, compute_at<output, i>>, stage<output, vectorize<j>>>(p);
  });
  check("strips of 3, parallel", [](auto& p) {
    run<stage<ps_m, compute_at<output, outer<i>>, vectorize<k>>,
        stage<ps_e, compute_at<output, outer<i>>, vectorize<j>, prefetch<i, 3, 0>, prefetch_stores<output>>,
        stage<ps_s, compute_at<output, outer<i>>, vectorize<k>>, stage<output, split<i, 3>, parallel<outer<i>>, vectorize<j>>>(p);
  });
  check("strips of 8, masked", [](auto& p) {
    run<stage<ps_m, compute_at<output, outer<i>>>, stage<ps_e, compute_at<output, outer<i>>, vectorize<j, 0, tail::masked>, prefetch_stores<output>>,
        stage<ps_s, compute_at<output, outer<i>>>, stage<output, split<i, 8>, parallel<outer<i>>, vectorize<j, 0, tail::masked>>>(p);
  });
  check("scalar stage, default output", [](auto& p) {
    run<stage<ps_m, compute_at<output, i>>, stage<ps_e, compute_at<output, i>, prefetch_stores<output>>, stage<ps_s, compute_at<output, i>>>(p);
  });
  check("without prefetch_stores", [](auto& p) {
    run<stage<ps_m, compute_at<output, i>>, stage<ps_e, compute_at<output, i>, vectorize<j>>, stage<ps_s, compute_at<output, i>>,
        stage<output, vectorize<j>>>(p);
  });
}

/// The softmax of `in` into `out` (one buffer, for in place) under runner, against ref.
template <class Runner>
void check_softmax(Runner&& runner, const lt::buffer<float, 2>& in, const lt::buffer<float, 2>& out, const std::vector<double>& ref) {
  auto p = loom::pipeline(ps_m(i) = maximum(k, in.view(i, k)), ps_e(i, j) = exp(in.view(i, j) - ps_m(i)),
                          ps_s(i) = sum(k, ps_e(i, k)), out.view(i, j) = ps_e(i, j) / ps_s(i));
  runner(p);
  const auto r = lt::compare(out.view, ref, 2e-6, 1e-30);
  INFO(r.message);
  CHECK(r.ok);
  CHECK(out.untouched().ok);
}

TEST_CASE("prefetch_stores: softmax rows and strips against a plain loop, every output layout", "[prefetch_stores]") {
  auto g = lt::make_rng("prefetch_stores softmax");
  for (const auto& ext : shapes(g)) {
    auto X = lt::random_buffer<float, 2>(ext, lt::pick_layout(g), "X", g, -3, 3);
    auto Y = lt::make_buffer<float, 2>(ext, lt::pick_layout(g), "Y");
    const auto ref = softmax_ref(X);
    INFO(X.describe() << "; " << Y.describe());
    each_softmax_schedule([&](const char* name, auto runner) {
      INFO("schedule: " << name);
      lt::fill(Y.view, lt::sentinel<float>());
      check_softmax(runner, X, Y, ref);
    });
  }
}

TEST_CASE("prefetch_stores: an output that is its own input (computed through a temporary)", "[prefetch_stores]") {
  auto g = lt::make_rng("prefetch_stores in place");
  for (const auto& ext : shapes(g)) {
    auto X = lt::random_buffer<float, 2>(ext, lt::pick_layout(g), "X", g, -3, 3);
    const auto ref = softmax_ref(X);
    INFO(X.describe());
    each_softmax_schedule([&](const char* name, auto runner) {
      INFO("schedule: " << name);
      auto Xc = lt::make_buffer<float, 2>(ext, X.kind, "Xc");
      lt::for_each_index(ext, [&](const auto& p) { lt::at(Xc.view, p) = lt::at(X.view, p); });
      check_softmax(runner, Xc, Xc, ref);
    });
  }
}

TEST_CASE("prefetch_stores: an int32 output of a float stage, and three dimensions", "[prefetch_stores]") {
  using namespace loom;
  auto g = lt::make_rng("prefetch_stores types and rank 3");
  for (const auto& ext : shapes(g)) {
    auto X = lt::random_buffer<float, 2>(ext, lt::pick_layout(g), "X", g, -1000, 1000);
    auto Z = lt::make_buffer<std::int32_t, 2>(ext, lt::pick_layout(g), "Z");
    constexpr Func<float, 2, "t"> t;
    INFO(X.describe() << "; " << Z.describe());
    lt::fill(Z.view, lt::sentinel<std::int32_t>());
    run<stage<t, compute_at<output, i>, vectorize<j>, prefetch_stores<output>>, stage<output, parallel<i>, vectorize<j>>>(
        pipeline(t(i, j) = X.view(i, j) * 2.f + 0.25f, Z.view(i, j) = cast<std::int32_t>(t(i, j)) - 7));
    const auto r = lt::compare(Z.view, [&](const idx_t<2>& p) { return double(std::int32_t(X.view(p[0], p[1]) * 2.f + 0.25f) - 7); }, 0);
    INFO(r.message);
    CHECK(r.ok);
    CHECK(Z.untouched().ok);
  }
  for (int q = 0; q < 6; ++q) {
    const idx_t<3> ext{lt::pick_size(g, 5), lt::pick_size(g, 9), lt::pick_size(g, 70)};
    auto A = lt::random_buffer<float, 3>(ext, lt::pick_layout(g), "A", g, -1, 1);
    auto B = lt::make_buffer<float, 3>(ext, lt::pick_layout(g), "B");
    INFO(A.describe() << "; " << B.describe());
    lt::fill(B.view, lt::sentinel<float>());
    // f computed per (n, i) row of the output: its box is one row.
    run<stage<ps_f, compute_at<output, i>, vectorize<j>, prefetch_stores<output>>, stage<output, vectorize<j>>>(
        pipeline(ps_f(n, i, j) = A.view(n, i, j) * A.view(n, i, j), B.view(n, i, j) = sqrt(ps_f(n, i, j) + 1.f)));
    const auto r = lt::compare(B.view, [&](const idx_t<3>& p) {
      const double a = A.view(p[0], p[1], p[2]);
      return std::sqrt(double(float(a * a)) + 1.0);
    }, 1e-6);
    INFO(r.message);
    CHECK(r.ok);
    CHECK(B.untouched().ok);
  }
}

TEST_CASE("prefetch_stores: the hint addresses the consumer's element at each point", "[prefetch_stores]") {
  auto g = lt::make_rng("prefetch_stores hint");
  using EV = typename decltype(ps_e)::view_type;
  std::vector<float> scratch(4);
  const EV ev(typename EV::base_view(scratch.data(), loom::dims<2>(loom::shape_t<2>{2, 2}), "e"), {0, 0});
  const auto e_at = ev(i, j);
  for (int q = 0; q < 8; ++q) {
    const idx_t<2> ext{lt::pick_size(g, 12), lt::pick_size(g, 40)};
    for (const auto l : lt::all_layouts()) {
      auto Y = lt::make_buffer<float, 2>(ext, l, "Y");
      INFO(Y.describe());
      // The consumer's output seen over its whole index space, and over a box of it with an origin.
      auto hint = loom::lower::make_store_hint(e_at, Y.view);
      hint.bind();
      CHECK(hint.base == reinterpret_cast<unsigned char*>(&Y.view(0, 0)));
      CHECK(hint.template stride_of<loom::var<'i'>>() == Y.view.stride(0) * index_t(sizeof(float)));
      CHECK(hint.template stride_of<loom::var<'j'>>() == Y.view.stride(1) * index_t(sizeof(float)));
      const loom::shape_t<2> origin{3, 5};
      const loom::region_view<float, 2, loom::layout_stride> region(Y.view, origin);
      auto boxed = loom::lower::make_store_hint(e_at, region);
      boxed.bind();
      const auto i_bytes = boxed.template stride_of<loom::var<'i'>>(), j_bytes = boxed.template stride_of<loom::var<'j'>>();
      CHECK(boxed.base + (origin[0] + ext[0] - 1) * i_bytes + (origin[1] + ext[1] - 1) * j_bytes ==
            reinterpret_cast<unsigned char*>(&Y.view(ext[0] - 1, ext[1] - 1)));
    }
  }
}

TEST_CASE("prefetch_stores: print_loop_nest says which stage asks", "[prefetch_stores]") {
  using namespace loom;
  Tensor<float, 2> X("X", 5, 37), Y("Y", 5, 37);
  auto p = pipeline(ps_m(i) = maximum(k, X(i, k)), ps_e(i, j) = exp(X(i, j) - ps_m(i)), ps_s(i) = sum(k, ps_e(i, k)),
                    Y(i, j) = ps_e(i, j) / ps_s(i));
  const std::string text = print_loop_nest<stage<ps_m, compute_at<output, i>>, stage<ps_e, compute_at<output, i>, prefetch_stores<output>>,
                                           stage<ps_s, compute_at<output, i>>, stage<output, vectorize<j>>>(p);
  INFO(text);
  const auto at_e = text.find("// e: computed here");
  const auto asks = text.find("// prefetch_stores: each point also asks for the line its consumer stores");
  REQUIRE(at_e != std::string::npos);
  REQUIRE(asks != std::string::npos);
  CHECK(asks > at_e);
  CHECK(asks < text.find("// s: computed here"));
  CHECK(text.find("prefetch_stores", text.find('\n', asks)) == std::string::npos);  // no other stage asks
}

}  // namespace
